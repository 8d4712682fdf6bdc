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

// pausePace: bucket KEYS[1] takes nothing before ARGV[1] ms (a later pause stays), at ARGV[2]
// ms now. The line is given its slots again after the pause, in its order, one every ARGV[3]
// ms: first the refused delivery ARGV[4] ("" for none), then every other held slot, earliest
// first. The bucket's next slot comes after them (ARGV[5]: the burst's tolerance, in ms), so
// no later notice overtakes the line. ARGV[6]: how long the hash outlives its last slot.
var pausePace = redis.NewScript(`
local now, every, tau = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
local p = math.max(tonumber(redis.call('HGET', KEYS[1], 'p') or '0'), tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'p', p)
local line = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'd:' and all[i] ~= ARGV[4] then
    table.insert(line, {all[i], tonumber(all[i + 1])})
  end
end
table.sort(line, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[1] < b[1]) end)
if ARGV[4] ~= '' then table.insert(line, 1, {ARGV[4], 0}) end
local slot = p
for _, d in ipairs(line) do
  redis.call('HSET', KEYS[1], d[1], slot)
  slot = slot + every
end
redis.call('HSET', KEYS[1], 't', math.max(tonumber(redis.call('HGET', KEYS[1], 't') or '0'), slot + tau))
redis.call('PEXPIRE', KEYS[1], math.max(slot - now, 0) + tonumber(ARGV[6]))
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

// PausePace pauses the target of bucket key, paced by p, until until: its service refused
// delivery id (none: "") and asked to be left alone that long. No slot is given before then.
// The deliveries waiting keep their order after it: id first, at the pause's end, then each
// held slot in its order, one a pace's interval apart; later ones come after them all.
func (s *Store) PausePace(ctx context.Context, key, id string, p Pace, until, now time.Time) error {
	field := ""
	if id != "" {
		field = "d:" + id
	}
	tau := p.Every.Milliseconds() * int64(max(p.Burst, 1)-1)
	return pausePace.Run(ctx, s.rdb, []string{key}, until.UnixMilli(), now.UnixMilli(), p.Every.Milliseconds(),
		field, tau, paceKeep.Milliseconds()).Err()
}
