package dispatch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/dispatch/dispatchtest"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/dispatch"
)

// stall stops a worker's Redis commands, once armed, from the first pipeline that match
// picks until released: a process stopped at that point (SIGSTOP), its heartbeat with it.
// The pipeline it stopped at is sent once released, even though its caller gave up meanwhile:
// a stopped process that resumes sends what it was about to send before it looks at anything.
type stall struct {
	match   func(cmds []redis.Cmder) bool
	armed   atomic.Bool
	once    sync.Once
	stalled chan struct{} // closed when the stall began
	release chan struct{}
	ended   sync.Once
}

func newStall(match func(cmds []redis.Cmder) bool) *stall {
	return &stall{match: match, stalled: make(chan struct{}), release: make(chan struct{})}
}

func (s *stall) end() { s.ended.Do(func() { close(s.release) }) }

// hold waits while the stall lasts, beginning it if cmds are its pipeline; it says whether
// they are.
func (s *stall) hold(cmds []redis.Cmder) bool {
	first := false
	if s.armed.Load() && s.match(cmds) {
		s.once.Do(func() { first = true; close(s.stalled) })
	}
	select {
	case <-s.stalled:
		<-s.release
	default:
	}
	return first
}

func (s *stall) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *stall) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.hold([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (s *stall) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if s.hold(cmds) {
			ctx = context.WithoutCancel(ctx)
		}
		return next(ctx, cmds)
	}
}

// commitOf matches a transaction that writes alert documents of project groupID: the commit
// of an engine's step.
func commitOf(groupID string) func(cmds []redis.Cmder) bool {
	return func(cmds []redis.Cmder) bool {
		multi := false
		for _, c := range cmds {
			switch args := c.Args(); c.Name() {
			case "multi":
				multi = true
			case "mset":
				if k, _ := argAt(args, 1).(string); multi && strings.Contains(k, "{g:"+groupID+"}:alert:") {
					return true
				}
			}
		}
		return false
	}
}

// A worker that stalled between reading a batch's alerts and committing its step (a process
// stopped, its heartbeat with it) for longer than its lease, while another worker took the
// project over and evaluated the batch, commits nothing when it resumes: the condition has one
// alert, and its opening went out once.
func TestStalledWorkerCommitsNothingAfterATakeover(t *testing.T) {
	const lease = time.Second
	r := newRigWith(t, time.Minute, func(c *dispatch.EngineConfig) { c.Lease = lease })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	r.worker.Stop()

	// The worker that stalls, with Redis connections of its own.
	st := newStall(commitOf(r.project))
	stalledStore, d := r.ownStore(st)
	cfg := dispatchtest.EngineConfig(time.Minute, nil)
	cfg.Lease = lease
	st.armed.Store(true)
	w := dispatchtest.Start(t, stalledStore, d, cfg)
	t.Cleanup(w.Shutdown)
	t.Cleanup(st.end)

	r.observe(hostDown("h1", true))
	select {
	case <-st.stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker never committed the step")
	}
	// Its lease lapses; the other worker takes the project over (for the batch that waits, and
	// one more) and opens the alert.
	r.worker.Start()
	r.observe(hostDown("h2", true))
	r.recv.waitCount(t, 2, 15*time.Second)
	st.end()
	r.waitEngineIdle(20 * time.Second)
	// What the resumed worker would send follows its commit within moments.
	eventually(time.Second, func() bool { return len(r.recv.deliveries()) > 2 })

	var h1 []string
	for _, a := range r.alerts("") {
		if a["hostnameAndPort"] == "h1.example.com:27017" {
			h1 = append(h1, a["id"].(string)+" "+a["status"].(string))
		}
	}
	if len(h1) != 1 {
		t.Errorf("alerts of the condition: %q, want one", h1)
	}
	var opened []string
	for _, dl := range r.recv.deliveries() {
		if dl.Event == "alert.open" && dl.Alert["hostnameAndPort"] == "h1.example.com:27017" {
			opened = append(opened, dl.Idempotency)
		}
	}
	if len(opened) != 1 {
		t.Errorf("openings of the condition sent: %q, want one", opened)
	}
}

// A session whose lease renewals fail (Redis unreachable) stops, cutting its deliveries under
// way, before its lease can have lapsed in Redis: once it has, another session may take the
// project and send the same notices.
func TestSessionStopsBeforeItsLeaseLapses(t *testing.T) {
	const lease = 2 * time.Second
	r := newRigWith(t, time.Minute, func(c *dispatch.EngineConfig) { c.Lease = lease })
	var mu sync.Mutex
	var arrived, cut time.Time
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body) // read whole, the server sees the client go
		mu.Lock()
		arrived = time.Now()
		mu.Unlock()
		select {
		case <-req.Context().Done():
			mu.Lock()
			cut = time.Now()
			mu.Unlock()
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{"typeName": "WEBHOOK",
		"webhookUrl": slow.URL + "/hook", "delayMin": 0, "intervalMin": 100_000}}})
	r.waitEngineIdle(10 * time.Second)
	r.observe(hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return !arrived.IsZero() }) {
		t.Fatal("the opening never reached the target")
	}
	// From now on every renewal fails: EVALSHA sha 1 <lease> <token> <ttl>.
	r.faults.fail(1000, func(name string, args []any) bool {
		k, _ := argAt(args, 3).(string)
		return name == "evalsha" && len(args) == 6 && strings.HasSuffix(k, ":obs-lock")
	})
	failing := time.Now()
	if !eventually(5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return !cut.IsZero() }) {
		t.Fatal("the session never stopped")
	}
	mu.Lock()
	stopped := cut.Sub(failing)
	mu.Unlock()
	if stopped >= lease {
		t.Errorf("the session stopped %s after its renewals began to fail, want within the lease (%s)", stopped, lease)
	}
	t.Logf("stopped %s after the renewals began to fail", stopped.Round(time.Millisecond))
}

// An alert document the engine cannot decode, found as it saves that its opening was
// delivered (lastNotified), does not hold the project's lease for good: the session gives up
// the save after a lease, and the project's next observations are evaluated and their
// notices sent.
func TestUndecodableAlertDoesNotHoldTheProject(t *testing.T) {
	const lease = time.Second
	r := newRigWith(t, time.Minute, func(c *dispatch.EngineConfig) { c.Lease = lease })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	rdb := r.Store.Redis()
	r.recv.mu.Lock()
	r.recv.respond = func(n int, w http.ResponseWriter) {
		if n == 1 { // the alert's document is damaged as its opening arrives
			id := r.recv.deliveries()[0].Alert["id"].(string)
			if err := rdb.Set(context.Background(), "herald:{g:"+r.project+"}:alert:"+id, "{damaged", 0).Err(); err != nil {
				t.Error(err)
			}
		}
	}
	r.recv.mu.Unlock()
	r.observe(hostDown("h0", true))
	r.recv.waitCount(t, 1, 10*time.Second)
	hosts := []string{"h1", "h2", "h3", "h4", "h5"}
	for _, h := range hosts {
		r.observe(hostDown(h, true))
	}
	if !eventually(20*time.Second, func() bool {
		for _, h := range hosts {
			if !slices.ContainsFunc(r.recv.deliveries(), func(d delivery) bool {
				return d.Event == "alert.open" && d.Alert["hostnameAndPort"] == h+".example.com:27017"
			}) {
				return false
			}
		}
		return true
	}) {
		var got []string
		for _, d := range r.recv.deliveries() {
			got = append(got, d.Event+" "+d.Alert["hostnameAndPort"].(string))
		}
		t.Fatalf("openings sent: %q, want those of %v too", got, hosts)
	}
}
