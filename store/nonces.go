package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// advanceNonce records a digest nonce count if it is higher than any seen for that nonce.
// KEYS[1] the nonce's count; ARGV[1] the count; ARGV[2] how long to remember it (ms).
var advanceNonce = redis.NewScript(`
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
	ok, err := advanceNonce.Run(ctx, n.s.rdb, []string{nonceCount(nonce)}, nc, ttl.Milliseconds()).Int()
	return ok == 1, err
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
