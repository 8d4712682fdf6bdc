package dispatch

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/store"
)

// reclaimer hands back to their queue, every reclaimInterval, the tasks of the worker's queues
// whose asynq lease ran out reclaimGrace ago (store.ReclaimTasks): those of a worker that died
// (SIGKILL, a crashed host) while running them. asynq's own recoverer does the same only once
// a lease ran out 30 s ago, looking once a minute (asynq v0.26, hard-coded): a retry task of a
// killed worker waited 60–120 s, this one waits reclaimGrace to reclaimGrace+reclaimInterval.
// It is asynq-style, started and shut down with the Worker that owns it.
//
// An expired lease means a dead or cut-off worker, never a slow one: a live worker's asynq
// heartbeat extends the leases of the tasks it runs every 5 s to now+30 s, and asynq's
// processor gives a task up once its lease has run out (the heartbeat that finds the lease
// expired cancels the handler's context, and asynq writes nothing of the task afterwards:
// processor.go, "If lease is not valid, do not write to redis; Let recoverer take care of
// it"). asynq's recoverer keeps running beside this one and finds nothing left: a task handed
// back is no longer in the lease set it lists; and should both take the same task at once,
// the second's script finds it gone from the active list and changes nothing (asynq's Retry
// answers NOT FOUND, which its recoverer logs and passes over).
type reclaimer struct {
	store    *store.Store
	queues   []string
	policy   store.ReclaimPolicy
	interval time.Duration
	observer Observer
	log      *zap.Logger

	loop *background // nil until started
}

const (
	// reclaimInterval is how often a worker looks for expired leases: one script a run on one
	// Redis server (one a queue on a Cluster), a small part of what an idle worker's polling of
	// asynq's queues costs (some 170 scripts a second).
	reclaimInterval = 5 * time.Second
	// reclaimGrace is how long after its end (by Redis's clock) an expired lease is taken.
	// Leases are written by the clocks of the workers holding them: a cut-off worker's
	// handler is cancelled only at its heartbeat's next beat after its own clock saw the lease
	// run out (up to 5 s), and the clocks of hosts differ; a task must not run in two places.
	// 10 s covers the beat and 5 s of skew.
	reclaimGrace = 10 * time.Second
	// reclaimMost is how many times a task is reclaimed before it is left to asynq's recoverer:
	// a task that kills every worker that runs it must not loop for ever, and asynq's recoverer
	// counts each expiry as a failed try and archives the task once its retries are spent.
	reclaimMost = 3
	// reclaimRemember is how long a task's count of reclaims is kept after its last: far
	// longer than the 40-odd seconds between reclaims of a task that kills its workers.
	reclaimRemember = time.Hour
)

func newReclaimer(st *store.Store, queues map[string]int, observer Observer, log *zap.Logger) *reclaimer {
	names := make([]string, 0, len(queues))
	for q := range queues {
		names = append(names, q)
	}
	slices.Sort(names)
	return &reclaimer{store: st, queues: names, interval: reclaimInterval, observer: observer, log: log,
		policy: store.ReclaimPolicy{Grace: reclaimGrace, Most: reclaimMost, Remember: reclaimRemember}}
}

// start runs the reclaimer in the background: a run at once (a worker restarted after a crash
// takes what is due already), then one every interval.
func (r *reclaimer) start() { r.loop = every(r.interval, r.run) }

// shutdown stops the reclaimer and waits for its run under way, if any (at most an interval).
func (r *reclaimer) shutdown() { r.loop.stop() }

// run reclaims once, and tells the observer and the log what it did or why it failed (the
// next run tries again).
func (r *reclaimer) run() {
	ctx, cancel := context.WithTimeout(context.Background(), r.interval)
	defer cancel()
	got, err := r.store.ReclaimTasks(ctx, r.queues, r.policy)
	r.observer.Reclaimed(len(got.Requeued), len(got.Left), err)
	for _, t := range got.Requeued {
		r.log.Warn("handed back a task whose worker's lease ran out (its worker died or was cut off)",
			zap.String("queue", t.Queue), zap.String("task", t.ID))
	}
	for _, t := range got.Left {
		r.log.Warn("a task whose worker's lease ran out again is left to asynq's recoverer, which counts it as a failed try",
			zap.String("queue", t.Queue), zap.String("task", t.ID), zap.Int("reclaims", r.policy.Most))
	}
	if err != nil {
		r.log.Warn("reclaiming the tasks of dead workers failed", zap.Error(err))
	}
}
