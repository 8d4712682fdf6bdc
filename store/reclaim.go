package store

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reclaiming the tasks of dead workers. asynq (the task queue Herald's workers run) leases a
// task to the worker running it: the task's id is in the queue's active list and in its lease
// sorted set, scored by when the lease runs out (Unix seconds, by the worker's clock); a live
// worker extends its leases every 5 s to now+30 s. A task whose worker died stays active until
// asynq's recoverer hands it back, which it does only once the lease ran out 30 s ago, looking
// once a minute: 60–120 s after the worker died, hard-coded in asynq. ReclaimTasks does the
// same a few seconds after the lease ran out (dispatch's reclaimer calls it every few seconds).
//
// The keys of asynq's that it moves tasks between are named below, in this one place, as
// asynq writes them (asynqVersion; TestAsynqLayout fails when the asynq Herald is built with
// is another, or names them otherwise). Its own keys sit on the queue's slot, beside asynq's:
//
//	asynq:{<queue>}:pending           list: the queue's tasks ready to run (asynq's)
//	asynq:{<queue>}:active            list: the tasks workers run (asynq's)
//	asynq:{<queue>}:lease             sorted set: active tasks by lease end (asynq's)
//	asynq:{<queue>}:t:<id>            hash: a task; field state (asynq's)
//	herald:{<queue>}:reclaims:<id>    how often a task was reclaimed, for ReclaimPolicy.Remember

// asynqVersion is the asynq whose layout the names below mirror (internal/base/base.go, and
// the scripts of internal/rdb/rdb.go: dequeueCmd, requeueCmd).
const asynqVersion = "v0.26.0"

// asynqModule is asynq's module path, as a binary's build information names it.
const asynqModule = "github.com/hibiken/asynq"

// CheckAsynqVersion refuses a binary built with an asynq other than asynqVersion (its build
// information, runtime/debug.ReadBuildInfo): another version may name or use the keys
// ReclaimTasks moves tasks between otherwise, and the reclaimer would then break tasks
// silently. A worker calls it before it starts. A test binary carries no module versions and
// passes; TestAsynqLayout holds the tests to the version.
func CheckAsynqVersion() error {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return checkAsynqVersion(info.Deps)
}

// checkAsynqVersion is CheckAsynqVersion of a build with modules deps.
func checkAsynqVersion(deps []*debug.Module) error {
	if len(deps) == 0 {
		return nil
	}
	for _, d := range deps {
		if d.Path != asynqModule {
			continue
		}
		built := d.Path + " " + d.Version
		if r := d.Replace; r != nil {
			built = r.Path + " " + r.Version
			if r.Path == asynqModule && r.Version == asynqVersion {
				return nil
			}
		} else if d.Version == asynqVersion {
			return nil
		}
		return fmt.Errorf("built with %s, but the worker's reclaimer of dead workers' tasks was tested with %s %s only: "+
			"check store/reclaim.go against the new version (TestAsynqLayout) before building with it", strings.TrimSpace(built), asynqModule, asynqVersion)
	}
	return fmt.Errorf("built without %s: the worker's reclaimer was tested with %s only", asynqModule, asynqVersion)
}

// asynqQueue names the keys of one asynq queue.
type asynqQueue string

func (q asynqQueue) key(part string) string { return "asynq:{" + string(q) + "}:" + part }
func (q asynqQueue) pending() string        { return q.key("pending") }
func (q asynqQueue) active() string         { return q.key("active") }
func (q asynqQueue) lease() string          { return q.key("lease") }
func (q asynqQueue) taskPrefix() string     { return q.key("t:") }

// reclaimsPrefix is where ReclaimTasks counts a task's reclaims: Herald's key, on the queue's
// slot (the same hash tag as asynq's keys), so that one script reads and writes both on a
// Redis Cluster.
func (q asynqQueue) reclaimsPrefix() string { return key("{"+string(q)+"}", "reclaims", "") }

// reclaimLeased hands back to pending the active tasks whose lease ran out, for each queue:
// KEYS are each queue's lease, active and pending keys (three a queue), ARGV[1] the grace
// (whole seconds), ARGV[2] how many reclaims a task may have, ARGV[3] how long its count is
// kept after its last (seconds), ARGV[4] how many tasks a queue at most, then each queue's
// task key prefix and reclaims prefix (two a queue).
//
// "Now" is Redis's clock (TIME), not the caller's, so that the reclaiming worker's clock does
// not matter; the grace covers the clocks of the workers that wrote the leases. A lease is
// scored by its end in whole seconds, rounded down: one scored s ran out before s+1, so it ran
// out at least grace ago when s <= now - 1 - grace.
//
// A task is moved as asynq's requeueCmd moves one (LREM active, ZREM lease, RPUSH pending,
// state pending): RPUSH puts it at the head of the queue (asynq's workers take from the right),
// as it is late already. One that is in the lease set but not in the active list (no asynq
// script leaves one so) is left alone. A task reclaimed ARGV[2] times already (it may be what
// kills its workers) is left to asynq's recoverer, which counts each lease expiry as a failed
// try and archives the task after its retries: the first time it is left, its count goes one
// past ARGV[2], so that it is reported once.
//
// Returns, for each queue, the ids handed back and the ids left to asynq for the first time.
var reclaimLeased = redis.NewScript(`
local now = tonumber(redis.call('TIME')[1])
local upto = now - 1 - tonumber(ARGV[1])
local most, keep, limit = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {}
for q = 1, #KEYS / 3 do
  local lease, active, pending = KEYS[3*q-2], KEYS[3*q-1], KEYS[3*q]
  local tasks, reclaims = ARGV[3+2*q], ARGV[4+2*q]
  local back, left = {}, {}
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', lease, '-inf', upto, 'LIMIT', 0, limit)) do
    local count = reclaims .. id
    local n = tonumber(redis.call('GET', count) or '0')
    if n < most then
      if redis.call('LREM', active, 0, id) > 0 then
        redis.call('ZREM', lease, id)
        redis.call('RPUSH', pending, id)
        redis.call('HSET', tasks .. id, 'state', 'pending')
        redis.call('SET', count, n + 1, 'EX', keep)
        back[#back+1] = id
      end
    elseif n == most then
      redis.call('SET', count, n + 1, 'EX', keep)
      left[#left+1] = id
    end
  end
  out[q] = {back, left}
end
return out
`)

// reclaimLimit is how many tasks of a queue one run hands back at most, so that the script
// stays short; a worker runs 20 at once, and what a run leaves, the next takes.
const reclaimLimit = 200

// ReclaimPolicy is when ReclaimTasks hands a task back.
type ReclaimPolicy struct {
	// Grace is how long after its lease ran out (by Redis's clock) a task is handed back; it
	// is kept to whole seconds, rounded up.
	Grace time.Duration
	// Most is how many times a task is handed back; after that, asynq's recoverer deals with
	// it (a retry counted as failed, archived once its retries are spent).
	Most int
	// Remember is how long a task's count of reclaims is kept after its last (whole seconds,
	// at least one).
	Remember time.Duration
}

// TaskRef names an asynq task.
type TaskRef struct{ Queue, ID string }

// Reclaimed is what one ReclaimTasks run did.
type Reclaimed struct {
	Requeued []TaskRef // handed back to their queue's pending list
	Left     []TaskRef // reclaimed p.Most times already: left to asynq's recoverer (each reported once)
}

// ReclaimTasks hands back to pending the active tasks of queues whose lease ran out at least
// p.Grace ago (reclaimLeased): on one server in one script for every queue; on a Redis
// Cluster, where queues are on slots of their own, in one a queue.
func (s *Store) ReclaimTasks(ctx context.Context, queues []string, p ReclaimPolicy) (Reclaimed, error) {
	var r Reclaimed
	groups := [][]string{queues}
	if !s.oneNode {
		groups = groups[:0]
		for _, q := range queues {
			groups = append(groups, []string{q})
		}
	}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		keys, args := reclaimArgs(g, p)
		res, err := reclaimLeased.Run(ctx, s.rdb, keys, args...).Slice()
		if err != nil {
			return r, err
		}
		if err := r.add(g, res); err != nil {
			return r, err
		}
	}
	return r, nil
}

