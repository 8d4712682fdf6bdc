package store_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// asynqRig is a real asynq client, inspector and server on one Redis, serving queue with a
// handler that tells which task it started and then blocks until the test ends: a task it
// took stays active, its lease extended by the server, as under a live worker.
type asynqRig struct {
	client  *asynq.Client
	ins     *asynq.Inspector
	srv     *asynq.Server
	started chan string
}

func newAsynqRig(t *testing.T, rdb *redis.Client, queue string) *asynqRig {
	t.Helper()
	r := &asynqRig{
		client:  asynq.NewClientFromRedisClient(rdb),
		ins:     asynq.NewInspectorFromRedisClient(rdb),
		started: make(chan string, 16),
	}
	r.srv = asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:       8,
		Queues:            map[string]int{queue: 1},
		TaskCheckInterval: 20 * time.Millisecond,
		ShutdownTimeout:   time.Second,
		LogLevel:          asynq.FatalLevel,
	})
	release := make(chan struct{})
	if err := r.srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		r.started <- id
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); r.srv.Shutdown() })
	return r
}

// running waits until the server started task id.
func (r *asynqRig) running(t *testing.T, id string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-r.started:
			if got == id {
				return
			}
		case <-deadline:
			t.Fatalf("the server did not start task %s within 10 s", id)
		}
	}
}

// state is task id's state as asynq's inspector reads it.
func (r *asynqRig) state(t *testing.T, queue, id string) asynq.TaskState {
	t.Helper()
	info, err := r.ins.GetTaskInfo(queue, id)
	if err != nil {
		t.Fatal(err)
	}
	return info.State
}

// The keys ReclaimTasks moves tasks between are those the asynq Herald is built with writes,
// and that asynq is the version they were checked against: an upgrade fails here until the
// names (and asynq's requeue, which the script mirrors) are checked again.
func TestAsynqLayout(t *testing.T) {
	const queue = "layout"
	pending, active, lease, taskPrefix, version := store.AsynqKeys(queue)
	gomod, err := os.ReadFile("../go.mod") // test binaries carry no module versions of their own
	if err != nil {
		t.Fatal(err)
	}
	built := ""
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/hibiken/asynq" {
			built = f[1]
		}
	}
	if built != version {
		t.Fatalf("built with asynq %q, but store's names of its keys were checked against %s: check them (and its requeueCmd) again", built, version)
	}

	ctx := context.Background()
	rdb := storetest.Redis(t)
	r := newAsynqRig(t, rdb, queue)
	if err := r.ins.PauseQueue(queue); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(queue), asynq.TaskID("x")); err != nil {
		t.Fatal(err)
	}
	if ids := rdb.LRange(ctx, pending, 0, -1).Val(); !slices.Equal(ids, []string{"x"}) {
		t.Errorf("%s holds %q, want the queued task", pending, ids)
	}
	if s := rdb.HGet(ctx, taskPrefix+"x", "state").Val(); s != "pending" {
		t.Errorf("%sx state %q, want pending", taskPrefix, s)
	}
	if err := r.ins.UnpauseQueue(queue); err != nil {
		t.Fatal(err)
	}
	r.running(t, "x")
	now := rdb.Time(ctx).Val()
	if ids := rdb.LRange(ctx, active, 0, -1).Val(); !slices.Equal(ids, []string{"x"}) {
		t.Errorf("%s holds %q, want the running task", active, ids)
	}
	if end, err := rdb.ZScore(ctx, lease, "x").Result(); err != nil || end < float64(now.Unix()) || end > float64(now.Add(31*time.Second).Unix()) {
		t.Errorf("%s scores the running task %v (%v), want its lease's end, now+30 s", lease, end, err)
	}
	if s := rdb.HGet(ctx, taskPrefix+"x", "state").Val(); s != "active" {
		t.Errorf("%sx state %q, want active", taskPrefix, s)
	}
	if n := rdb.LLen(ctx, pending).Val(); n != 0 {
		t.Errorf("%s holds %d, want none", pending, n)
	}
}

var testReclaim = store.ReclaimPolicy{Grace: 10 * time.Second, Most: 3, Remember: time.Hour}

