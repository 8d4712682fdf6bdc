package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// RegisterHosts records the hosts an observations request named and the disk partitions it
// reported for them, in one transaction on the project's slot.
func (s *Store) RegisterHosts(ctx context.Context, groupID string, hs []herald.Host, disks map[string][]string) error {
	c := hosts(groupID)
	w := newWrites()
	for _, h := range hs {
		if err := w.setJSON(c.doc(h.ID), h); err != nil {
			return err
		}
		w.zAdd(c.index(), score(h.LastSeen), h.ID)
	}
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		w.queue(ctx, pipe)
		for hostID, names := range disks {
			members := make([]any, len(names))
			for i, n := range names {
				members[i] = n
			}
			pipe.SAdd(ctx, disksSet(groupID, hostID), members...)
		}
		return nil
	})
	return err
}

// Host reads a host of a project. An id no host can have is not looked up: it could name
// another key of the project ("h:disks" is host h's partitions).
func (s *Store) Host(ctx context.Context, groupID, hostID string) (herald.Host, error) {
	var h herald.Host
	notFound := herald.NotFound(herald.CodeHostNotFound, "host", hostID)
	if !herald.ValidHostID(hostID) {
		return h, notFound
	}
	return h, get(ctx, s.rdb, hosts(groupID).doc(hostID), &h, notFound)
}

// HasDisk reports whether a host of a project reported a disk partition of that name.
func (s *Store) HasDisk(ctx context.Context, groupID, hostID, partition string) (bool, error) {
	return s.rdb.SIsMember(ctx, disksSet(groupID, hostID), partition).Result()
}
