package dispatch

import (
	"testing"
	"time"
)

// A project's next session is at its next due alert or at the end of another sender's claim,
// whichever is first; an in-process wait for a due time ends a little before it (the session
// waits for the due time itself), one for a claim a little after (a session takes claimed
// notices over only as it starts).
func TestWakeAtAndStart(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	s := time.Second
	for _, c := range []struct {
		name       string
		w          wake
		at, starts time.Time
	}{
		{"nothing", wake{}, time.Time{}, time.Time{}},
		{"due only", wake{Due: t0}, t0, t0.Add(-holdWithin)},
		{"claim only", wake{ClaimedUntil: t0}, t0, t0.Add(claimSlack)},
		{"claim first", wake{Due: t0.Add(s), ClaimedUntil: t0}, t0, t0.Add(claimSlack)},
		{"due first", wake{Due: t0, ClaimedUntil: t0.Add(s)}, t0, t0.Add(-holdWithin)},
		{"together", wake{Due: t0, ClaimedUntil: t0}, t0, t0.Add(-holdWithin)},
		{"claim just before the due time's hold", wake{Due: t0.Add(holdWithin), ClaimedUntil: t0.Add(-claimSlack)}, t0.Add(-claimSlack), t0},
	} {
		if got := c.w.at(); !got.Equal(c.at) {
			t.Errorf("%s: at %v, want %v", c.name, got, c.at)
		}
		if got := c.w.start(); !got.Equal(c.starts) {
			t.Errorf("%s: start %v, want %v", c.name, got, c.starts)
		}
	}
}