// A task whose lease ran out (here set into the past, as when its worker died) is handed back
// to pending, where asynq finds it as any other: a worker runs it again. A task whose lease is
// live is never touched. A task reclaimed Most times is left to asynq's recoverer, reported
// once. Against a real asynq server, and both forms of the store (one server, Cluster).
func TestReclaimTasks(t *testing.T) {
	for _, form := range []string{"one server", "cluster"} {
		t.Run(form, func(t *testing.T) {
			ctx := context.Background()
			const queue = "deliveries-test"
			rdb, st := storeForm(t, form == "cluster")
			r := newAsynqRig(t, rdb, queue)
			for _, id := range []string{"dead", "live"} {
				if _, err := r.client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(queue), asynq.TaskID(id)); err != nil {
					t.Fatal(err)
				}
				r.running(t, id)
			}
			queues := []string{"engine", queue} // "engine" has no tasks: nothing to do there
			ended := func() time.Time { return rdb.Time(ctx).Val().Add(-15 * time.Second) }
			for round := 1; round <= testReclaim.Most; round++ {
				// Paused, the queue keeps the task pending until the checks are done.
				if err := r.ins.PauseQueue(queue); err != nil {
					t.Fatal(err)
				}
				got, err := st.ExpireLeaseAndReclaim(ctx, queue, "dead", ended(), queues, testReclaim)
				if err != nil {
					t.Fatal(err)
				}
				if want := []store.TaskRef{{Queue: queue, ID: "dead"}}; !slices.Equal(got.Requeued, want) || len(got.Left) != 0 {
					t.Fatalf("round %d: reclaimed %+v, want %v requeued", round, got, want)
				}
				if s := r.state(t, queue, "dead"); s != asynq.TaskStatePending {
					t.Errorf("round %d: the reclaimed task is %v, want pending", round, s)
				}
				if s := r.state(t, queue, "live"); s != asynq.TaskStateActive {
					t.Errorf("round %d: the task with a live lease is %v, want active", round, s)
				}
				active, err := r.ins.ListActiveTasks(queue)
				if err != nil {
					t.Fatal(err)
				}
				if len(active) != 1 || active[0].ID != "live" {
					t.Errorf("round %d: %d tasks active, want the live one alone", round, len(active))
				}
				if ttl := rdb.TTL(ctx, store.ReclaimsKey(queue, "dead")).Val(); ttl <= 0 || ttl > testReclaim.Remember {
					t.Errorf("round %d: the count of reclaims lives %v, want up to %v", round, ttl, testReclaim.Remember)
				}
				if err := r.ins.UnpauseQueue(queue); err != nil {
					t.Fatal(err)
				}
				r.running(t, "dead") // asynq runs it again
			}
			// Reclaimed Most times: from now on it is asynq's recoverer's (reported once).
			for _, want := range [][]store.TaskRef{{{Queue: queue, ID: "dead"}}, nil} {
				got, err := st.ExpireLeaseAndReclaim(ctx, queue, "dead", ended(), queues, testReclaim)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Requeued) != 0 || !slices.Equal(got.Left, want) {
					t.Errorf("reclaimed %+v, want none requeued and %v left", got, want)
				}
				if s := r.state(t, queue, "dead"); s != asynq.TaskStateActive {
					t.Errorf("the task left to asynq is %v, want still active", s)
				}
			}
			// A run of ReclaimTasks itself finds nothing more to do.
			if got, err := st.ReclaimTasks(ctx, queues, testReclaim); err != nil || len(got.Requeued)+len(got.Left) != 0 {
				t.Errorf("a last run reclaimed %+v (%v), want nothing", got, err)
			}
		})
	}
}

// The grace, by Redis's clock: a lease that ran out more than the grace ago is reclaimed, one
// that ran out less long ago or runs on is not, in every queue asked about and none other; a
// task in a lease set but not active (no asynq script leaves one so) is left alone. Both forms.
func TestReclaimTasksGrace(t *testing.T) {
	for _, form := range []string{"one server", "cluster"} {
		t.Run(form, func(t *testing.T) {
			ctx := context.Background()
			rdb, st := storeForm(t, form == "cluster")
			now := rdb.Time(ctx).Val()
			place := func(queue, id string, end time.Duration, active bool) {
				_, activeKey, leaseKey, prefix, _ := store.AsynqKeys(queue)
				if active {
					rdb.LPush(ctx, activeKey, id)
				}
				rdb.ZAdd(ctx, leaseKey, redis.Z{Score: float64(now.Add(end).Unix()), Member: id})
				rdb.HSet(ctx, prefix+id, "state", "active", "msg", "m")
			}
			place("a", "old", -12*time.Second, true)
			place("a", "recent", -5*time.Second, true)
			place("a", "live", 20*time.Second, true)
			place("a", "stray", -time.Minute, false)
			place("b", "old", -time.Minute, true)
			place("c", "old", -time.Minute, true) // not asked about
			got, err := st.ReclaimTasks(ctx, []string{"a", "b"}, testReclaim)
			if err != nil {
				t.Fatal(err)
			}
			if want := []store.TaskRef{{Queue: "a", ID: "old"}, {Queue: "b", ID: "old"}}; !slices.Equal(got.Requeued, want) || len(got.Left) != 0 {
				t.Fatalf("reclaimed %+v, want %v requeued", got, want)
			}
			for _, c := range []struct {
				queue, id, state string
				inLease          bool
			}{
				{"a", "old", "pending", false}, {"b", "old", "pending", false},
				{"a", "recent", "active", true}, {"a", "live", "active", true}, {"a", "stray", "active", true}, {"c", "old", "active", true},
			} {
				pendingKey, activeKey, leaseKey, prefix, _ := store.AsynqKeys(c.queue)
				if s := rdb.HGet(ctx, prefix+c.id, "state").Val(); s != c.state {
					t.Errorf("%s %s: state %q, want %q", c.queue, c.id, s, c.state)
				}
				inPending := slices.Contains(rdb.LRange(ctx, pendingKey, 0, -1).Val(), c.id)
				inActive := slices.Contains(rdb.LRange(ctx, activeKey, 0, -1).Val(), c.id)
				inLease := rdb.ZScore(ctx, leaseKey, c.id).Err() == nil
				if inLease != c.inLease || inPending != !c.inLease || inActive != (c.inLease && c.id != "stray") {
					t.Errorf("%s %s: pending %v, active %v, lease %v", c.queue, c.id, inPending, inActive, inLease)
				}
			}
		})
	}
}

