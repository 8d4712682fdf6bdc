package dispatch

import (
	"testing"
	"time"
)

// A task waits in-process for its project's next due time only when no other task of the
// engine waits for that time or earlier.
func TestOneWaiterAProject(t *testing.T) {
	t0 := time.Unix(1_795_000_000, 0)
	type step struct {
		project string
		at      time.Duration // after t0
		wants   bool          // the task must wait itself
		done    bool          // the waiter's wait ends at once (before the next step)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the first waits", []step{{"p", 0, true, false}}},
		{"a later one need not", []step{{"p", 0, true, false}, {"p", time.Second, false, false}}},
		{"the same instant need not", []step{{"p", 0, true, false}, {"p", 0, false, false}}},
		{"an earlier one must", []step{{"p", time.Second, true, false}, {"p", 0, true, false}}},
		{"another project's must", []step{{"p", 0, true, false}, {"q", time.Second, true, false}}},
		{"once the wait ended, the next must", []step{{"p", 0, true, true}, {"p", time.Second, true, false}}},
		{"a later waiter's end leaves the earlier", []step{{"p", time.Second, true, false}, {"p", 0, true, false},
			{"p", 2 * time.Second, false, false}}},
	} {
		var w waiters
		for i, s := range tc.steps {
			done, first := w.add(s.project, t0.Add(s.at))
			if first != s.wants {
				t.Errorf("%s, step %d: waits %v, want %v", tc.name, i, first, s.wants)
			}
			if s.done {
				done()
			}
		}
	}
	var w waiters
	done, _ := w.add("p", t0)
	done()
	if len(w.at) != 0 {
		t.Errorf("left after every wait ended: %v", w.at)
	}
}
