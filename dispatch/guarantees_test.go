package dispatch_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// An agent re-reporting a condition that still holds changes nothing about when the alert's
// next step is due: TRACKING turns OPEN on time and repeats keep their cadence, with no
// scheduler running to repair the schedule.
func TestReReportsKeepTheSchedule(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(2, 5)}})
	start := time.Now()
	r.observe(hostDown("h1", true))
	detected := time.Time{}
	const span = 3 * time.Second
	for time.Since(start) < span {
		time.Sleep(100 * time.Millisecond)
		r.observe(hostDown("h1", true))
		if detected.IsZero() {
			if as := r.alerts(""); len(as) == 1 {
				detected = r.schedule(as[0]["id"].(string)).Detected
			}
		}
	}
	if detected.IsZero() {
		t.Fatal("no alert")
	}
	got := r.recv.deliveries()
	if len(got) == 0 {
		t.Fatal("the alert never opened while its condition was re-reported")
	}
	if d := got[0].At.Sub(detected.Add(2 * minute)); d > late {
		t.Errorf("opened %s late", d)
	}
	// Slots at 2, 7, 12, ... minutes after detection: all those before the end of the span.
	want := 1 + int((time.Since(detected)-2*minute-late)/(5*minute))
	if len(got) < want-1 {
		t.Errorf("%d notices in %s of re-reports, want about %d (one per interval)", len(got), span, want)
	}
	checkNotEarly(t, got, detected.Add(2*minute), 5*minute)
}

// One failed save of a batch's delivery results is retried: the notices leave the outbox
// and are not sent again when their lease runs out.
func TestFailedSaveIsRetried(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.faults.fail(1, onDoneOutbox)
	for _, h := range []string{"h1", "h2", "h3"} {
		r.observe(hostDown(h, true))
	}
	r.recv.waitCount(t, 3, 10*time.Second)
	time.Sleep(2*time.Second + 500*time.Millisecond) // the lease: anything left in the outbox comes back
	r.observe(hostDown("h4", true))                  // at the next session
	r.recv.waitCount(t, 4, 10*time.Second)
	time.Sleep(3 * time.Second) // a notice recovered from the outbox is retried a second later
	if r.faults.injected() != 1 {
		t.Fatalf("%d failures injected, want 1", r.faults.injected())
	}
	seen := map[string]int{}
	for _, d := range r.recv.deliveries() {
		seen[d.Idempotency]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("notice %s delivered %d times", k, n)
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d notices delivered, want 4", len(seen))
	}
	// The save tried again does only what was left: each attempt is recorded once.
	if n := r.do("GET", "/groups/"+r.project+"/deliveries", nil, 200)["totalCount"].(float64); n != 4 {
		t.Errorf("%v attempts recorded, want 4", n)
	}
}

// A store error while reading a project's people for a GROUP notification is transient: the
// notice is not dropped, the owner gets the mail.
func TestPeopleReadFailureIsTransient(t *testing.T) {
	r, mail := newMailRig(t, nil)
	r.do("POST", "/users", map[string]any{"username": "owner@example.com", "password": "s3cret-pass", "emailAddress": "owner@example.com",
		"firstName": "A", "lastName": "B", "roles": []any{map[string]any{"groupId": r.project, "roleName": "GROUP_OWNER"}}}, 201)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "role": "GROUP_OWNER", "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.faults.fail(2, onKey("zrange", ":group:"+r.project))
	r.observe(hostDown("h1", true))
	if !eventually(15*time.Second, func() bool { return len(mail.Mails()) >= 1 }) {
		t.Fatalf("the owner never got the mail after %d failed reads of the project's people\n%s", r.faults.injected(), r.failedTasks())
	}
	if r.faults.injected() != 2 {
		t.Errorf("%d failures injected, want 2", r.faults.injected())
	}
}

// A target answering in longer than the lease: the session's heartbeat keeps the project and
// the notices it is sending, so no other session takes them and nothing is sent twice.
func TestSlowTargetKeepsTheLease(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) { c.Lease = time.Second })
	r.recv.respond = func(n int, w http.ResponseWriter) { time.Sleep(2500 * time.Millisecond) }
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	r.recv.waitCount(t, 1, 5*time.Second)
	r.observe(hostDown("h2", true)) // another session wants the project while the first waits
	r.recv.waitCount(t, 2, 10*time.Second)
	time.Sleep(4 * time.Second)
	seen := map[string]int{}
	for _, d := range r.recv.deliveries() {
		seen[d.Idempotency]++
	}
	if len(seen) != 2 {
		t.Errorf("%d notices, want 2: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("notice %s sent %d times", k, n)
		}
	}
	if n := len(r.alerts("?status=OPEN")); n != 2 {
		t.Errorf("%d open alerts, want 2", n)
	}
}

