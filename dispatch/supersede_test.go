package dispatch_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// attemptsOf lists the recorded attempts of an alert, newest first.
func (r *rig) attemptsOf(alertID string) []map[string]any {
	r.t.Helper()
	res := r.do("GET", "/groups/"+r.project+"/alerts/"+alertID+"/deliveries", nil, 200)["results"].([]any)
	out := make([]map[string]any, len(res))
	for i, v := range res {
		out[i] = v.(map[string]any)
	}
	return out
}

// openingInRetry opens an alert notified to a webhook that answers 500 until recovered is
// set, and returns once the opening's quick tries failed: its retry task waits.
func (r *rig) openingInRetry() (alertID string, recovered *atomic.Bool) {
	r.t.Helper()
	recovered = r.recv.failing(500)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	alertID = r.onlyAlert("OPEN")["id"].(string)
	r.recv.waitCount(r.t, 3, 10*time.Second)
	// The target's third answer comes before the session ends that try (store.EndNotice, which
	// would clear a mark the caller set meanwhile) and records the tries (their delivery id,
	// which the caller may read): the tries are over once recorded.
	if !eventually(10*time.Second, func() bool { return len(r.attemptsOf(alertID)) >= 3 }) {
		r.t.Fatalf("the opening's three tries were not recorded: %v", r.attemptsOf(alertID))
	}
	return alertID, recovered
}

// resolution waits up to within for the first resolution the receiver got.
func (rc *receiver) resolution(within time.Duration) (delivery, bool) {
	var closing delivery
	ok := eventually(within, func() bool {
		for _, d := range rc.deliveries() {
			if d.Event == "alert.close" {
				closing = d
				return true
			}
		}
		return false
	})
	return closing, ok
}

// hasAttempt says whether attempts hold one with outcome and reason.
func hasAttempt(as []map[string]any, outcome, reason string) bool {
	for _, a := range as {
		if a["outcome"] == outcome && (reason == "" || a["reason"] == reason) {
			return true
		}
	}
	return false
}

// A retry of an alert's opening after the alert closed is not sent (a PAGING trigger going out
// after its resolve would open the incident for good), and neither is the resolution of an
// opening that never reached the target; nor a retry after the alert was acknowledged, or
// while a maintenance window silences it. Each is recorded SUPERSEDED with why.
func TestStaleOpeningIsSuperseded(t *testing.T) {
	for _, c := range []struct {
		name string
		then func(r *rig, alertID string)
		why  []string
	}{
		{"closed", func(r *rig, _ string) {
			r.observe(hostDown("h1", false))
			r.onlyAlert("CLOSED")
		}, []string{herald.SupersededClosed, herald.SupersededNeverOpened}},
		{"acknowledged", func(r *rig, id string) {
			until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{"acknowledgedUntil": until}, 200)
		}, []string{herald.SupersededAcknowledged}},
		{"silenced", func(r *rig, _ string) {
			start, end := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
			r.do("POST", "/groups/"+r.project+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"},
				"startDate": start.UTC().Format(time.RFC3339), "endDate": end.UTC().Format(time.RFC3339)}, 200)
		}, []string{herald.SupersededSilenced}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 200*time.Millisecond)
			id, recovered := r.openingInRetry()
			c.then(r, id)
			since := time.Now()
			recovered.Store(true)
			if !eventually(15*time.Second, func() bool {
				as := r.attemptsOf(id)
				for _, why := range c.why {
					if !hasAttempt(as, store.OutcomeSuperseded, why) {
						return false
					}
				}
				return true
			}) {
				t.Fatalf("no SUPERSEDED attempts %q: %v\n%s", c.why, r.attemptsOf(id), r.failedTasks())
			}
			time.Sleep(time.Second)
			for _, d := range r.recv.deliveries() {
				if d.At.After(since) {
					t.Errorf("%s sent after the alert was %s (%s after)", d.Event, c.name, d.At.Sub(since))
				}
			}
		})
	}
}

