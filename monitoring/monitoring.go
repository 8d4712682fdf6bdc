package monitoring

import (
	"net/http"
	"strings"

	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/api"
)

// New returns asynqmon rooted at api.MonitoringPath, reading the queues through rdb. When
// readOnly, asynqmon answers 405 to every request that would change them (deleting, running
// or archiving tasks, pausing or deleting queues) and hides those buttons.
//
// The handler shares rdb and never closes it: it lives as long as the client's owner keeps it.
func New(rdb redis.UniversalClient, readOnly bool) http.Handler {
	return asynqmon.New(asynqmon.Options{
		RootPath:     strings.TrimSuffix(api.MonitoringPath, "/"),
		RedisConnOpt: sharedClient{rdb},
		ReadOnly:     readOnly,
	})
}

// sharedClient hands asynqmon the client Herald already has, whatever its topology (one
// node, Sentinel or Cluster), instead of a second configuration of the same Redis that could
// drift from the store's. asynqmon's Options take only an asynq.RedisConnOpt, whose one method
// makes the client asynq and asynqmon then use.
type sharedClient struct{ rdb redis.UniversalClient }

// MakeRedisClient returns the shared client, not a new one.
func (c sharedClient) MakeRedisClient() any { return c.rdb }
