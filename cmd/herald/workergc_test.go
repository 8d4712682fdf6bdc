package main

import (
	"runtime/debug"
	"testing"
)

// A worker collects garbage less often than Go's default (workerGCPercent), unless GOGC says
// how often: the operator's setting wins.
func TestWorkerGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		gogc string
		want int
	}{
		{"", workerGCPercent},
		{"50", 100}, // left as the runtime read it (100 here: the test set it)
		{"off", 100},
	} {
		debug.SetGCPercent(100)
		workerGC(func(name string) string {
			if name == "GOGC" {
				return tc.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
	if workerGCPercent <= 100 {
		t.Errorf("workerGCPercent %d collects no less often than Go's default", workerGCPercent)
	}
}
