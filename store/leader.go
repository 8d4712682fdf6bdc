package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scheduler's leadership: several scheduler processes may run, one leads (does the
// periodic work) at a time, holding a lease it renews at each run.
//
//	{global}:scheduler-leader   the leader's token (a lease with a TTL)

func schedulerLeader() string { return key(globalTag, "scheduler-leader") }

// holdLease takes the lease KEYS[1] for token ARGV[1] for ARGV[2] ms when it is free, or
// renews it when token holds it already. Returns 1 when token holds it afterwards.
var holdLease = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// LeadScheduler takes or renews the scheduler's leadership for token, for ttl; it reports
// whether token leads.
func (s *Store) LeadScheduler(ctx context.Context, token string, ttl time.Duration) (bool, error) {
	n, err := holdLease.Run(ctx, s.rdb, []string{schedulerLeader()}, token, ttl.Milliseconds()).Int()
	return n == 1, err
}

// ResignScheduler gives the leadership up if token holds it, so that another scheduler takes
// over at once.
func (s *Store) ResignScheduler(ctx context.Context, token string) error {
	return releaseLock.Run(ctx, s.rdb, []string{schedulerLeader()}, token).Err()
}
