package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/redis/go-redis/v9"

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
	log, stopLog, err := newLogger(c.LogLevel, false, errOut)
	if err != nil {
		return nil, err
	}
	useRedisLog(log)
	stopProfile, err := startCPUProfile(c.CPUProfile)
	if err != nil {
		stopLog()
		return nil, err
	}
	st, closeStore, err := openStore(ctx, c.redisSettings)
	if err != nil {
		stopProfile()
		stopLog()
		return nil, err
	}
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	return &runtime{log: log, store: st, queue: d, close: func() {
		_ = d.Close()
		closeStore()
		stopProfile()
		stopLog()
	}}, nil
}

// startCPUProfile writes the process's CPU profile to path (nothing when it is empty) until
// the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("HERALD_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("HERALD_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// redisLog is where go-redis's own lines go (a pool's failed dials, a Sentinel's new master):
// to the role's log at debug, named redis. At the default level they stay out of the way of
// Herald's own message ("Redis at ... does not answer: ..."), which says the same once.
type redisLog struct{ log *zap.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...))
}

// useRedisLog sends go-redis's lines to log; nil drops them (before a role has a log).
func useRedisLog(log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	redis.SetLogger(redisLog{log.Named("redis")})
}
