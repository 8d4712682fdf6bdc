package dispatch_test

import (
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