// A worker killed in a session leaves its project leased, unrenewed: the project's work
// resumes within 10 s (the default lease, 8 s), not the old 30 s.
func TestKilledSessionsProjectResumesWithin10s(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) { c.Lease = 0 }) // the default
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	// Creating the configuration started a session of its own: take the lease once it is done.
	if !eventually(5*time.Second, func() bool {
		_, ok, err := r.Store.LockProject(context.Background(), r.project, dispatch.DefaultLease)
		return err == nil && ok
	}) {
		t.Fatal("could not take the project's lease as the killed session")
	}
	killed := time.Now()
	r.observe(hostDown("h1", true))
	got := r.recv.waitCount(t, 1, 15*time.Second)
	if took := got[0].At.Sub(killed); took > 10*time.Second {
		t.Errorf("the project resumed %s after its session was killed, over 10 s", took)
	} else {
		t.Logf("resumed after %s", took.Round(time.Millisecond))
	}
}

// Notices a dead sender held are taken over when its claim ends: the project's session that
// ends while they are still claimed starts again for them at the claim's end, not at the
// scheduler's next look (there is no scheduler here) nor a second later.
func TestClaimedNoticesTakenOverWhenTheClaimEnds(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	slow := new(atomic.Bool)
	slow.Store(true)
	r.recv.respond = func(n int, w http.ResponseWriter) {
		if slow.Load() {
			time.Sleep(time.Second)
		}
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	ctx := context.Background()
	outbox := "herald:{g:" + r.project + "}:outbox"
	// A real outbox entry, read while its sender waits on the slow target: after its delivery
	// it is put back, as a sender that died holding it would have left it.
	r.observe(hostDown("h1", true))
	var entry string
	if !eventually(5*time.Second, func() bool {
		es, err := r.Store.Redis().ZRange(ctx, outbox, 0, -1).Result()
		if err == nil && len(es) == 1 {
			entry = es[0]
		}
		return entry != ""
	}) {
		t.Fatal("no outbox entry while the opening was being sent")
	}
	r.recv.waitCount(t, 1, 5*time.Second)
	slow.Store(false)
	r.waitEngineIdle(10 * time.Second)
	if !eventually(5*time.Second, func() bool { n, _ := r.Store.Redis().ZCard(ctx, outbox).Result(); return n == 0 }) {
		t.Fatal("the outbox did not empty after the delivery")
	}
	claimEnds := time.Now().Add(1200 * time.Millisecond)
	if err := r.Store.Redis().ZAdd(ctx, outbox, redis.Z{Score: float64(claimEnds.UnixMilli()), Member: entry}).Err(); err != nil {
		t.Fatal(err)
	}
	r.observe(hostDown("h2", true)) // a session, which ends while the entry is still claimed
	var taken time.Time
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if n, err := r.Store.Redis().ZCard(ctx, outbox).Result(); err == nil && n == 0 {
			taken = time.Now()
			break
		}
	}
	switch {
	case taken.IsZero():
		t.Fatal("the claimed entry was never taken over")
	case taken.Before(claimEnds):
		t.Errorf("taken over %s before its claim ended", claimEnds.Sub(taken))
	case taken.Sub(claimEnds) > 400*time.Millisecond:
		t.Errorf("taken over %s after its claim ended, want within 400 ms", taken.Sub(claimEnds))
	default:
		t.Logf("taken over %s after its claim ended", taken.Sub(claimEnds).Round(time.Millisecond))
	}
}

