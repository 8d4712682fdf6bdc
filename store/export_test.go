package store

import (
	"context"

	"github.com/redis/go-redis/v9"
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