// reclaimArgs are reclaimLeased's keys and arguments for queues.
func reclaimArgs(queues []string, p ReclaimPolicy) ([]string, []any) {
	keys := make([]string, 0, 3*len(queues))
	args := []any{int64((p.Grace + time.Second - 1) / time.Second), p.Most, max(int64(p.Remember/time.Second), 1), reclaimLimit}
	for _, name := range queues {
		q := asynqQueue(name)
		keys = append(keys, q.lease(), q.active(), q.pending())
		args = append(args, q.taskPrefix(), q.reclaimsPrefix())
	}
	return keys, args
}

// add appends what reclaimLeased answered for queues.
func (r *Reclaimed) add(queues []string, res []any) error {
	if len(res) != len(queues) {
		return fmt.Errorf("store: reclaim answered for %d queues, not %d", len(res), len(queues))
	}
	for i, q := range res {
		lists, ok := q.([]any)
		if !ok || len(lists) != 2 {
			return fmt.Errorf("store: reclaim answered %v for queue %s", q, queues[i])
		}
		for j, to := range []*[]TaskRef{&r.Requeued, &r.Left} {
			ids, ok := lists[j].([]any)
			if !ok {
				return fmt.Errorf("store: reclaim answered %v for queue %s", q, queues[i])
			}
			for _, id := range ids {
				s, ok := id.(string)
				if !ok {
					return fmt.Errorf("store: reclaim answered task id %v for queue %s", id, queues[i])
				}
				*to = append(*to, TaskRef{Queue: queues[i], ID: s})
			}
		}
	}
	return nil
}
