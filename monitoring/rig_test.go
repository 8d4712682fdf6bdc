package monitoring_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/monitoring"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// rig is Herald's API serving asynqmon, on a Redis of the test's own.
type rig struct {
	t     *testing.T
	URL   string // the API server, on 127.0.0.1
	store *store.Store
	rdb   *redis.Client
}

func newRig(t *testing.T, readOnly bool) *rig {
	t.Helper()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	srv := apitest.Serve(t, st, d, nil, api.Config{Monitoring: monitoring.New(st.Redis(), readOnly)})
	return &rig{t: t, URL: srv.URL, store: st, rdb: rdb}
}

// key creates an API key with roles and returns its public and private parts.
func (r *rig) key(orgID string, roles ...herald.Role) (public, private string) {
	r.t.Helper()
	public, private = herald.NewID(time.Now()), rand.Text()
	if err := r.store.CreateAPIKey(context.Background(), api.KeyFromPair("monitoring test", orgID, roles, public, private, time.Now()), nil); err != nil {
		r.t.Fatal(err)
	}
	return public, private
}

// client is an HTTP client that authenticates with a new key holding roles.
func (r *rig) client(orgID string, roles ...herald.Role) *http.Client {
	public, private := r.key(orgID, roles...)
	return &http.Client{Timeout: 10 * time.Second, Transport: &digest.Transport{Username: public, Password: private}}
}

// enqueue puts a task on queue, as Herald's engine does, and returns it.
func (r *rig) enqueue(queue string) *asynq.TaskInfo {
	r.t.Helper()
	c := asynq.NewClientFromRedisClient(r.rdb)
	info, err := c.Enqueue(asynq.NewTask("herald:monitoring-test", []byte(`{}`)), asynq.Queue(queue))
	if err != nil {
		r.t.Fatalf("enqueue on %s: %v", queue, err)
	}
	return info
}
