package main

import (
	"runtime/debug"
	"testing"
)

// A worker and an API process collect garbage less often than Go's default (workerGCPercent,
// apiGCPercent), unless GOGC says how often: the operator's setting wins.
func TestRoleGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, percent := range []int{workerGCPercent, apiGCPercent} {
		if percent <= 100 {
			t.Errorf("a role's GC percent %d collects no less often than Go's default", percent)
		}
		for _, tc := range []struct {
			gogc string
			want int
		}{
			{"", percent},
			{"50", 100}, // left as the runtime read it (100 here: the test set it)
			{"off", 100},
		} {
			debug.SetGCPercent(100)
			roleGC(func(name string) string {
				if name == "GOGC" {
					return tc.gogc
				}
				return ""
			}, percent)
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("GC percent %d, GOGC=%q: %d, want %d", percent, tc.gogc, got, tc.want)
			}
		}
	}
}
