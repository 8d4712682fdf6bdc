package dispatch_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// recorder is an Observer that remembers what it was told.
type recorder struct {
	mu           sync.Mutex
	attempts     []string // "KIND OUTCOME"
	durations    []time.Duration
	lateness     []time.Duration
	engineErrors []string
	paced        []string // kinds
	digested     []string // kinds
}

func (r *recorder) Delivery(kind, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, kind+" "+outcome)
	r.durations = append(r.durations, d)
}

func (r *recorder) Lateness(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lateness = append(r.lateness, d)
}

func (r *recorder) Reclaimed(int, int, error) {}

func (r *recorder) Digested(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.digested = append(r.digested, kind)
}

func (r *recorder) Paced(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paced = append(r.paced, kind)
}

func (r *recorder) EngineError(what string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range n {
		r.engineErrors = append(r.engineErrors, what)
	}
}

// errors is what EngineError was told so far, in order.
func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.engineErrors)
}

// attempted says whether Delivery was told of an attempt of kind with outcome.
func (r *recorder) attempted(kind, outcome string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.attempts, kind+" "+outcome)
}

// The engine tells its Observer of every delivery attempt, its kind and outcome and how long
// it took, and of how late each due step was claimed.
func TestObserverHearsAttemptsAndLateness(t *testing.T) {
	const minute = 40 * time.Millisecond // a repeat every 5 minutes: 200 ms
	rec := &recorder{}
	r := newRigWith(t, minute, func(c *dispatch.EngineConfig) { c.Observer = rec })
	r.recv.status = func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	r.observe(hostDown("h1", true))
	// The open notice (refused once, tried again at once), then a repeat, which comes due.
	r.recv.waitCount(t, 3, 10*time.Second)
	r.worker.Stop()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := []string{"WEBHOOK RETRYING", "WEBHOOK DELIVERED", "WEBHOOK DELIVERED"}
	if len(rec.attempts) < len(want) || fmt.Sprint(rec.attempts[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("attempts observed %v, want %v first", rec.attempts, want)
	}
	for i, d := range rec.durations {
		if d <= 0 || d > 5*time.Second {
			t.Errorf("attempt %d took %s", i, d)
		}
	}
	if len(rec.lateness) == 0 {
		t.Fatal("no due step observed")
	}
	for _, d := range rec.lateness {
		if d < 0 || d > late {
			t.Errorf("a due step claimed %s after its due time", d)
		}
	}
}

// A session's lease that could not be given back is counted (EngineError), and the project's
// work goes on once the lease lapses.
func TestLeaseNotReleasedIsCounted(t *testing.T) {
	rec := &recorder{}
	r := newRigWith(t, 100*time.Millisecond, func(c *dispatch.EngineConfig) { c.Observer = rec })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	// The release script: EVALSHA sha 1 <lease key> <token> (the renewal has a TTL more).
	r.faults.fail(1, func(name string, args []any) bool {
		k, _ := argAt(args, 3).(string)
		return name == "evalsha" && len(args) == 5 && strings.HasSuffix(k, ":obs-lock")
	})
	r.observe(hostDown("h1", true))
	r.recv.waitCount(t, 1, 5*time.Second)
	want := []string{dispatch.ErrLeaseRelease}
	if !eventually(5*time.Second, func() bool { return len(rec.errors()) == 1 }) || r.faults.injected() != 1 ||
		!slices.Equal(rec.errors(), want) {
		t.Fatalf("engine errors %v after %d injected failures, want %v", rec.errors(), r.faults.injected(), want)
	}
	r.observe(hostDown("h2", true)) // the lease still held: its session waits for it to lapse (2 s)
	r.recv.waitCount(t, 2, 10*time.Second)
}

// How a try of an opening went, when it could not be recorded (a store error), is counted
// (EngineError), and the notice is still delivered by its retry task.
func TestNoticeEndNotRecordedIsCounted(t *testing.T) {
	rec := &recorder{}
	r := newRigWith(t, 100*time.Millisecond, func(c *dispatch.EngineConfig) { c.Observer = rec })
	fixed := r.recv.failing(http.StatusServiceUnavailable) // the session's quick tries all fail
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.waitEngineIdle(10 * time.Second)
	// The failed opening's end: EVALSHA sha 1 <reach key> <target> <reached> <tried before> <delivery>,
	// not reached (BeginNotice has two keys).
	r.faults.fail(1, func(name string, args []any) bool {
		k, _ := argAt(args, 3).(string)
		return name == "evalsha" && len(args) == 8 && strings.Contains(k, ":reach:") && argAt(args, 5) == "0"
	})
	r.observe(hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { return r.faults.injected() == 1 }) {
		t.Fatal("the opening's end was never recorded")
	}
	fixed.Store(true)
	if !eventually(10*time.Second, func() bool { return rec.attempted("WEBHOOK", store.OutcomeDelivered) }) {
		t.Fatal("the opening was never delivered by its retry")
	}
	if want := []string{dispatch.ErrNoticeEnd}; !slices.Equal(rec.errors(), want) {
		t.Errorf("engine errors %v, want %v", rec.errors(), want)
	}
}

func argAt(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// A batch whose removal from the queue fails once (a store error after its step was
// committed) is not evaluated again: a batch that clears a condition and reports it again (a
// host that flapped between two reports) closes the open alert and opens a new one; evaluated
// a second time, it closed that new alert too (a resolution of an outage still going on) and
// opened a third.
func TestBatchNotDroppedIsNotEvaluatedTwice(t *testing.T) {
	r := newRig(t, 100*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 100_000)}})
	r.observe(hostDown("h1", true))
	first := r.onlyAlert("OPEN")["id"].(string)
	r.recv.waitCount(t, 1, 5*time.Second)
	r.waitEngineIdle(10 * time.Second)
	// The drop script: EVALSHA sha 3 <holder> <obs list> <obs bytes> <token> <batch>.
	r.faults.fail(1, func(name string, args []any) bool {
		k, _ := argAt(args, 4).(string)
		return name == "evalsha" && len(args) == 8 && strings.HasSuffix(k, ":obs")
	})
	r.observe(hostDown("h1", false), hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { return r.faults.injected() == 1 }) {
		t.Fatal("the batch's drop was never tried")
	}
	r.recv.waitCount(t, 3, 5*time.Second)
	r.waitEngineIdle(10 * time.Second)
	second := r.onlyAlert("OPEN")["id"].(string)
	if as := r.alerts(""); len(as) != 2 {
		t.Errorf("%d alerts, want 2 (the first closed, the second open): %v", len(as), as)
	}
	// A second evaluation's notices would follow within moments: none may come.
	eventually(time.Second, func() bool { return len(r.recv.deliveries()) > 3 })
	var got []string
	for _, d := range r.recv.deliveries() {
		got = append(got, d.Event+" "+d.Alert["id"].(string))
	}
	slices.Sort(got) // the two alerts' notices go out side by side
	want := []string{"alert.close " + first, "alert.open " + first, "alert.open " + second}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("notices %q, want %q", got, want)
	}
}
