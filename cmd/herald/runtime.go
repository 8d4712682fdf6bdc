package main

import (
	"context"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// runtime is what every role that works on a deployment's Redis starts from: its log, the
// store and the dispatcher on that Redis.
type runtime struct {
	log   *zap.Logger
	store *store.Store
	queue *dispatch.Dispatcher
	close func()
}

// startRuntime checks that role was given a Redis and connects to it.
func startRuntime(ctx context.Context, role string, c common, errOut io.Writer) (*runtime, error) {
	if !c.configured() {
		return nil, fmt.Errorf("herald %s needs a Redis: HERALD_REDIS_URL, HERALD_REDIS_SENTINELS with HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER (herald dev runs without one)", role)
	}
	log, err := newLogger(c.LogLevel, false, errOut)
	if err != nil {
		return nil, err
	}
	st, closeStore, err := openStore(ctx, c.redisSettings)
	if err != nil {
		_ = log.Sync()
		return nil, err
	}
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	return &runtime{log: log, store: st, queue: d, close: func() {
		_ = d.Close()
		closeStore()
		_ = log.Sync()
	}}, nil
}
