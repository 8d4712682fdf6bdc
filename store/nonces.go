package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// A nonce's count is kept in a sorted set of one member (nonceCountMember) whose score is the
// highest count seen. ZADD GT CH records a count only when it is higher than the score, and
// answers whether it did, atomically: the compare-and-record of the count in one native
// command, several times cheaper for Redis than a script. EXPIRE NX dates the count
// once, at its first use, for as long as its nonce can be answered (CountTTL, from the first
// use, so at least from the nonce's issue): NX is Redis 7.0's (RequireRedis checks it). A
// count is at most 8 hex digits (2^32), so its score, a float64, is exact.
const nonceCountMember = "nc"

// queueAdvance queues, on pipe, the recording of count nc of nonce (ZADD GT CH; answered 1
// when recorded, 0 when the count was not higher than one seen) and the dating of the count
// (EXPIRE NX, answered 1 the first time), as cmds (the caller's: it may hold them with other
// commands of its call, see checkCmds), whose result then says what came of it.
func queueAdvance(ctx context.Context, pipe redis.Pipeliner, cmds *advanceCmds, nonce string, nc uint64, ttl time.Duration) {
	cmds.key = nonceCount(nonce)
	cmds.score = float64(nc)
	cmds.seconds = int64((ttl + time.Second - 1) / time.Second) // whole seconds, rounded up
	// As go-redis's ZAddArgs (GT, Ch, one member) and ExpireNX write them
	// (TestAdvanceCmdsAsGoRedis), without their allocations: the key and the numbers go by
	// pointer, which go-redis writes as what they point to (and takes the key's slot from, on
	// a Cluster).
	cmds.zadd = [...]any{"zadd", &cmds.key, "gt", "ch", &cmds.score, nonceCountMember}
	cmds.expire = [...]any{"expire", &cmds.key, &cmds.seconds, "NX"}
	cmds.advanced = *redis.NewIntCmd(ctx, cmds.zadd[:]...)
	cmds.dated = *redis.NewBoolCmd(ctx, cmds.expire[:]...)
	_ = pipe.Process(ctx, &cmds.advanced) // a pipeline's Process only queues
	_ = pipe.Process(ctx, &cmds.dated)
}

// advanceCmds are queueAdvance's two commands and their arguments, in one allocation rather
// than the ten go-redis's ZAddArgs and ExpireNX make: they go on every authenticated request.
type advanceCmds struct {
	key      string  // the nonce's count
	score    float64 // the count
	seconds  int64   // how long it is kept, from its first use
	zadd     [6]any
	expire   [4]any
	advanced redis.IntCmd
	dated    redis.BoolCmd
}

// result is whether the count c queued was recorded, once its round trip is over. A count
// in the older layout, a string that API processes before this one kept (WRONGTYPE), is
// advanced in that layout (advanceStringCount), so that processes of both versions refuse a
// count either saw.
func (c *advanceCmds) result(ctx context.Context, rdb redis.Scripter) (bool, error) {
	n, err := c.advanced.Result()
	if err != nil && redis.HasErrorPrefix(err, "WRONGTYPE") {
		n, err = advanceStringCount.Run(ctx, rdb, []string{c.key}, uint64(c.score), c.seconds*1000).Int64()
		return n == 1, err
	}
	if err != nil {
		return false, err
	}
	if err := c.dated.Err(); err != nil {
		return false, err
	}
	return n == 1, nil
}

// advanceStringCount is how API processes before the sorted-set layout recorded a count (a
// string, set with a TTL at each use), still run for a count in that layout while processes
// of both versions serve: every such count is gone one CountTTL after the last older
// process stopped, and this script with it in a later release.
// KEYS[1] the nonce's count; ARGV[1] the count; ARGV[2] how long to remember it (ms).
var advanceStringCount = redis.NewScript(`
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
local nc = tonumber(ARGV[1])
if nc <= seen then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// NonceCounter remembers the highest digest nonce count per nonce for every API process.
type NonceCounter struct{ s *Store }

// NonceCounter returns the store's nonce counter.
func (s *Store) NonceCounter() NonceCounter { return NonceCounter{s} }

// Advance records nc for nonce if it is higher than any count seen, and reports whether it was.
func (n NonceCounter) Advance(ctx context.Context, nonce string, nc uint64, ttl time.Duration) (bool, error) {
	pipe, cmds := n.s.pipeline(), new(advanceCmds)
	queueAdvance(ctx, pipe, cmds, nonce, nc, ttl)
	if err := n.s.pipelinedOnce(ctx, pipe); err != nil && !redis.HasErrorPrefix(err, "WRONGTYPE") {
		return false, err
	}
	return cmds.result(ctx, n.s.rdb)
}

// NonceSecret returns the key that signs digest nonces, shared by every API process: made once
// and kept in Redis.
func (s *Store) NonceSecret(ctx context.Context) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := s.rdb.SetNX(ctx, nonceSecret(), hex.EncodeToString(b), 0).Err(); err != nil {
		return nil, err
	}
	v, err := s.rdb.Get(ctx, nonceSecret()).Result()
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(v)
}
