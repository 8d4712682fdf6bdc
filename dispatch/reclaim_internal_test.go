package dispatch

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// reclaimRuns is an Observer that keeps what the reclaimer's runs reported.
type reclaimRuns struct {
	nopObserver
	mu   sync.Mutex
	runs int
	errs []error
	ran  chan struct{} // one value per run, when there is room
}

func newReclaimRuns() *reclaimRuns { return &reclaimRuns{ran: make(chan struct{}, 1)} }

func (o *reclaimRuns) Reclaimed(requeued, left int, err error) {
	o.mu.Lock()
	o.runs++
	if err != nil {
		o.errs = append(o.errs, err)
	}
	o.mu.Unlock()
	select {
	case o.ran <- struct{}{}:
	default:
	}
}

// wait waits for a run reported after the call (or just before it).
func (o *reclaimRuns) wait(t *testing.T) {
	t.Helper()
	select {
	case <-o.ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the reclaimer did not run within 10 s")
	}
}

// The reclaimer starts with the worker, on the worker's queues, running at once, and stops
// with it: its goroutine has returned when Shutdown does.
func TestReclaimerStartsAndStopsWithWorker(t *testing.T) {
	st := store.New(storetest.Redis(t))
	obs := newReclaimRuns()
	e := NewEngine(st, NewDispatcher(st, herald.SystemClock{}), EngineConfig{Observer: obs})
	w := NewWorker(e, WorkerConfig{Concurrency: 2, Queues: map[string]int{QueueEngine: 2, "deliveries-webhook": 1}})
	if want := []string{"deliveries-webhook", QueueEngine}; !slices.Equal(w.reclaim.queues, want) {
		t.Errorf("the reclaimer looks at %v, want the worker's queues %v", w.reclaim.queues, want)
	}
	w.reclaim.interval = 10 * time.Millisecond
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	obs.wait(t)
	obs.wait(t) // and again, an interval later
	w.Shutdown()
	select {
	case <-w.reclaim.loop.stopped:
	default:
		t.Fatal("the reclaimer still runs after the worker's Shutdown")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.errs) > 0 {
		t.Errorf("runs failed: %v", obs.errs)
	}
}

// A worker that is shut down without having started (its Start failed) has no reclaimer to
// wait for.
func TestReclaimerNeverStarted(t *testing.T) {
	st := store.New(storetest.Redis(t))
	w := NewWorker(NewEngine(st, NewDispatcher(st, herald.SystemClock{}), EngineConfig{}), WorkerConfig{})
	w.Shutdown()
}

// A run that fails is reported to the Observer (the worker's metrics count it), not only
// logged; the reclaimer goes on and tries again.
func TestReclaimerReportsFailures(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	obs := newReclaimRuns()
	r := newReclaimer(store.New(rdb), map[string]int{QueueEngine: 1}, obs, zap.NewNop())
	r.interval = 10 * time.Millisecond
	r.start()
	obs.wait(t)
	obs.wait(t)
	r.shutdown()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.runs < 2 || len(obs.errs) != obs.runs {
		t.Errorf("%d runs, %d failures reported (%v), want every run's", obs.runs, len(obs.errs), obs.errs)
	}
}
