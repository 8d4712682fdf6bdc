package dispatch_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald/dispatch"
)

// An idle worker hears of a batch of observations by its kick, not by polling asynq's
// queues: with the engine's queue paused, so that no task can run, the batch is still
// evaluated and notified. Once the queue resumes, its task finds nothing left to do.
func TestKickReachesIdleWorker(t *testing.T) {
	r := newRig(t, time.Minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	if err := ins.PauseQueue(dispatch.QueueEngine); err != nil {
		t.Fatal(err)
	}
	r.observe(hostDown("h1", true))
	got := r.recv.waitCount(t, 1, 5*time.Second)
	if err := ins.UnpauseQueue(dispatch.QueueEngine); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		q, err := ins.GetQueueInfo(dispatch.QueueEngine)
		return err == nil && q.Pending == 0 && q.Active == 0
	}) {
		t.Fatal("the batch's task did not run once the queue resumed")
	}
	if n := len(r.recv.deliveries()); n != 1 || got[0].Event != "alert.open" {
		t.Errorf("%d deliveries (first %q), want the one opening", n, got[0].Event)
	}
}

// A batch queued while a session's deliveries are under way is evaluated by that session at
// once, not after the deliveries: with the first delivery held by its target, the second
// alert opens all the same.
func TestBatchDuringDeliveriesIsEvaluated(t *testing.T) {
	r := newRig(t, time.Minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	held := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(held) }) })
	r.recv.mu.Lock()
	r.recv.respond = func(n int, w http.ResponseWriter) {
		if n == 1 {
			<-held
		}
	}
	r.recv.mu.Unlock()
	r.observe(hostDown("h1", true))
	r.recv.waitCount(t, 1, 5*time.Second) // h1's delivery is under way, held
	r.observe(hostDown("h2", true))
	if !eventually(2*time.Second, func() bool { return len(r.alerts("?status=OPEN")) == 2 }) {
		t.Fatalf("h2's alert did not open while h1's delivery was held: %v", r.alerts(""))
	}
	release.Do(func() { close(held) })
	if got := r.recv.waitCount(t, 2, 5*time.Second); len(got) != 2 {
		t.Errorf("%d deliveries, want 2", len(got))
	}
}