// A resolution waits behind its opening: while a retry of the opening is under way at a slow
// target, the alert clears; the resolution reaches the target only after the opening was
// answered.
func TestResolutionWaitsBehindItsOpening(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	var mu sync.Mutex
	var openAnswered time.Time
	r.recv.respond = func(n int, w http.ResponseWriter) {
		switch {
		case n <= 3: // the opening's quick tries fail: it becomes a retry task
			w.WriteHeader(500)
		case n == 4: // the retry hangs a while, then succeeds
			time.Sleep(3 * time.Second)
			mu.Lock()
			openAnswered = time.Now()
			mu.Unlock()
		}
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	r.onlyAlert("OPEN")
	r.recv.waitCount(t, 4, 15*time.Second) // the retry is under way
	r.observe(hostDown("h1", false))
	closing, ok := r.recv.resolution(20 * time.Second)
	if !ok {
		t.Fatalf("no resolution: %s", r.failedTasks())
	}
	mu.Lock()
	defer mu.Unlock()
	if openAnswered.IsZero() || closing.At.Before(openAnswered) {
		t.Errorf("the resolution arrived at %s, before the opening was answered (%s)", closing.At.Format(time.StampMilli), openAnswered.Format(time.StampMilli))
	}
}

// A resolution does not wait for a try its sender died in: a retry of the opening whose
// earlier run died mid-try (its mark left in Redis, as a killed worker leaves it), run again
// after the alert closed, is superseded and ends that try; the resolution goes within seconds,
// rather than once the mark lapses (two minutes).
func TestResolutionDoesNotWaitForADeadTry(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 200*time.Millisecond)
	id, recovered := r.openingInRetry()
	// The retry task stays queued while its earlier run's dead try is set up and the alert
	// closes behind it.
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	queue := dispatch.DeliveryQueue("WEBHOOK")
	if err := ins.PauseQueue(queue); err != nil {
		t.Fatal(err)
	}
	var deliveryID string
	for _, a := range r.attemptsOf(id) {
		deliveryID, _ = a["deliveryId"].(string)
	}
	if deliveryID == "" {
		t.Fatalf("no delivery id among the opening's attempts: %v", r.attemptsOf(id))
	}
	sc := store.Scope{GroupID: r.project}
	if began, err := r.Store.BeginNotice(ctx, sc, id, "0", deliveryID, time.Now().Add(2*time.Minute)); err != nil || !began.OK {
		t.Fatal(began, err)
	}
	r.observe(hostDown("h1", false))
	r.onlyAlert("CLOSED")
	if v, err := r.Store.BeginClose(ctx, sc, id, "0", time.Now()); err != nil || v != store.CloseWait {
		t.Fatalf("the resolution does not wait behind the dead try: %v %v", v, err)
	}
	recovered.Store(true)
	resumed := time.Now()
	if err := ins.UnpauseQueue(queue); err != nil {
		t.Fatal(err)
	}
	closing, ok := r.recv.resolution(15 * time.Second)
	if !ok {
		t.Fatalf("no resolution within 15 s: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	t.Logf("the resolution went %s after the retries resumed", closing.At.Sub(resumed).Round(time.Millisecond))
	if !hasAttempt(r.attemptsOf(id), store.OutcomeSuperseded, herald.SupersededClosed) {
		t.Errorf("the opening's retry was not superseded: %v", r.attemptsOf(id))
	}
	for _, d := range r.recv.deliveries() {
		if d.Event == "alert.open" && d.At.After(resumed) {
			t.Errorf("the opening was sent again after the alert closed")
		}
	}
}

// A notice whose notification was edited since it was decided is not sent to the new
// target: a retry of it is superseded.
func TestRetryAfterEditIsSuperseded(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.recv.status = func(int) int { return 500 }
	cfg := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	r.recv.waitCount(t, 1, 5*time.Second)
	other := newReceiver(t)
	r.do("PUT", "/groups/"+r.project+"/alertConfigs/"+cfg, map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": other.url(), "webhookSecret": webhookSecret,
			"delayMin": 0, "intervalMin": 60}}}, 200)
	id := a["id"].(string)
	if !eventually(15*time.Second, func() bool { return hasAttempt(r.attemptsOf(id), store.OutcomeSuperseded, "") }) {
		t.Fatalf("the retry was not superseded: %v", r.attemptsOf(id))
	}
	if n := len(other.deliveries()); n != 0 {
		t.Errorf("the new target got %d notices decided for the old one", n)
	}
}

