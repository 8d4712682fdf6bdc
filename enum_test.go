package herald

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	valid := []string{"HOST_DOWN", "HOST_RECOVERING", "NO_PRIMARY", "BACKUP"}
	for _, c := range []struct{ value, want string }{
		{"HOST_DWN", "HOST_DOWN"},
		{"host_down", "HOST_DOWN"}, // case is ignored
		{"HOSTDOWN", "HOST_DOWN"},
		{"NO_PRIMRAY", "NO_PRIMARY"},
		{"BAKUP", "BACKUP"},
		{"DISK_FULL", ""}, // like none of them
		{"X", ""},
		{"", ""},
	} {
		if got := Nearest(c.value, valid); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.value, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"HOST_DWN", "HOST_DOWN", 1}, {"ab", "ba", 1}, {"HOTS", "HOST", 1}, {"ca", "abc", 3},
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// A few valid values are always listed; many only when the value is like none of them.
func TestEnumHint(t *testing.T) {
	few := []string{"GREATER_THAN", "LESS_THAN"}
	many := make([]string, enumListed+1)
	for i := range many {
		many[i] = string(rune('A'+i)) + "_TYPE_LONG_NAME"
	}
	for _, c := range []struct {
		value string
		valid []string
		want  string
	}{
		{"GRATER_THAN", few, " Did you mean GREATER_THAN? Valid values: GREATER_THAN, LESS_THAN."},
		{"ABOVE", few, " Valid values: GREATER_THAN, LESS_THAN."},
		{"A_TYPE_LONG_NAM", many, " Did you mean A_TYPE_LONG_NAME?"},
	} {
		if got := enumHint(c.value, c.valid); got != c.want {
			t.Errorf("enumHint(%q) = %q, want %q", c.value, got, c.want)
		}
	}
	if got := enumHint("ZZZ", many); got != " Valid values: "+strings.Join(many, ", ")+"." {
		t.Errorf("enumHint of a value like none of many: %q", got)
	}
}
