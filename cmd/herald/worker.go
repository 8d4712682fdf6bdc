package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/dispatch"
)

// runWorker runs the alert engine and the senders on a real Redis until ctx ends, then hands
// unfinished tasks back to the queue.
func runWorker(ctx context.Context, args []string, out, errOut io.Writer) error {
	var c common
	var metricsListen string
	s := newSettings("worker", "the alert engine and the senders, as many as the load needs", out)
	c.bindBase(s)
	c.bindWorker(s, false)
	c.bindWorkerLinks(s)
	bindMetricsListen(s, &metricsListen, workerMetricsListen)
	if err := s.parse(args); err != nil {
		return err
	}
	roleGC(os.Getenv, workerGCPercent)
	rt, err := startRuntime(ctx, "worker", c, errOut)
	if err != nil {
		return err
	}
	defer rt.close()
	log, st, d := rt.log, rt.store, rt.queue
	// A worker's metrics are its own (deliveries, lateness): the installation's gauges come
	// from the API and the schedulers, not from every one of many workers.
	health := newHealthServer(metricsListen, st, processMetrics().Handler(), log)
	if err := health.Start(); err != nil {
		return err
	}
	defer health.Shutdown()
	w, err := startWorker(ctx, st, d, c, log)
	if err != nil {
		return err
	}
	log.Info("worker started", zap.Int("concurrency", c.Concurrency), zap.Duration("minute", c.Minute),
		zap.String("queuePriorities", c.QueuePriorities))
	<-ctx.Done()
	log.Info("shutting down: finishing tasks under way")
	w.Shutdown()
	return nil
}

// maxQueuePriority is the highest priority HERALD_QUEUE_PRIORITIES gives a queue: asynq picks a
// queue to take a task from by listing each queue as many times as its priority, anew at every
// try, so that engine=100000000 grew a worker by hundreds of MB a second. The defaults are 12
// and under.
const maxQueuePriority = 100

// queuePriorities reads HERALD_QUEUE_PRIORITIES, queue=priority pairs separated by commas, into
// the worker's queues: each pair replaces that queue's priority in dispatch.DefaultQueues(),
// the others keep theirs, and a priority of 0 leaves the queue to other workers (a pool that
// only pages, say). Empty: the defaults.
func queuePriorities(spec string) (map[string]int, error) {
	defaults := dispatch.DefaultQueues()
	if strings.TrimSpace(spec) == "" {
		return defaults, nil
	}
	queues := maps.Clone(defaults)
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(spec, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return nil, fmt.Errorf("HERALD_QUEUE_PRIORITIES: %q is not queue=priority", pair)
		}
		if _, known := defaults[name]; !known {
			return nil, fmt.Errorf("HERALD_QUEUE_PRIORITIES: no queue %q; the queues are %s", name,
				strings.Join(slices.Sorted(maps.Keys(defaults)), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("HERALD_QUEUE_PRIORITIES: queue %q given twice", name)
		}
		seen[name] = true
		p, err := strconv.Atoi(value)
		if err != nil || p < 0 || p > maxQueuePriority {
			return nil, fmt.Errorf("HERALD_QUEUE_PRIORITIES: the priority of %s must be a whole number from 0 to %d, not %q", name, maxQueuePriority, value)
		}
		if p == 0 {
			delete(queues, name)
		} else {
			queues[name] = p
		}
	}
	if len(queues) == 0 { // asynq would serve its own "default" queue instead: nothing of Herald's
		return nil, errors.New("HERALD_QUEUE_PRIORITIES leaves this worker no queue")
	}
	return queues, nil
}
