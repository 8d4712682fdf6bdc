package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// AuthLimits bounds failed authentications within Window. Failures are counted per client
// address, per name (key or user) and per (name, address) pair, in counters every API process
// shares. An address is refused once it failed PerAddress times, or PerPair times on one name.
// A name that failed PerName times (from anywhere) is refused only to addresses that failed on
// it themselves: a guesser spreading over addresses gets one try per address, and the name's
// own holder, elsewhere, is never locked out.
type AuthLimits struct {
	Window                       time.Duration
	PerPair, PerAddress, PerName int
}

// authFailTag keeps a request's three counters on one Cluster slot, for the scripts.
const authFailTag = "{authfail}"

func authFailKeys(name, address string) []string {
	h := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:16]) }
	return []string{
		key(authFailTag, "pair", h(name+"\x00"+address)),
		key(authFailTag, "addr", h(address)),
		key(authFailTag, "name", h(name)),
	}
}

// authRefusedFor answers how long (in ms) the pair is refused, 0 when it is not.
var authRefusedFor = redis.NewScript(`
local pair = tonumber(redis.call('GET', KEYS[1]) or '0')
local addr = tonumber(redis.call('GET', KEYS[2]) or '0')
local name = tonumber(redis.call('GET', KEYS[3]) or '0')
local wait = 0
local function until_reset(k)
  local ttl = redis.call('PTTL', k)
  if ttl > wait then wait = ttl end
end
if pair >= tonumber(ARGV[1]) then until_reset(KEYS[1]) end
if addr >= tonumber(ARGV[2]) then until_reset(KEYS[2]) end
if name >= tonumber(ARGV[3]) and pair > 0 then until_reset(KEYS[3]) end
return wait
`)

// recordAuthFailure counts one failure on each counter; a counter lives one window from its first.
var recordAuthFailure = redis.NewScript(`
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
return 1
`)

// AuthRefused reports how long authentications of name from address are refused (0: not).
func (s *Store) AuthRefused(ctx context.Context, name, address string, l AuthLimits) (time.Duration, error) {
	ms, err := authRefusedFor.Run(ctx, s.rdb, authFailKeys(name, address), l.PerPair, l.PerAddress, l.PerName).Int64()
	return time.Duration(ms) * time.Millisecond, err
}

// AuthFailed records a failed authentication of name from address.
func (s *Store) AuthFailed(ctx context.Context, name, address string, l AuthLimits) error {
	return recordAuthFailure.Run(ctx, s.rdb, authFailKeys(name, address), l.Window.Milliseconds()).Err()
}
