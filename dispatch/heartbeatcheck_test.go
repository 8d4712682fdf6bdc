package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/dispatch/dispatchtest"
	"github.com/heraldhq/herald/internal/obsjson"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Two engines looking for missed heartbeats at once (every worker looks) mark each one missed
// once: one HEARTBEAT_MISSED observation per heartbeat. A due entry earlier than the
// heartbeat's own deadline (a ping whose entry was not moved) is never taken for a miss: the
// entry moves to the deadline.
func TestCheckHeartbeatsOnceAndNeverEarly(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	const minute = 100 * time.Millisecond
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := herald.NewID(now)
	const n = 60
	for i := range n {
		h := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "job" + string(rune('A'+i)), PeriodMin: 1, GraceMin: 1,
			Status: herald.HeartbeatUp, Created: herald.At(now), Since: now.Add(-time.Second), TokenHash: herald.NewID(now)}
		if err := st.CreateHeartbeat(ctx, h, now.Add(-time.Second), herald.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	// Its entry says due now, its last ping says in an hour.
	fresh := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "fresh", PeriodMin: 1, GraceMin: 1, Status: herald.HeartbeatUp,
		Created: herald.At(now), Since: now.Add(time.Hour), TokenHash: "fresh"}
	if err := st.CreateHeartbeat(ctx, fresh, now.Add(-time.Second), herald.Event{}); err != nil {
		t.Fatal(err)
	}
	engines := make([]*dispatch.Engine, 2)
	for i := range engines {
		d := dispatch.NewDispatcher(st, herald.SystemClock{})
		t.Cleanup(func() { d.Close() })
		engines[i] = dispatch.NewEngine(st, d, dispatchtest.EngineConfig(minute, zap.NewNop()))
	}
	var wg sync.WaitGroup
	counts := make([]int, len(engines))
	for i, e := range engines {
		wg.Go(func() {
			var err error
			if counts[i], err = e.CheckHeartbeats(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != n {
		t.Errorf("the engines marked %v missed, want %d in all", counts, n)
	}
	batches, err := st.PendingObservations(ctx, g, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, b := range batches {
		obs, err := obsjson.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			if o.EventTypeName != herald.EventTypeHeartbeatMissed || !*o.Active {
				t.Errorf("queued %+v", o)
			}
			seen[o.HeartbeatName]++
		}
	}
	if len(seen) != n || seen["fresh"] != 0 {
		t.Errorf("%d heartbeats have observations (fresh: %d), want %d", len(seen), seen["fresh"], n)
	}
	for name, c := range seen {
		if c != 1 {
			t.Errorf("%s: %d observations, want 1", name, c)
		}
	}
	due, err := st.HeartbeatDue(ctx, g, fresh.ID)
	if want := fresh.Since.Add(2 * minute); err != nil || !due.Equal(want.Truncate(time.Millisecond)) {
		t.Errorf("fresh is due %v (%v), want its own deadline %v", due, err, want)
	}
	if again, err := engines[0].CheckHeartbeats(ctx); err != nil || again != 0 {
		t.Errorf("a second look marked %d (%v)", again, err)
	}
}
