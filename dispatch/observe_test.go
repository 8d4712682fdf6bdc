package dispatch_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/dispatch"
)

// recorder is an Observer that remembers what it was told.
type recorder struct {
	mu        sync.Mutex
	attempts  []string // "KIND OUTCOME"
	durations []time.Duration
	lateness  []time.Duration
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
	r.stopWorker()

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
