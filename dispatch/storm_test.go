package dispatch_test

import (
	"fmt"
	"testing"
	"time"
)

// A batch that opens many alerts while the engine is sending nothing has its first notices
// on their way before the whole batch is committed: a commit of more than 100 alerts is held
// for a second and a half (as a slow Redis would take it), and the first notices arrive
// meanwhile. Then every alert is notified once.
func TestFirstNoticesGoBeforeTheWholeBatchCommits(t *testing.T) {
	r := newRig(t, time.Second)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	const hosts, held = 300, 1500 * time.Millisecond
	r.faults.hold(held, func(name string, args []any) bool { // the alerts' documents, more than 100
		return onKey("mset", ":alert:")(name, args) && len(args) > 1+2*100
	})
	var batch []map[string]any
	for i := range hosts {
		batch = append(batch, hostDown(fmt.Sprintf("storm-%d", i), true))
	}
	posted := time.Now()
	r.observe(batch...)
	first := r.recv.waitCount(t, 1, 10*time.Second)[0].At
	got := r.recv.waitCount(t, hosts, 10*time.Second)
	released := r.faults.released()
	if len(released) == 0 {
		t.Fatal("no commit was held: the test holds none of the engine's commits")
	}
	if !first.Before(released[0]) {
		t.Errorf("first notice %s after the report, when the held commit was let go %s after it: the first notices waited for the whole batch",
			first.Sub(posted).Round(time.Millisecond), released[0].Sub(posted).Round(time.Millisecond))
	}
	seen := map[string]int{}
	for _, d := range got {
		seen[d.Idempotency]++
	}
	if len(seen) != hosts {
		t.Errorf("%d distinct notices, want %d", len(seen), hosts)
	}
	time.Sleep(200 * time.Millisecond) // nothing more comes: no notice twice
	if n := len(r.recv.deliveries()); n != hosts {
		t.Errorf("%d deliveries, want %d", n, hosts)
	}
}
