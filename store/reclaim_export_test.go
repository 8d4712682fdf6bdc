package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// ExpireLeaseAndReclaim sets the lease of task id of queue to have ended at end, then runs
// ReclaimTasks's script on one server for queues, in one transaction: a worker holding the
// task extends its leases every 5 s, and must not come between.
func (s *Store) ExpireLeaseAndReclaim(ctx context.Context, queue, id string, end time.Time, queues []string, p ReclaimPolicy) (Reclaimed, error) {
	keys, args := reclaimArgs(queues, p)
	var cmd *redis.Cmd
	if _, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.ZAddXX(ctx, asynqQueue(queue).lease(), redis.Z{Score: float64(end.Unix()), Member: id})
		cmd = reclaimLeased.Eval(ctx, pipe, keys, args...)
		return nil
	}); err != nil {
		return Reclaimed{}, err
	}
	var r Reclaimed
	res, err := cmd.Slice()
	if err != nil {
		return r, err
	}
	return r, r.add(queues, res)
}

// AsynqKeys are the keys of queue that ReclaimTasks moves tasks between, and the asynq version
// they were checked against.
func AsynqKeys(queue string) (pending, active, lease, taskPrefix, version string) {
	q := asynqQueue(queue)
	return q.pending(), q.active(), q.lease(), q.taskPrefix(), asynqVersion
}

// ReclaimsKey is where ReclaimTasks counts the reclaims of task id of queue.
func ReclaimsKey(queue, id string) string { return asynqQueue(queue).reclaimsPrefix() + id }
