package dispatch_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/dispatch/dispatchtest"
	"github.com/heraldhq/herald/store"
)

// dyingNotifier sends as its notifier does until dead is set; from then on a send that
// started never returns, as in a process that was killed.
type dyingNotifier struct {
	channels.Notifier
	dead    atomic.Bool
	release chan struct{}
}

func (d *dyingNotifier) Notify(ctx context.Context, del channels.Delivery) error {
	err := d.Notifier.Notify(ctx, del)
	if d.dead.Load() {
		<-d.release
		return fmt.Errorf("killed")
	}
	return err
}

// dyingWorker starts a worker on a client of its own to the rig's Redis. kill makes it dead
// to the rest: every Redis command it sends fails, and its sends in flight never return.
func (r *rig) dyingWorker() (kill func()) {
	r.t.Helper()
	cut := &faults{}
	st, d := r.ownStore(cut)
	n := &dyingNotifier{Notifier: dispatchtest.Webhook(), release: make(chan struct{})}
	cfg := dispatchtest.EngineConfig(r.minute, nil)
	cfg.Notifiers["WEBHOOK"] = n
	w := dispatchtest.Start(r.t, st, d, cfg)
	r.t.Cleanup(func() {
		close(n.release)
		w.Shutdown()
	})
	return func() {
		n.dead.Store(true)
		cut.fail(1<<30, func(string, []any) bool { return true })
	}
}

// A worker killed while a backlog of openings waits in its outbox, the alerts clearing before
// another worker takes over: each target gets an alert's opening and then its resolution, or
// neither, both recorded SUPERSEDED; never a resolution alone.
func TestDeadWorkersOpeningsAreNeverResolvedAlone(t *testing.T) {
	const hosts = 48 // more than a session sends to one kind at once: some wait untried
	r := newRig(t, 200*time.Millisecond)
	r.worker.Stop()
	kill := r.dyingWorker()
	r.recv.respond = func(_ int, w http.ResponseWriter) {
		time.Sleep(300 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	down := make([]map[string]any, hosts)
	up := make([]map[string]any, hosts)
	for i := range down {
		down[i], up[i] = hostDown(fmt.Sprintf("h%d", i), true), hostDown(fmt.Sprintf("h%d", i), false)
	}
	r.observe(down...)
	r.recv.waitCount(t, 1, 10*time.Second)
	kill()
	r.observe(up...)
	r.worker.Start()

	var closed []map[string]any
	if !eventually(30*time.Second, func() bool {
		closed = r.alerts("?status=CLOSED&itemsPerPage=500")
		return len(closed) == hosts
	}) {
		t.Fatalf("%d of %d alerts closed", len(closed), hosts)
	}
	neither := 0
	for _, a := range closed {
		id := a["id"].(string)
		var as []map[string]any
		if !eventually(20*time.Second, func() bool {
			as = r.attemptsOf(id)
			return ended(as, id+"-0-1") && ended(as, id+"-0-close")
		}) {
			t.Fatalf("alert %s: its notices did not both end: %v\n%s", id, as, r.failedTasks())
		}
		var events []string
		for _, d := range r.recv.deliveries() {
			if d.Alert["id"] == id {
				events = append(events, d.Event)
			}
		}
		switch {
		case len(events) == 0:
			neither++
			if !hasAttempt(as, store.OutcomeSuperseded, herald.SupersededClosed) ||
				!hasAttempt(as, store.OutcomeSuperseded, herald.SupersededNeverOpened) {
				t.Errorf("alert %s reached nobody, but its notices are not both recorded superseded: %v", id, as)
			}
		case events[0] != "alert.open" || events[len(events)-1] != "alert.close":
			t.Errorf("alert %s: the target got %v", id, events)
		}
	}
	t.Logf("%d of %d alerts reached the target with neither notice", neither, hosts)
	if neither == 0 {
		t.Error("no opening was left untried by the killed worker: the test did not test anything")
	}
}

// ended says whether attempts record delivery id as ended: delivered, superseded or a dead
// letter.
func ended(as []map[string]any, id string) bool {
	for _, a := range as {
		if a["deliveryId"] == id {
			switch a["outcome"] {
			case store.OutcomeDelivered, store.OutcomeSuperseded, store.OutcomeDeadLetter:
				return true
			}
		}
	}
	return false
}
