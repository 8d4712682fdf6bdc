package dispatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/dispatch"
)

// shiftedClock is the wall clock moved forward by a shift the test sets.
type shiftedClock struct{ by atomic.Int64 }

func (c *shiftedClock) Now() time.Time         { return time.Now().Add(time.Duration(c.by.Load())) }
func (c *shiftedClock) shift(by time.Duration) { c.by.Store(int64(by)) }

// onDropObservation calls fn once, after the first observation batch an engine evaluated left
// its queue (the engine's drop script, whose second key is the project's observation list).
type onDropObservation struct {
	once sync.Once
	fn   func()
}

func (h *onDropObservation) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *onDropObservation) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if n := cmd.Name(); err == nil && (n == "evalsha" || n == "eval") && len(args) > 4 {
			if k, _ := args[4].(string); strings.HasSuffix(k, ":obs") {
				h.once.Do(h.fn)
			}
		}
		return err
	}
}

func (h *onDropObservation) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// dueOrderRig has alert h0 open with its first notice an hour away (HOST_DOWN, delayMin 60),
// and three observation batches, each opening a NO_PRIMARY alert notified at once (rs0, rs1,
// rs2), waiting for a worker that is stopped. The engine's clock is clock.
func dueOrderRig(t *testing.T) (*rig, *shiftedClock) {
	clock := &shiftedClock{}
	r := newRigWith(t, time.Minute, func(c *dispatch.EngineConfig) { c.Clock = clock })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(60, 100_000)}})
	r.config(map[string]any{"eventTypeName": "NO_PRIMARY", "notifications": []any{r.webhook(0, 100_000)}})
	r.observe(hostDown("h0", true))
	r.onlyAlert("TRACKING") // its notice waits for its delay
	r.worker.Stop()
	for i := range 3 {
		r.observe(map[string]any{"eventTypeName": "NO_PRIMARY", "active": true, "replicaSetName": fmt.Sprintf("rs%d", i)})
	}
	return r, clock
}

// subjects are the hosts and replica sets the deliveries were about, in the order they came.
func subjects(ds []delivery) string {
	var out []string
	for _, d := range ds {
		s, _ := d.Alert["hostnameAndPort"].(string)
		if rs, ok := d.Alert["replicaSetName"].(string); ok && rs != "" {
			s = rs
		}
		out = append(out, strings.TrimSuffix(s, ".example.com:27017"))
	}
	return strings.Join(out, " ")
}

// A notice that is due when a session starts goes before the observation batches waiting
// then: its time has come, and a run of batches takes a while to evaluate.
func TestDueGoesBeforeWaitingBatches(t *testing.T) {
	r, clock := dueOrderRig(t)
	clock.shift(2 * time.Hour) // h0's first notice is due
	r.worker.Start()
	if got := subjects(r.recv.waitCount(t, 4, 10*time.Second)); got != "h0 rs0 rs1 rs2" {
		t.Errorf("deliveries about %s, want h0 first", got)
	}
}

// A notice that comes due while a session evaluates a run of waiting batches goes out after
// the batch under way, not after the run.
func TestDueGoesBetweenWaitingBatches(t *testing.T) {
	r, clock := dueOrderRig(t)
	r.Store.Redis().AddHook(&onDropObservation{fn: func() { clock.shift(2 * time.Hour) }})
	r.worker.Start()
	if got := subjects(r.recv.waitCount(t, 4, 10*time.Second)); got != "rs0 h0 rs1 rs2" {
		t.Errorf("deliveries about %s, want h0 after the first batch", got)
	}
}

// slowLock delays each take of a project's lease, as a loaded Redis or machine does.
type slowLock struct{ by time.Duration }

func (h slowLock) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h slowLock) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// The take of the lease: EVALSHA sha 2 <lease> <holder> <token> <ttl>.
		if args := cmd.Args(); cmd.Name() == "evalsha" && len(args) == 7 {
			if k, _ := args[3].(string); strings.HasSuffix(k, ":obs-lock") {
				time.Sleep(h.by)
			}
		}
		return next(ctx, cmd)
	}
}

func (h slowLock) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// latenessObserver keeps the claim lateness the engine reports.
type latenessObserver struct {
	mu   sync.Mutex
	late []time.Duration
}

func (o *latenessObserver) Delivery(string, string, time.Duration) {}
func (o *latenessObserver) Reclaimed(int, int, error)              {}
func (o *latenessObserver) EngineError(string, int)                {}
func (o *latenessObserver) Paced(string)                           {}
func (o *latenessObserver) Digested(string)                        {}
func (o *latenessObserver) Lateness(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.late = append(o.late, d)
}

// A session for an alert coming due starts a little before its due time, so that starting it
// (the lease, the configurations' version, the outbox) does not make the alert late: with
// each take of the lease slowed by 30 ms, the alert is still claimed within that (a session
// started at the due time would be that late). The set-up's tasks (a configuration changed
// each) are done first: their sessions, waiting their turns at the lease, would otherwise
// happen to hold it at the due time, and the alert be claimed in time without the lead.
func TestDueSessionStartsBeforeDueTime(t *testing.T) {
	obs := &latenessObserver{}
	r := newRigWith(t, 100*time.Millisecond, func(c *dispatch.EngineConfig) { c.Observer = obs })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(5, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	const slow = 30 * time.Millisecond
	r.Store.Redis().AddHook(slowLock{by: slow})
	r.observe(hostDown("h1", true))
	r.recv.waitCount(t, 1, 5*time.Second)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	t.Logf("late %v", obs.late)
	if len(obs.late) != 1 || obs.late[0] < 0 || obs.late[0] >= slow {
		t.Errorf("claimed %v after the due time, want one claim within %s", obs.late, slow)
	}
}
