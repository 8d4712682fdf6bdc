package scheduler_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/dispatch/dispatchtest"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// minute is the length of a minute of delayMin and intervalMin in these tests: the repeat
// every 10 minutes comes every 2 s (long enough for each engine session to end between
// repeats, so that stopping a worker never waits for one).
const minute = 200 * time.Millisecond

// env is a real redis-server, an engine worker, a webhook receiver on 127.0.0.1 and a
// project whose one configuration pages the receiver on HOST_DOWN every 10 minutes.
type env struct {
	t       *testing.T
	rdb     *redis.Client
	st      *store.Store
	d       *dispatch.Dispatcher
	log     *zap.Logger
	logs    *observer.ObservedLogs
	worker  *dispatchtest.Worker
	recv    *receiver
	project string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	t.Cleanup(func() { d.Close() })
	core, logs := observer.New(zapcore.DebugLevel)
	e := &env{t: t, rdb: rdb, st: st, d: d, log: zap.New(core), logs: logs, recv: newReceiver(t)}
	e.worker = dispatchtest.StartWorker(t, st, d, func() dispatch.EngineConfig {
		return dispatchtest.EngineConfig(minute, e.log.Named("engine"))
	})

	ctx := context.Background()
	now := time.Now()
	p := herald.Project{ID: herald.NewID(now), Name: "prod", OrgID: herald.NewID(now), Created: herald.At(now), Tags: []string{}}
	cfg := herald.AlertConfig{ID: herald.NewID(now), GroupID: p.ID, Created: herald.At(now), Updated: herald.At(now),
		AlertRule: herald.AlertRule{Enabled: true, EventTypeName: "HOST_DOWN", Matchers: []herald.Matcher{},
			Notifications: []herald.Notification{{TypeName: "WEBHOOK", DelayMin: 0, IntervalMin: 10, Fields: map[string]string{"webhookUrl": e.recv.srv.URL + "/hook"}}}}}
	if err := st.CreateProject(ctx, p, []herald.AlertConfig{cfg}, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: p.OrgID}, now)); err != nil {
		t.Fatal(err)
	}
	e.project = p.ID
	return e
}

// scheduler starts a scheduler reconciling every 300ms, shut down when the test ends.
func (e *env) scheduler() *scheduler.Scheduler {
	e.t.Helper()
	s := scheduler.New(e.st, e.d, scheduler.Config{ReconcileInterval: 300 * time.Millisecond, Log: e.log.Named("scheduler")})
	if err := s.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(s.Shutdown)
	return s
}

// hostDown is an observations batch saying host h1 is down.
func hostDown() []byte {
	active := true
	b, _ := json.Marshal([]herald.Observation{{EventTypeName: "HOST_DOWN", Active: &active, HostID: "h1", HostnameAndPort: "h1.example.com:27017"}})
	return b
}

// openAlert waits for the project's one OPEN alert.
func (e *env) openAlert() herald.Alert {
	e.t.Helper()
	var got []herald.Alert
	if !eventually(10*time.Second, func() bool {
		got, _, _ = e.st.Alerts(context.Background(), e.project, store.AlertFilter{Status: herald.StatusOpen}, store.Page{Limit: 10})
		return len(got) == 1
	}) {
		e.t.Fatalf("no single OPEN alert: %v", got)
	}
	return got[0]
}

// eventually polls cond until it holds or within passes; it reports whether it held.
var eventually = dispatchtest.Eventually

// delivery is one request the receiver got.
type delivery struct {
	At    time.Time
	Event string
	Key   string // Idempotency-Key: <alert>-<notification>-<notice number>
}

// seq is the notice number of an open or repeat notice.
func (d delivery) seq() int {
	n, _ := strconv.Atoi(d.Key[strings.LastIndexByte(d.Key, '-')+1:])
	return n
}

