package scheduler

import (
	"context"
	"errors"
	"testing"
)

// A run ends ok, failed (its error, or a part of its work that failed) or interrupted (its
// error while the process shuts down), and every outcome is one of RunOutcomes.
func TestRunOutcome(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	broke := errors.New("store down")
	for _, c := range []struct {
		ctx    context.Context
		counts map[string]int
		err    error
		want   string
	}{
		{live, map[string]int{"projects": 3}, nil, RunOK},
		{live, nil, nil, RunOK},
		{live, map[string]int{"projects": 3, "failed": 1}, nil, RunFailed},
		{live, map[string]int{"projects": 3}, broke, RunFailed},
		{ended, map[string]int{"projects": 1}, context.Canceled, RunInterrupted},
		{ended, map[string]int{"failed": 2}, nil, RunFailed}, // it ended before shutdown cut it short
	} {
		got := outcome(c.ctx, c.counts, c.err)
		if got != c.want {
			t.Errorf("counts %v, error %v, ctx ended %v: %s, want %s", c.counts, c.err, c.ctx.Err() != nil, got, c.want)
		}
		known := false
		for _, o := range RunOutcomes {
			known = known || o == got
		}
		if !known {
			t.Errorf("%s is not one of RunOutcomes %v", got, RunOutcomes)
		}
	}
}