// A permanent failure (a 404) is a dead letter at once: one request, no retries, the attempt
// recorded DEAD_LETTER, the task archived where asynqmon shows it and listed by the API;
// replayed through the API once the target is fixed, it is delivered.
func TestPermanentFailureIsADeadLetter(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	fixed := r.recv.failing(404)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	queue := dispatch.DeliveryQueue("WEBHOOK")
	r.waitArchived(queue, 1, 10*time.Second)
	if n := len(r.recv.deliveries()); n != 1 {
		t.Errorf("the target got %d requests for a permanent failure, want 1", n)
	}
	as := r.attemptsOf(a["id"].(string))
	if len(as) != 1 || as[0]["outcome"] != store.OutcomeDeadLetter || as[0]["statusCode"] != 404.0 {
		t.Errorf("attempts %v, want one DEAD_LETTER with status 404", as)
	}
	dead := r.do("GET", "/groups/"+r.project+"/deadLetters", nil, 200)["results"].([]any)
	if len(dead) != 1 {
		t.Fatalf("the API lists %d dead letters, want 1: %v", len(dead), dead)
	}
	dl := dead[0].(map[string]any)
	if dl["alertId"] != a["id"] || dl["id"] != r.recv.deliveries()[0].Idempotency || dl["queue"] != queue || dl["lastError"] == "" {
		t.Errorf("dead letter %v", dl)
	}
	r.do("POST", "/groups/"+r.project+"/deadLetters/nosuchdelivery/replay", nil, 404)
	fixed.Store(true)
	r.do("POST", "/groups/"+r.project+"/deadLetters/"+dl["id"].(string)+"/replay", nil, 204)
	got := r.recv.waitCount(t, 2, 10*time.Second)
	if got[1].Idempotency != got[0].Idempotency {
		t.Errorf("the replay is another delivery: %q, then %q", got[0].Idempotency, got[1].Idempotency)
	}
	if !eventually(5*time.Second, func() bool { return hasAttempt(r.attemptsOf(a["id"].(string)), store.OutcomeDelivered, "") }) {
		t.Error("the replayed delivery is not recorded")
	}
}

// An alert that opens and closes in one step (a batch that reports a condition and its
// clearing) has its opening superseded by its close before it is sent; its resolution is
// then withheld too: no target sees the resolution of an alert whose opening it never got.
func TestOpenedAndClosedInOneStepSendsNothing(t *testing.T) {
	r := newRig(t, 100*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true), hostDown("h1", false))
	id := r.onlyAlert("CLOSED")["id"].(string)
	if !eventually(10*time.Second, func() bool {
		as := r.attemptsOf(id)
		return hasAttempt(as, store.OutcomeSuperseded, herald.SupersededClosed) &&
			(hasAttempt(as, store.OutcomeSuperseded, herald.SupersededNeverOpened) || hasAttempt(as, store.OutcomeDelivered, ""))
	}) {
		t.Fatalf("the opening and the resolution were not both recorded: %v", r.attemptsOf(id))
	}
	if ds := r.recv.deliveries(); len(ds) != 0 {
		t.Errorf("sent %d notices, the first %s, for an alert whose opening was superseded", len(ds), ds[0].Event)
	}
	if as := r.attemptsOf(id); !hasAttempt(as, store.OutcomeSuperseded, herald.SupersededNeverOpened) {
		t.Errorf("the resolution not recorded superseded: %v", as)
	}
}

// An edit cancels the alerts opened before it, not one a batch evaluated under the new
// configuration opened before the edit's task ran, however long ago its condition began: that
// alert's opening went out, and cancelling it would leave its incident open with no
// resolution.
func TestEditKeepsAlertsOpenedAfterIt(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	id := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.waitEngineIdle(10 * time.Second)
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	if err := ins.PauseQueue(dispatch.QueueEngine); err != nil {
		t.Fatal(err)
	}
	r.do("PUT", "/groups/"+r.project+"/alertConfigs/"+id, map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{r.webhook(0, 61)}}, 200)
	time.Sleep(1100 * time.Millisecond) // the alert is created in a later second than the edit
	down := hostDown("h1", true)
	down["at"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	r.observe(down)
	alert := r.onlyAlert("OPEN")
	r.recv.waitCount(t, 1, 10*time.Second)
	if err := ins.UnpauseQueue(dispatch.QueueEngine); err != nil {
		t.Fatal(err)
	}
	r.waitEngineIdle(10 * time.Second)
	if got := r.do("GET", "/groups/"+r.project+"/alerts/"+alert["id"].(string), nil, 200)["status"]; got != "OPEN" {
		t.Errorf("the alert opened under the edited configuration is %v, want OPEN", got)
	}
}

// A last retry whose record fails to be written (a store error) is not archived unrecorded:
// the task runs again, and the dead letter is recorded DEAD_LETTER.
func TestLastRetryIsRecordedDespiteAStoreError(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) { c.DeliveryRetries = 1 })
	r.recv.status = func(int) int { return http.StatusInternalServerError }
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 1000)}})
	r.faults.fail(1, func(name string, args []any) bool {
		if name != "lpush" {
			return false
		}
		for _, a := range args {
			if b, ok := a.([]byte); ok && strings.Contains(string(b), store.OutcomeDeadLetter) {
				return true
			}
		}
		return false
	})
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	if !eventually(30*time.Second, func() bool { return r.faults.injected() == 1 }) {
		t.Fatalf("the last retry never came: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	if !eventually(30*time.Second, func() bool {
		for _, a := range r.attemptsOf(id) {
			if a["deliveryId"] == id+"-0-1" && a["outcome"] == store.OutcomeDeadLetter {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the dead letter was never recorded: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
}
