package main

import (
	"testing"
	"time"
)

// The machine's busy time is user, nice, system, irq and softirq of /proc/stat's first line:
// not idle, iowait or steal, nor the per-core lines after it.
func TestBusyOfStat(t *testing.T) {
	stat := "cpu  100 20 30 5000 7 1 2 9 0 0\ncpu0 50 10 15 2500 3 1 1 4 0 0\nintr 1 2 3\n"
	got, err := busyOfStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := (100 + 20 + 30 + 1 + 2) * 10 * time.Millisecond; got != want {
		t.Errorf("busy %s, want %s", got, want)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu  1 2 3\n", "cpu  1 x 3 4 5 6 7 8\n"} {
		if _, err := busyOfStat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