// On a real Redis Cluster, queues on slots of their own: each queue's expired task is
// reclaimed, its count written beside it, and no command touches a key off its slot.
func TestReclaimTasksOnACluster(t *testing.T) {
	ctx := context.Background()
	rdb, st, slotErrs := newCluster(t)
	now := time.Now()
	queues := []string{"engine", "deliveries-webhook", "deliveries-email", "deliveries-paging"}
	for _, q := range queues {
		_, active, lease, prefix, _ := store.AsynqKeys(q)
		if err := rdb.LPush(ctx, active, "old").Err(); err != nil {
			t.Fatal(err)
		}
		rdb.ZAdd(ctx, lease, redis.Z{Score: float64(now.Add(-time.Minute).Unix()), Member: "old"})
		rdb.HSet(ctx, prefix+"old", "state", "active", "msg", "m")
	}
	got, err := st.ReclaimTasks(ctx, queues, testReclaim)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requeued) != len(queues) || len(got.Left) != 0 {
		t.Errorf("reclaimed %+v, want each queue's task requeued", got)
	}
	for _, q := range queues {
		pending, _, _, prefix, _ := store.AsynqKeys(q)
		if ids := rdb.LRange(ctx, pending, 0, -1).Val(); !slices.Equal(ids, []string{"old"}) || rdb.HGet(ctx, prefix+"old", "state").Val() != "pending" {
			t.Errorf("queue %s: pending %q, state %q", q, ids, rdb.HGet(ctx, prefix+"old", "state").Val())
		}
		if n := rdb.Exists(ctx, store.ReclaimsKey(q, "old")).Val(); n != 1 {
			t.Errorf("queue %s: the task's count of reclaims is missing", q)
		}
	}
	if errs := slotErrs.Errors(); len(errs) > 0 {
		t.Errorf("commands off their slot: %v", errs)
	}
}

// BenchmarkReclaimTasksIdle is a reclaimer's run when no worker died (every run but a few), on
// a worker's twelve queues (dispatch.DefaultQueues), each with a few live leases: the time,
// this process's CPU and redis-server's per run, on one server and as on a cluster.
//
//	go test ./store/ -run '^$' -bench ReclaimTasksIdle -count 5
func BenchmarkReclaimTasksIdle(b *testing.B) {
	queues := []string{"engine", "deliveries-alerting_a", "deliveries-alerting_b", "deliveries-chat_a", "deliveries-chat_b",
		"deliveries-chat_c", "deliveries-email", "deliveries-metrics_a", "deliveries-paging", "deliveries-people",
		"deliveries-sms", "deliveries-webhook"}
	benchForms(b, func(b *testing.B, rdb *redis.Client, st *store.Store) {
		ctx := context.Background()
		live := float64(time.Now().Add(30 * time.Second).Unix())
		for _, q := range queues {
			_, active, lease, _, _ := store.AsynqKeys(q)
			for _, id := range []string{"a", "b", "c"} {
				rdb.LPush(ctx, active, id)
				rdb.ZAdd(ctx, lease, redis.Z{Score: live, Member: id})
			}
		}
		report := cpuPerOp(b, rdb)
		b.ResetTimer()
		for b.Loop() {
			if got, err := st.ReclaimTasks(ctx, queues, testReclaim); err != nil || len(got.Requeued)+len(got.Left) > 0 {
				b.Fatal(got, err)
			}
		}
		b.StopTimer()
		report()
	})
}
