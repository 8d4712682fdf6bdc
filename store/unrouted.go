package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// A project's Prometheus alerts that no alert configuration took (unrouted), kept until they
// end so that the front door lists them as Alertmanager lists every alert it holds:
//
//	{g:<id>}:unrouted        HASH target -> the alert (herald.UnroutedAlert, JSON)
//	{g:<id>}:unrouted-ends   ZSET target -> when it ends unless reported again (unix ms)
//
// The target is the alert's TargetID (targetField). Every write first drops what has ended,
// and a project keeps at most herald.MaxUnroutedAlerts: what ends leaves, and nothing grows
// without end.

func unroutedHash(groupID string) string { return key(groupTag(groupID), "unrouted") }
func unroutedEnds(groupID string) string { return key(groupTag(groupID), "unrouted-ends") }

// UnroutedChange is what a batch says of the unrouted alert of a target (a TargetID): firing,
// kept as Alert, or, with Alert nil, resolved (or taken by a configuration), forgotten.
type UnroutedChange struct {
	Target string
	Alert  *herald.UnroutedAlert
}

// unroutedPurge is how many ended alerts one write drops at most.
const unroutedPurge = 1000

// updateUnrouted applies changes, fenced (fenceCheck): KEYS[2] the hash, KEYS[3] the ends;
// ARGV[2] now (ms), ARGV[3] the cap, ARGV[4] how many ended ones to drop at most, then for each
// change its field, its end (ms; empty: forget it) and the alert. It drops what ended by now
// first, and answers how many new alerts were not kept (the cap was reached).
var updateUnrouted = fenced(`
local ended = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
for _, f in ipairs(ended) do
  redis.call('HDEL', KEYS[2], f)
  redis.call('ZREM', KEYS[3], f)
end
local refused = 0
local cap = tonumber(ARGV[3])
for j = 5, #ARGV - 2, 3 do
  local f = ARGV[j]
  if ARGV[j + 1] == '' then
    redis.call('HDEL', KEYS[2], f)
    redis.call('ZREM', KEYS[3], f)
  elseif redis.call('ZSCORE', KEYS[3], f) or redis.call('ZCARD', KEYS[3]) < cap then
    redis.call('HSET', KEYS[2], f, ARGV[j + 2])
    redis.call('ZADD', KEYS[3], ARGV[j + 1], f)
  else
    refused = refused + 1
  end
end
return refused
`)

// UpdateUnrouted applies changes to project groupID's unrouted alerts, in order, in one script;
// refused is how many firing alerts were not kept because the project holds
// herald.MaxUnroutedAlerts. Applying the same changes again changes nothing more. It is
// fenced: once another session took the project, it changes nothing and answers ErrLeaseLost.
func (l *ProjectLock) UpdateUnrouted(ctx context.Context, groupID string, changes []UnroutedChange, now time.Time) (refused int, err error) {
	if len(changes) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 3+3*len(changes))
	args = append(args, now.UnixMilli(), herald.MaxUnroutedAlerts, unroutedPurge)
	for _, c := range changes {
		if c.Alert == nil {
			args = append(args, targetField(c.Target), "", "")
			continue
		}
		b, err := json.Marshal(c.Alert)
		if err != nil {
			return 0, fmt.Errorf("store: encode unrouted alert: %w", err)
		}
		args = append(args, targetField(c.Target), strconv.FormatInt(c.Alert.EndsAt.UnixMilli(), 10), b)
	}
	n, err := l.runFenced(ctx, updateUnrouted, Scope{GroupID: groupID}, []string{unroutedHash(groupID), unroutedEnds(groupID)}, args...).Int()
	return n, leaseLost(err)
}

// UnroutedAlerts is up to limit of project groupID's unrouted alerts that have not ended by
// now, soonest to end first.
func (s *Store) UnroutedAlerts(ctx context.Context, groupID string, now time.Time, limit int) ([]herald.UnroutedAlert, error) {
	fields, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: unroutedEnds(groupID), ByScore: true,
		Start: "(" + strconv.FormatInt(now.UnixMilli(), 10), Stop: "+inf", Count: int64(limit)}).Result()
	if err != nil || len(fields) == 0 {
		return nil, err
	}
	docs, err := s.rdb.HMGet(ctx, unroutedHash(groupID), fields...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]herald.UnroutedAlert, 0, len(docs))
	for _, d := range docs {
		v, ok := d.(string)
		if !ok {
			continue // dropped between the two reads
		}
		var a herald.UnroutedAlert
		if err := json.Unmarshal([]byte(v), &a); err != nil {
			return nil, fmt.Errorf("store: decode unrouted alert of %s: %w", groupID, err)
		}
		out = append(out, a)
	}
	return out, nil
}
