package herald

import (
	"reflect"
	"testing"
)

func TestLabelsFingerprintIsAlertmanagers(t *testing.T) {
	// Values computed by Prometheus' model.LabelSet.Fingerprint for the same sets.
	for _, c := range []struct {
		labels Labels
		want   string
	}{
		{Labels{}, "cbf29ce484222325"},
		{Labels{"alertname": "X"}, fingerprintOf("alertname", "X")},
	} {
		if got := c.labels.Fingerprint(); got != c.want {
			t.Errorf("%v: fingerprint %s, want %s", c.labels, got, c.want)
		}
	}
	a := Labels{"a": "1", "b": "2"}
	b := Labels{"b": "2", "a": "1"}
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("the fingerprint depends on map order")
	}
	if (Labels{"a": "1b"}).Fingerprint() == (Labels{"a1": "b"}).Fingerprint() {
		t.Error("names and values run together")
	}
}

// fingerprintOf is FNV-1a 64 written out by hand over name 0xff value 0xff.
func fingerprintOf(parts ...string) string {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for _, c := range []byte(p) {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		out[i] = digits[h&0xf]
		h >>= 4
	}
	return string(out)
}

// A filter is one matcher in Alertmanager's syntax, read as Alertmanager's API reads it:
// quoted or bare values, a list or braces refused.
func TestParseLabelMatcher(t *testing.T) {
	eq := func(n, v string) LabelMatcher { return LabelMatcher{Name: n, Value: v, IsEqual: true} }
	for _, c := range []struct {
		in   string
		want LabelMatcher
		bad  bool
	}{
		{in: "alertname=X", want: eq("alertname", "X")},
		{in: `severity="critical"`, want: eq("severity", "critical")},
		{in: `job=~"api|db"`, want: LabelMatcher{Name: "job", Value: "api|db", IsRegex: true, IsEqual: true}},
		{in: `env!="dev"`, want: LabelMatcher{Name: "env", Value: "dev"}},
		{in: `team!~"ops.*"`, want: LabelMatcher{Name: "team", Value: "ops.*", IsRegex: true}},
		{in: `a="x,y\"z"`, want: eq("a", `x,y"z`)},
		{in: ` a = b `, want: eq("a", "b")},
		{in: `a=""`, want: eq("a", "")},
		{in: `"odd name"="v"`, want: eq("odd name", "v")},
		{in: "", bad: true},
		{in: "a", bad: true},
		{in: "=b", bad: true},
		{in: `a="b`, bad: true},
		{in: `a=~"("`, bad: true},
		{in: `{a="b"}`, bad: true},
		{in: `a="b",c="d"`, bad: true},
	} {
		got, err := ParseLabelMatcher(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: parsed as %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestLabelMatcherMatches(t *testing.T) {
	labels := Labels{"severity": "critical", "job": "api", "msg": "a\nb"}
	for _, c := range []struct {
		m    string
		want bool
	}{
		{`severity="critical"`, true},
		{`severity!="critical"`, false},
		{`severity="warning"`, false},
		{`job=~"api|db"`, true},
		{`job=~"ap"`, false}, // anchored
		{`job!~"db"`, true},
		{`team=""`, true}, // a missing label is empty
		{`team!=""`, false},
		{`msg=~"a.b"`, false}, // a dot matches no newline, as in Alertmanager
		{`msg=~"a\nb"`, true},
		{`msg=~"(?s)a.b"`, true},
	} {
		m, err := ParseLabelMatcher(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Matches(labels); got != c.want {
			t.Errorf("%s on %v: %v, want %v", c.m, labels, got, c.want)
		}
		if back, err := ParseLabelMatcher(m.String()); err != nil || back != m {
			t.Errorf("%s does not parse back from %s: %v %v", c.m, m.String(), back, err)
		}
	}
	all := []LabelMatcher{{Name: "severity", Value: "critical", IsEqual: true}, {Name: "job", Value: "api", IsEqual: true}}
	if !MatchAll(all, labels) || MatchAll(append(all, LabelMatcher{Name: "job", Value: "db", IsEqual: true}), labels) || !MatchAll(nil, labels) {
		t.Error("MatchAll")
	}
}
