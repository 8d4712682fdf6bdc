package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
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

// authFailTag keeps a request's three counters on one Cluster slot, for one MGET and the script.
const authFailTag = "{authfail}"

// authFailKeys are the counters of name from address: the pair's, the address's, the name's.
func authFailKeys(name, address string) []string {
	h := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:16]) }
	return []string{
		key(authFailTag, "pair", h(name+"\x00"+address)),
		key(authFailTag, "addr", h(address)),
		key(authFailTag, "name", h(name)),
	}
}

// overLimits says which of the counters of authFailKeys, at counts, refuse: the pair's and the
// address's at their limits, the name's at its limit only for an address that failed on it.
func overLimits(counts [3]int64, l AuthLimits) [3]bool {
	return [3]bool{counts[0] >= int64(l.PerPair), counts[1] >= int64(l.PerAddress), counts[2] >= int64(l.PerName) && counts[0] > 0}
}

// failCounts reads the counters of authFailKeys from what their MGET answered (a missing one
// counts 0).
func failCounts(vals []any) ([3]int64, error) {
	var counts [3]int64
	var err error
	if len(vals) != len(counts) {
		return counts, fmt.Errorf("store: %d failed-authentication counters read, not %d", len(vals), len(counts))
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		s, _ := v.(string)
		if counts[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return counts, fmt.Errorf("store: failed-authentication counter %q: %w", s, err)
		}
	}
	return counts, nil
}

// refusedFor is how long the counters at keys (read as counts) refuse: until the last of those
// over their limits resets. It asks Redis only when one is over (a throttled request).
func (s *Store) refusedFor(ctx context.Context, keys []string, counts [3]int64, l AuthLimits) (time.Duration, error) {
	over := overLimits(counts, l)
	if over == [3]bool{} { // every authentication checks: nothing to make then
		return 0, nil
	}
	pipe := s.rdb.Pipeline()
	var ttls []*redis.DurationCmd
	for i, k := range keys {
		if over[i] {
			ttls = append(ttls, pipe.PTTL(ctx, k))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	var wait time.Duration
	for _, t := range ttls {
		wait = max(wait, t.Val()) // a counter gone since (-2) or without expiry (-1) refuses nothing
	}
	return wait, nil
}

// recordAuthFailure counts one failure on each counter; a counter lives one window from its first.
var recordAuthFailure = redis.NewScript(`
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
return 1
`)

// AuthRefused reports how long authentications of name from address are refused (0: not).
func (s *Store) AuthRefused(ctx context.Context, name, address string, l AuthLimits) (time.Duration, error) {
	keys := authFailKeys(name, address)
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return 0, err
	}
	counts, err := failCounts(vals)
	if err != nil {
		return 0, err
	}
	return s.refusedFor(ctx, keys, counts, l)
}

// AuthFailed records a failed authentication of name from address.
func (s *Store) AuthFailed(ctx context.Context, name, address string, l AuthLimits) error {
	return recordAuthFailure.Run(ctx, s.rdb, authFailKeys(name, address), l.Window.Milliseconds()).Err()
}
