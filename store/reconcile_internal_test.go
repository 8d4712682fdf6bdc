package store

import (
	"testing"
	"time"
)

// The repair reads a project's alerts only when its due set is smaller than its active alerts
// that need an entry (all of them but those last found with nothing more to do).
func TestDueMayBeMissing(t *testing.T) {
	for _, tc := range []struct {
		entries, active, settled int64
		want                     bool
	}{
		{0, 0, 0, false},
		{1_000_000, 1_000_000, 0, false}, // every open alert waits for its repeat
		{5, 3, 0, false},                 // entries of alerts that ended, not yet forgotten
		{0, 1, 0, true},
		{999_999, 1_000_000, 0, true},        // one lost, or one with nothing more to do: read them
		{999_999, 1_000_000, 1, false},       // the one the last read found with nothing more to do
		{999_998, 1_000_000, 1, true},        // and one lost since
		{500_000, 1_000_000, 500_000, false}, // half of them done with
		{0, 3, 3, false},
	} {
		if got := dueMayBeMissing(tc.entries, tc.active, tc.settled); got != tc.want {
			t.Errorf("%d entries, %d active, %d settled: %v, want %v", tc.entries, tc.active, tc.settled, got, tc.want)
		}
	}
}

// A count of settled alerts is trusted for settledFor after the read that found it, per
// project; none found forgets it.
func TestSettledMemo(t *testing.T) {
	var m settledMemo
	t0 := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	if got := m.get("p", t0); got != 0 {
		t.Fatalf("empty memo: %d", got)
	}
	m.set("p", 7, t0)
	for _, tc := range []struct {
		project string
		at      time.Time
		want    int64
	}{
		{"p", t0, 7},
		{"p", t0.Add(settledFor - time.Second), 7},
		{"q", t0, 0},                               // another project's
		{"p", t0.Add(-time.Second), 0},             // a clock that went back: read again
		{"p", t0.Add(settledFor), 0},               // too old: read again
		{"p", t0.Add(settledFor - time.Second), 0}, // and forgotten since
	} {
		if got := m.get(tc.project, tc.at); got != tc.want {
			t.Errorf("get(%s, t0%+v) = %d, want %d", tc.project, tc.at.Sub(t0), got, tc.want)
		}
	}
	m.set("p", 7, t0)
	m.set("p", 0, t0)
	if got := m.get("p", t0); got != 0 {
		t.Errorf("after a read finding none: %d", got)
	}
}
