package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// The raw asynq measurement: its own task type and queue.
const (
	noopType  = "bench:noop"
	noopQueue = "noop"
	enqueuers = 8 // goroutines enqueueing the no-op tasks
)

// asynqCeiling is raw asynq throughput on rdb, the ceiling of a design that runs one task per
// delivery: n no-op tasks, all enqueued first, then run by a server with the settings and
// concurrency of Herald's worker. It returns tasks per second, from the server's start to the
// last task's end.
func asynqCeiling(ctx context.Context, rdb *redis.Client, n, concurrency int) (float64, error) {
	if err := enqueueNoops(ctx, rdb, n); err != nil {
		return 0, fmt.Errorf("enqueue no-op tasks: %w", err)
	}
	var ran atomic.Int64
	allRan := make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc(noopType, func(context.Context, *asynq.Task) error {
		if ran.Add(1) == int64(n) {
			close(allRan)
		}
		return nil
	})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: concurrency,
		Queues:      map[string]int{noopQueue: 1},
		// Polled twice as often as dispatch.NewWorker's queues (100 ms, 500 ms): with every
		// task queued before it starts, polling only shortens the ceiling's idle start.
		DelayedTaskCheckInterval: 100 * time.Millisecond,
		TaskCheckInterval:        50 * time.Millisecond,
		LogLevel:                 asynq.WarnLevel,
	})
	start := time.Now()
	if err := srv.Start(mux); err != nil {
		return 0, err
	}
	defer srv.Shutdown()
	within := patience(n)
	select {
	case <-allRan:
		return float64(n) / time.Since(start).Seconds(), nil
	case <-time.After(within):
		return 0, fmt.Errorf("asynq ran %d of %d no-op tasks in %s", ran.Load(), n, within)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// enqueueNoops enqueues n no-op tasks from several goroutines at once.
func enqueueNoops(ctx context.Context, rdb *redis.Client, n int) error {
	client := asynq.NewClientFromRedisClient(rdb)
	errs := make([]error, enqueuers)
	var wg sync.WaitGroup
	for w := range enqueuers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += enqueuers {
				_, errs[w] = client.EnqueueContext(ctx, asynq.NewTask(noopType, nil), asynq.Queue(noopQueue))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
