package api_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// While workers are down a project's observations wait; past the backlog cap the API answers
// 503 with Retry-After (agents back off), and every batch it accepted still waits.
func TestObservationBacklogIsCapped(t *testing.T) {
	e, _, p := newProjectEnv(t)
	e.Store.LimitObservationBacklog(4 << 10)
	batch := []any{map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "h1"}}
	accepted := 0
	var r *response
	for range 1000 {
		if r = e.Owner.do("POST", "/groups/"+p+"/observations", batch); r.Status != 202 {
			break
		}
		accepted++
	}
	r.wantError(503, herald.CodeObservationBacklogFull)
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if accepted == 0 || accepted > 100 {
		t.Fatalf("%d batches accepted under a 4 KiB cap", accepted)
	}
	waiting, err := e.Store.PendingObservations(t.Context(), p, 10_000)
	if err != nil || len(waiting) != accepted {
		t.Errorf("%d batches wait, %d were accepted (%v)", len(waiting), accepted, err)
	}
	// Once evaluated batches leave, there is room again.
	lock, ok, err := e.Store.LockProject(t.Context(), p, time.Minute)
	if err != nil || !ok {
		t.Fatalf("lock the project: %v %v", ok, err)
	}
	for _, b := range waiting {
		if err := lock.DropObservation(t.Context(), p, b); err != nil {
			t.Fatal(err)
		}
	}
	e.Owner.do("POST", "/groups/"+p+"/observations", batch).wantStatus(202)
}
