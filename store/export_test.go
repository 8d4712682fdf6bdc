package store

import (
	"context"
	"encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// RunShared runs cmds as CheckAuth runs its pipeline: in a round trip shared with the callers
// waiting at the same moment (sharedTrips), for the tests of that sharing.
func (s *Store) RunShared(ctx context.Context, cmds ...redis.Cmder) error {
	return s.shared.run(ctx, cmds)
}

// SharedWaiting is how many callers wait for the next shared round trip.
func (s *Store) SharedWaiting() int {
	s.shared.mu.Lock()
	defer s.shared.mu.Unlock()
	return len(s.shared.waiting)
}

// DropHosts deletes hosts of a project as PurgeHosts does once it has read them (read: id,
// document as stored, id, document...): each only if it is still as it was read.
func (s *Store) DropHosts(ctx context.Context, groupID string, read ...string) (int, error) {
	return s.dropHosts(ctx, groupID, read)
}

// AsCluster makes s read as it does on a Redis Cluster: no command spans slots (CheckAuth's
// MGETs apart), for the tests of both forms on one server.
func (s *Store) AsCluster() *Store {
	s.oneNode = false
	return s
}

// AlertDocBefore is the document of a at key as Herald wrote it before lastNotified's slot:
// the compact form in encoding/json's order of alertDoc (which appendAlertDoc wrote byte for
// byte), its lastNotified after "t", "u" and "r", or absent.
func AlertDocBefore(key string, a herald.Alert) ([]byte, error) {
	return json.Marshal(packAlertAt(key, &a))
}

// NonceCountKey is the key of nonce's count.
func NonceCountKey(nonce string) string { return nonceCount(nonce) }

// CheckRedisVersion is checkRedisVersion.
var CheckRedisVersion = checkRedisVersion

// VersionInInfo and VersionInHello read a server's version in its answers.
var VersionInInfo, VersionInHello = versionInInfo, versionInHello