type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{At: time.Now(), Event: req.Header.Get("X-Vendor-Event"), Key: req.Header.Get("Idempotency-Key")})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// waitFor waits until a delivery satisfies ok and returns it.
func (rc *receiver) waitFor(t *testing.T, within time.Duration, what string, ok func(delivery) bool) delivery {
	t.Helper()
	var found delivery
	if !eventually(within, func() bool {
		for _, d := range rc.deliveries() {
			if ok(d) {
				found = d
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no %s within %s; deliveries: %+v", what, within, rc.deliveries())
	}
	return found
}

// An open alert whose due entry is lost (with every queued tick: a failover that dropped the
// last writes) would never repeat; the scheduler puts it back and the next repeat is
// delivered.
func TestReconcileRepairsALostDueEntry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if err := e.d.Observe(ctx, e.project, hostDown()); err != nil {
		t.Fatal(err)
	}
	a := e.openAlert()
	e.recv.waitFor(t, 5*time.Second, "first notice", func(d delivery) bool { return d.Event == "alert.open" })

	// The failover: the engine stops, the alert's due entry and every queued engine task are
	// lost, and the engine comes back.
	e.worker.Stop()
	sc := store.Scope{GroupID: e.project}
	l, ok, err := e.st.LockProject(ctx, e.project, time.Minute)
	if err != nil || !ok {
		t.Fatalf("take the stopped engine's project: %v %v", ok, err)
	}
	if err := l.ForgetDue(ctx, sc, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	ins := asynq.NewInspectorFromRedisClient(e.rdb)
	for _, del := range []func(string) (int, error){ins.DeleteAllScheduledTasks, ins.DeleteAllPendingTasks, ins.DeleteAllRetryTasks} {
		if _, err := del(dispatch.QueueEngine); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := e.st.ProjectNextDue(ctx, e.project); err != nil || ok {
		t.Fatalf("the due entry is still there (%v)", err)
	}
	e.worker.Start()
	lost := time.Now()
	seen := len(e.recv.deliveries())

	s := e.scheduler()
	// The repeat comes at its time (2 s after the first notice), once the scheduler has put the
	// alert back (within a reconcile interval or two).
	d := e.recv.waitFor(t, 5*time.Second, "repeat after the repair", func(d delivery) bool {
		return d.Event == "alert.update" && d.At.After(lost) && d.seq() >= 2
	})
	if len(e.recv.deliveries()) <= seen {
		t.Fatal("nothing delivered after the loss")
	}
	if e.logs.FilterMessage("put alerts without a due time back in the schedule").Len() == 0 {
		t.Error("the repair was not logged")
	}
	// And the engine keeps the alert going on its own: the repeat after that comes too.
	e.recv.waitFor(t, 5*time.Second, "the following repeat", func(x delivery) bool { return x.seq() > d.seq() })

	// Each job's last run is known, with its lateness.
	runs := s.LastRuns()
	if len(runs) != len(scheduler.Jobs) {
		t.Errorf("runs of %v, want one of each of scheduler.Jobs %v", slices.Collect(maps.Keys(runs)), scheduler.Jobs)
	}
	for _, job := range scheduler.Jobs {
		r, ok := runs[job]
		if !ok {
			t.Fatalf("no %s run recorded: %+v", job, runs)
		}
		if r.Err != nil || r.Scheduled.IsZero() || r.Lateness < 0 || r.Lateness > time.Second || r.Counts == nil || r.Outcome != scheduler.RunOK {
			t.Errorf("%s run: %+v", job, r)
		}
	}
}

// Observations that wait with no task for them (the task was lost) get a session: the
// scheduler kicks the project, and the alert opens and notifies.
func TestReconcileKicksWaitingObservations(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if err := e.st.AppendObservations(ctx, e.project, hostDown()); err != nil { // queued, no task
		t.Fatal(err)
	}
	e.scheduler()
	e.openAlert()
	e.recv.waitFor(t, 5*time.Second, "first notice", func(d delivery) bool { return d.Event == "alert.open" })
	// The batch leaves the queue once evaluated and its notices sent.
	var w store.WaitingWork
	if !eventually(5*time.Second, func() bool {
		w, _ = e.st.Waiting(ctx, e.project, time.Now())
		return w.Observations == 0
	}) {
		t.Fatalf("observations still waiting: %+v", w)
	}
}

// Of two schedulers one leads; when it stops, the other takes over.
func TestOneSchedulerLeads(t *testing.T) {
	e := newEnv(t)
	first := e.scheduler()
	if !eventually(5*time.Second, func() bool { _, ok := first.LastRuns()[scheduler.JobReconcile]; return ok }) {
		t.Fatal("the first scheduler never ran")
	}
	second := e.scheduler()
	started := time.Now()
	// While the first runs three more times, the second stands by.
	if !eventually(5*time.Second, func() bool {
		return first.LastRuns()[scheduler.JobReconcile].Started.After(started.Add(700 * time.Millisecond))
	}) {
		t.Fatal("the first scheduler stopped running")
	}
	if runs := second.LastRuns(); len(runs) != 0 {
		t.Fatalf("the second scheduler ran too: %+v", runs)
	}
	first.Shutdown()
	if !eventually(5*time.Second, func() bool { _, ok := second.LastRuns()[scheduler.JobReconcile]; return ok }) {
		t.Fatal("the second scheduler did not take over")
	}
}

// The retention run purges hosts no observation named within the retention.
func TestRetentionPurgesUnreportedHosts(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	t.Cleanup(func() { d.Close() })
	now := time.Now()
	p := herald.Project{ID: herald.NewID(now), Name: "prod", OrgID: herald.NewID(now), Created: herald.At(now), Tags: []string{}}
	if err := st.CreateProject(ctx, p, nil, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: p.OrgID}, now)); err != nil {
		t.Fatal(err)
	}
	hosts := []herald.Host{{ID: "old", GroupID: p.ID, LastSeen: herald.At(now.Add(-2 * time.Hour))}, {ID: "new", GroupID: p.ID, LastSeen: herald.At(now)}}
	if err := st.RegisterHosts(ctx, p.ID, hosts, map[string][]string{"old": {"sda1"}}); err != nil {
		t.Fatal(err)
	}
	s := scheduler.New(st, d, scheduler.Config{Retention: time.Hour, Log: zap.NewNop()})
	r, err := s.Retain(ctx)
	if err != nil || r.Hosts != 1 {
		t.Fatalf("Retain = %+v, %v; want 1 host purged", r, err)
	}
	if _, err := st.Host(ctx, p.ID, "old"); !herald.IsNotFound(err) {
		t.Errorf("the unreported host is kept (%v)", err)
	}
	if _, err := st.Host(ctx, p.ID, "new"); err != nil {
		t.Errorf("the reported host is purged (%v)", err)
	}
}

// A leader that dies without resigning (killed) is replaced within 15 s at worst, with the
// production lease and reconcile interval: the standby takes the lead once the lease runs out
// and runs reconcile at once, not at its next interval.
func TestStandbyTakesOverFromAKilledLeader(t *testing.T) {
	e := newEnv(t)
	start := func() *scheduler.Scheduler {
		s := scheduler.New(e.st, e.d, scheduler.Config{Log: e.log.Named("scheduler")}) // default intervals
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Shutdown)
		return s
	}
	first := start()
	if !eventually(5*time.Second, func() bool { _, ok := first.LastRuns()[scheduler.JobReconcile]; return ok }) {
		t.Fatal("the first scheduler never ran")
	}
	second := start()
	// The worst moment: just after the leader renewed its lease (it does every third of it).
	time.Sleep(scheduler.LeaderLease / 3)
	first.Die()
	killed := time.Now()
	if !eventually(16*time.Second, func() bool { _, ok := second.LastRuns()[scheduler.JobReconcile]; return ok }) {
		t.Fatal("the standby did not take over within 16 s")
	}
	took := second.LastRuns()[scheduler.JobReconcile].Started.Sub(killed)
	t.Logf("the standby ran reconcile %s after the leader was killed", took.Round(time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("failover took %s, over 15 s", took)
	}
}
