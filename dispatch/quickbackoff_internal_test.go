package dispatch

import (
	"testing"
	"time"
)

// A delivery's quick tries wait about quickFirstWait, then twice that (±20 %), and stop after
// quickTries in all; within quickBound of the first try's start, counted from that start even
// though the waits are worked out only once a try failed.
func TestQuickBackoff(t *testing.T) {
	b := quickBackoff(time.Now())
	for i, want := range []time.Duration{quickFirstWait, 2 * quickFirstWait} {
		d, stop := b.Next()
		if stop || d < want*8/10 || d > want*12/10 {
			t.Errorf("wait %d: %s (stop %v), want %s ±20 %%", i+1, d, stop, want)
		}
	}
	if d, stop := b.Next(); !stop {
		t.Errorf("after %d tries: wait %s, want none", quickTries, d)
	}

	late := quickBackoff(time.Now().Add(-quickBound - time.Millisecond))
	if d, stop := late.Next(); !stop {
		t.Errorf("first try started more than %s ago: wait %s, want none", quickBound, d)
	}
	near := quickBackoff(time.Now().Add(-quickBound + 50*time.Millisecond))
	if d, stop := near.Next(); stop || d > 50*time.Millisecond {
		t.Errorf("%s left of the bound: wait %s (stop %v), want at most that", 50*time.Millisecond, d, stop)
	}
}