// A session sees every configuration committed before the observation it evaluates: one
// created while a session is busy (its sender waits on a slow target) applies to an
// observation posted right after it, in that same session.
func TestSessionSeesConfigurationsCommittedBeforeTheObservation(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.recv.respond = func(n int, w http.ResponseWriter) { time.Sleep(1500 * time.Millisecond) }
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	for _, h := range []string{"h1", "h2", "h3", "h4"} {
		r.observe(hostDown(h, true))
	}
	r.recv.waitCount(t, 1, 5*time.Second) // the session is busy sending
	other := newReceiver(t)
	later := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "matchers": []any{map[string]any{"fieldName": "HOSTNAME_AND_PORT",
		"operator": "STARTS_WITH", "value": "h9"}}, "notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": other.url(),
		"webhookSecret": webhookSecret, "delayMin": 0, "intervalMin": 60}}})
	r.observe(hostDown("h9", true))
	if !eventually(15*time.Second, func() bool {
		for _, a := range r.alerts("") {
			if a["alertConfigId"] == later {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the observation was evaluated without the configuration created before it")
	}
}

// A batch of observations a worker cannot read (damaged, or a newer API's after a rollback)
// was accepted by the API: it is kept aside whole, in order, not dropped, and the project's
// next batches are evaluated all the same; the backlog it held is given back.
func TestUnreadableObservationBatchesAreSetAside(t *testing.T) {
	rec := &recorder{}
	r := newRigWith(t, 100*time.Millisecond, func(c *dispatch.EngineConfig) { c.Observer = rec })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	ctx := context.Background()
	bad := []string{`not json`, `[{"hostId":`}
	for _, b := range bad {
		if err := r.Store.AppendObservations(ctx, r.project, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	r.observe(hostDown("h1", true)) // queued behind the two, and evaluated all the same
	r.recv.waitCount(t, 1, 5*time.Second)
	var aside []string
	if !eventually(5*time.Second, func() bool {
		aside, _ = r.Store.ObservationsAside(ctx, r.project)
		return len(aside) == len(bad)
	}) {
		t.Fatalf("set aside %q, want %q", aside, bad)
	}
	if !slices.Equal(aside, bad) {
		t.Errorf("set aside %q, want %q in their order", aside, bad)
	}
	if !eventually(5*time.Second, func() bool {
		n, err := r.Store.Redis().Exists(ctx, "herald:{g:"+r.project+"}:obs", "herald:{g:"+r.project+"}:obs-bytes").Result()
		return err == nil && n == 0
	}) {
		t.Error("the project's queue of observations, or its backlog count, is left behind")
	}
	if want := slices.Repeat([]string{dispatch.ErrObservationsSetAside}, len(bad)); !slices.Equal(rec.errors(), want) {
		t.Errorf("engine errors %v, want %v", rec.errors(), want)
	}
}

// Outbox entries a worker cannot read (damaged, or a newer version's after a rollback) are
// kept aside whole (an entry, or the notice of an entry that cannot be read), not dropped,
// when their sender's lease has run out; the project's work goes on.
func TestUnreadableOutboxEntriesAreSetAside(t *testing.T) {
	rec := &recorder{}
	r := newRigWith(t, 100*time.Millisecond, func(c *dispatch.EngineConfig) { c.Observer = rec })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	ctx := context.Background()
	outbox := "herald:{g:" + r.project + "}:outbox"
	entries := []string{`{"alertId":5}`, `[{"alertId":[]}]`, `not json`, `[not json`}
	past := float64(time.Now().Add(-time.Minute).UnixMilli())
	for _, e := range entries {
		if err := r.Store.Redis().ZAdd(ctx, outbox, redis.Z{Score: past, Member: e}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	r.observe(hostDown("h1", true)) // a session: it takes back what the dead engine left
	r.recv.waitCount(t, 1, 5*time.Second)
	var aside []string
	if !eventually(5*time.Second, func() bool {
		aside, _ = r.Store.OutboxAside(ctx, store.Scope{GroupID: r.project})
		return len(aside) == 4
	}) {
		t.Fatalf("set aside %q, want the four unreadable entries and notices", aside)
	}
	want := map[string]bool{`{"alertId":5}`: true, `{"alertId":[]}`: true, `not json`: true, `[not json`: true}
	for _, a := range aside {
		if !want[a] {
			t.Errorf("set aside %q, not one of %v", a, want)
		}
	}
	// The delivered notice leaves the outbox as its session settles, after the target answered.
	var left []string
	if !eventually(5*time.Second, func() bool {
		var err error
		left, err = r.Store.Redis().ZRange(ctx, outbox, 0, -1).Result()
		return err == nil && len(left) == 0
	}) {
		t.Errorf("the outbox still holds %q", left)
	}
	if want := slices.Repeat([]string{dispatch.ErrOutboxSetAside}, len(entries)); !slices.Equal(rec.errors(), want) {
		t.Errorf("engine errors %v, want %v", rec.errors(), want)
	}
}

// A batch queued whose task could not be (Redis lost between the two, or the caller gone) was
// accepted all the same: the agent is answered 202, not an error that would make it send the
// batch again to be evaluated twice. The batch waits, as reconcile sees it (store.Waiting),
// and the next batch's session evaluates both, each once.
func TestBatchQueuedWithoutItsTaskIsAccepted(t *testing.T) {
	r := newRig(t, time.Minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	// asynq's enqueue: EVALSHA sha 2 <task key> <queue's pending list> ...
	pending := "asynq:{" + dispatch.QueueEngine + "}:pending"
	r.faults.fail(1, func(name string, args []any) bool { return name == "evalsha" && argAt(args, 4) == pending })
	r.observe(hostDown("h1", true)) // 202, or the rig fails the test
	if r.faults.injected() != 1 {
		t.Fatalf("%d enqueue failures injected, want 1", r.faults.injected())
	}
	w, err := r.Store.Waiting(context.Background(), r.project, time.Now())
	if err != nil || w.Observations != 1 {
		t.Fatalf("waiting %+v (%v), want the batch queued for reconcile to find", w, err)
	}
	r.observe(hostDown("h2", true))
	got := r.recv.waitCount(t, 2, 10*time.Second)
	r.waitEngineIdle(10 * time.Second)
	if n := len(r.recv.deliveries()); n != 2 || len(r.alerts("?status=OPEN")) != 2 {
		t.Errorf("%d deliveries (%v), %d open alerts; want each host's alert opened and notified once", n, got, len(r.alerts("?status=OPEN")))
	}
}
