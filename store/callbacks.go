package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// callbackTag keeps the seen callbacks on one Cluster slot of their own.
const callbackTag = "{callback}"

// callbackSeen is the key that marks callback id of service as seen. The id is hashed: it is
// a request's signature, which is not kept as it came.
func callbackSeen(service, id string) string {
	sum := sha256.Sum256([]byte(service + "\x00" + id))
	return key(callbackTag, "seen", hex.EncodeToString(sum[:16]))
}

// FirstCallback records that a service's signed callback (service, e.g. "chat-b", and its
// signature as id) was taken, for ttl, and reports whether it is the first time: a replay of
// the same request within ttl gets false. The signing service's timestamp window bounds ttl.
func (s *Store) FirstCallback(ctx context.Context, service, id string, ttl time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, callbackSeen(service, id), "1", ttl).Result()
}
