package store

import "testing"

// The repair reads a project's alerts only when its due set is smaller than its active alerts.
func TestDueMayBeMissing(t *testing.T) {
	for _, tc := range []struct {
		entries, active int64
		want            bool
	}{
		{0, 0, false},
		{1_000_000, 1_000_000, false}, // every open alert waits for its repeat
		{5, 3, false},                 // entries of alerts that ended, not yet forgotten
		{0, 1, true},
		{999_999, 1_000_000, true}, // one lost, or one with nothing more to do: read them
	} {
		if got := dueMayBeMissing(tc.entries, tc.active); got != tc.want {
			t.Errorf("%d entries, %d active: %v, want %v", tc.entries, tc.active, got, tc.want)
		}
	}
}
