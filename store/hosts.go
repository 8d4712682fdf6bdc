package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// RegisterHosts records the hosts an observations request named and the disk partitions it
// reported for them, in one transaction on the project's slot. Hosts are indexed, and each
// host's partitions scored, by when they were last seen (the host's LastSeen), for
// PurgeHosts. A host this process wrote lately the same, last seen less than HostSeenPrecision
// before, is not written again: its lastSeen lags by less than the precision.
func (s *Store) RegisterHosts(ctx context.Context, groupID string, hs []herald.Host, disks map[string][]string) error {
	c := hosts(groupID)
	w := newWrites()
	seen := map[string]float64{}
	now := time.Now()
	var written []herald.Host
	for _, h := range hs {
		seen[h.ID] = score(h.LastSeen)
		if s.hosts.current(h, now) {
			continue
		}
		if err := w.setJSON(c.doc(h.ID), h); err != nil {
			return err
		}
		w.zAdd(c.index(), score(h.LastSeen), h.ID)
		written = append(written, h)
	}
	if len(written) == 0 && len(disks) == 0 {
		return nil
	}
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		w.queue(ctx, pipe)
		for hostID, names := range disks {
			members := make([]redis.Z, len(names))
			for i, n := range names {
				members[i] = redis.Z{Score: seen[hostID], Member: n}
			}
			pipe.ZAddArgs(ctx, disksSet(groupID, hostID), redis.ZAddArgs{GT: true, Members: members})
		}
		return nil
	})
	if err == nil {
		s.hosts.wrote(written, now)
	}
	return err
}

// PurgeHosts deletes up to limit hosts of project groupID last seen before cutoff, each with
// its partitions, and the partitions of the remaining hosts last reported before cutoff.
func (s *Store) PurgeHosts(ctx context.Context, groupID string, cutoff time.Time, limit int) (deleted int, more bool, err error) {
	c := hosts(groupID)
	deleted, more, err = purge(ctx, s, c, c.index(), cutoff, limit,
		func(h herald.Host) bool { return h.LastSeen.Before(cutoff) },
		func(pipe redis.Pipeliner, id string, _ *herald.Host) {
			pipe.ZRem(ctx, c.index(), id)
			pipe.Del(ctx, c.doc(id), disksSet(groupID, id), legacyDisksSet(groupID, id))
		})
	if err != nil {
		return deleted, more, err
	}
	hi := "(" + strconv.FormatInt(cutoff.Unix(), 10)
	for off := int64(0); ; off += purgePage {
		ids, err := s.rdb.ZRange(ctx, c.index(), off, off+purgePage-1).Result()
		if err != nil || len(ids) == 0 {
			return deleted, more, err
		}
		if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, id := range ids {
				pipe.ZRemRangeByScore(ctx, disksSet(groupID, id), "-inf", hi)
			}
			return nil
		}); err != nil {
			return deleted, more, err
		}
	}
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
	err := s.rdb.ZScore(ctx, disksSet(groupID, hostID), partition).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}
