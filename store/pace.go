package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pacing per target: a token bucket per target of a kind, shared by every worker, that hands
// each delivery its slot, the time it may be sent at.
//
//	{pace:<kind>:<target hash>}  HASH t       -> the bucket's theoretical arrival time (unix ms, GCRA)
//	                                  p       -> the target is paused until (unix ms): a Retry-After
//	                                  d:<id>  -> the slot delivery <id> holds (unix ms)
//
// A target is named by a hash of what identifies it (an address, a key, a URL), never by the
// value itself: some are secrets. The hash expires once its bucket is full again and its slots
// are long past (paceKeep), so an idle target costs nothing.

// Pace is the rate of a kind's targets: one notice every Every, Burst at once after a quiet
// spell. A zero Every is no pacing.
type Pace struct {
	Every time.Duration
	Burst int
}

// Off says the pace paces nothing.
func (p Pace) Off() bool { return p.Every <= 0 }

// paceKeep is how long a bucket outlives its last slot: a delivery whose task runs late
// (a busy queue, a worker that died) still finds the slot it was given.
const paceKeep = 10 * time.Minute

// PaceKey names the bucket of the target of kind that identity names (its address, key or URL,
// with whatever else makes it one target). The identity is hashed: it may hold a secret.
func PaceKey(kind, identity string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + identity))
	return key("{pace:" + kind + ":" + hex.EncodeToString(sum[:12]) + "}")
}

// reservePace: the slot of delivery ARGV[4] at bucket KEYS[1] at ARGV[1] ms, with one notice
// every ARGV[2] ms and a burst of ARGV[3]. A delivery that holds a slot keeps it, unless the
// target was paused past it; otherwise it takes the bucket's next (GCRA: the theoretical
// arrival time, less the burst's tolerance, and never before a pause ends), and the bucket
// moves on by one notice. ARGV[5]: how long the hash outlives its last slot.
var reservePace = redis.NewScript(`
local now = tonumber(ARGV[1])
local every = tonumber(ARGV[2])
local tau = every * (tonumber(ARGV[3]) - 1)
local pause = tonumber(redis.call('HGET', KEYS[1], 'p') or '0')
local held = redis.call('HGET', KEYS[1], ARGV[4])
if held and tonumber(held) >= pause then return tonumber(held) end
local tat = math.max(tonumber(redis.call('HGET', KEYS[1], 't') or '0'), now, pause + tau)
local slot = math.max(now, tat - tau)
redis.call('HSET', KEYS[1], 't', tat + every, ARGV[4], slot)
redis.call('PEXPIRE', KEYS[1], tat + every - now + tonumber(ARGV[5]))
return slot
`)

// pausePace: bucket KEYS[1] takes nothing before ARGV[1] ms (a later pause stays); ARGV[2] ms
// from now is when that is. ARGV[3]: how long the hash outlives it.
var pausePace = redis.NewScript(`
local p = tonumber(redis.call('HGET', KEYS[1], 'p') or '0')
if tonumber(ARGV[1]) > p then redis.call('HSET', KEYS[1], 'p', ARGV[1]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) + tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
end
return 1
`)

// ReservePace is the time delivery id may be sent to the target of bucket key, paced by p: the
// slot it holds, else the bucket's next one (taken for it). It is never before now, nor before
// a pause of the target ends. Asking again returns the same slot until ReleasePace, unless the
// target was paused past it since.
func (s *Store) ReservePace(ctx context.Context, key, id string, p Pace, now time.Time) (time.Time, error) {
	burst := max(p.Burst, 1)
	ms, err := reservePace.Run(ctx, s.rdb, []string{key}, now.UnixMilli(), p.Every.Milliseconds(), burst,
		"d:"+id, paceKeep.Milliseconds()).Int64()
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}

// ReleasePace gives up the slot delivery id held at bucket key: it was tried (a later try
// takes a new one).
func (s *Store) ReleasePace(ctx context.Context, key, id string) error {
	return s.rdb.HDel(ctx, key, "d:"+id).Err()
}

// PausePace pauses the target of bucket key until until (its service asked to be left alone
// that long): no slot is given before then, and one given before that falls before it is
// given again after it.
func (s *Store) PausePace(ctx context.Context, key string, until, now time.Time) error {
	return pausePace.Run(ctx, s.rdb, []string{key}, until.UnixMilli(), max(until.Sub(now), 0).Milliseconds(),
		paceKeep.Milliseconds()).Err()
}
