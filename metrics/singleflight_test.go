package metrics_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/metrics"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// commands counts the Redis commands (a pipeline counts its commands) sent through a client.
type commands struct{ n atomic.Int64 }

func (h *commands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(int64(len(cmds))); return next(ctx, cmds) }
}

// /metrics needs no credentials: N concurrent scrapes cost Redis what one does (one reading,
// shared), and so do scrapes within MaxAge; after MaxAge the next scrape reads anew.
func TestClusterGaugesAreReadOncePerMaxAge(t *testing.T) {
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	hook := &commands{}
	rdb.AddHook(hook)
	queues := []string{dispatch.QueueEngine, dispatch.DeliveryQueue("WEBHOOK")}
	m := metrics.New()
	cost := func(c *metrics.Cluster, scrapes int) int64 {
		srv := httptest.NewServer(m.Handler(c))
		defer srv.Close()
		before := hook.n.Load()
		var wg sync.WaitGroup
		for range scrapes {
			wg.Go(func() { scrapeURL(t, srv.URL) })
		}
		wg.Wait()
		return hook.n.Load() - before
	}
	cost(metrics.NewCluster(st, queues, zap.NewNop()), 1) // loads asynq's scripts
	one := cost(metrics.NewCluster(st, queues, zap.NewNop()), 1)
	if one == 0 {
		t.Fatal("a scrape read nothing from Redis")
	}
	c := metrics.NewCluster(st, queues, zap.NewNop())
	if many := cost(c, 20); many != one {
		t.Errorf("20 concurrent scrapes sent %d Redis commands, one scrape %d", many, one)
	}
	if again := cost(c, 5); again != 0 {
		t.Errorf("scrapes within MaxAge sent %d Redis commands, want 0", again)
	}

	// After MaxAge the gauges follow Redis again.
	fresh := metrics.NewCluster(st, queues, zap.NewNop())
	fresh.MaxAge = 100 * time.Millisecond
	srv := httptest.NewServer(m.Handler(fresh))
	defer srv.Close()
	scrapeURL(t, srv.URL).want(t, "herald_open_alerts", map[string]string{"scope": "global", "status": "open"}, 0)
	now := time.Now()
	a := herald.Alert{ID: herald.NewID(now), GroupID: groupID, AlertConfigID: "5f00000000000000000000c0",
		EventTypeName: "HOST_DOWN", Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
	if err := st.SaveAlert(context.Background(), a, true, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(fresh.MaxAge)
	scrapeURL(t, srv.URL).want(t, "herald_open_alerts", map[string]string{"scope": "global", "status": "open"}, 1)
}
