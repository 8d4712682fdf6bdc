package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// A project's hosts are the fields of one hash (hostsHash): the field is the host's id, the
// value its hostDoc, last seen included. A key of its own for each host, indexed in a sorted
// set by lastSeen, cost Redis some 370 bytes a host, and every host an alert storm reports is
// a new one; a hash field costs about a third of that. PurgeHosts finds the hosts last seen
// before its cutoff by scanning the hash, as it walked every host for their partitions anyway.
//
// Hosts written before, at keys of their own (hosts(groupID).doc) listed in the sorted set
// hosts(groupID).index(), are still read and purged there; each moves into the hash the next
// time it is reported.

// hostsHash is a project's hosts: host id → hostDoc.
func hostsHash(groupID string) string { return key(groupTag(groupID), "hostdocs") }

// hostDoc is a host as stored in its project's hash, which names its project, under its id.
// Every other field of herald.Host has one here (a test checks).
type hostDoc struct {
	HostnameAndPort string `json:"hp,omitempty"`
	TypeName        string `json:"t,omitempty"`
	ReplicaSetName  string `json:"rs,omitempty"`
	LastSeen        *int64 `json:"s,omitempty"`
}

func encodeHost(h herald.Host) ([]byte, error) {
	return json.Marshal(hostDoc{HostnameAndPort: h.HostnameAndPort, TypeName: h.TypeName, ReplicaSetName: h.ReplicaSetName,
		LastSeen: packTime(h.LastSeen)})
}

func decodeHost(groupID, hostID string, b []byte) (herald.Host, error) {
	var d hostDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return herald.Host{}, fmt.Errorf("store: decode host %s of %s: %w", hostID, groupID, err)
	}
	return herald.Host{ID: hostID, GroupID: groupID, HostnameAndPort: d.HostnameAndPort, TypeName: d.TypeName,
		ReplicaSetName: d.ReplicaSetName, LastSeen: unpackTime(d.LastSeen)}, nil
}

// RegisterHosts records the hosts an observations request named and the disk partitions it
// reported for them, in one transaction on the project's slot. Each host's partitions are
// scored by when they were last seen (the host's LastSeen), for PurgeHosts. A host this
// process wrote lately the same, last seen less than HostSeenPrecision before, is not written
// again: its lastSeen lags by less than the precision. A host written goes into the hash and
// leaves the old layout, if it was there.
func (s *Store) RegisterHosts(ctx context.Context, groupID string, hs []herald.Host, disks map[string][]string) error {
	c := hosts(groupID)
	seen := map[string]float64{}
	now := time.Now()
	var written []herald.Host
	var fields, oldDocs, oldMembers []any
	for _, h := range hs {
		seen[h.ID] = score(h.LastSeen)
		if s.hosts.current(h, now) {
			continue
		}
		b, err := encodeHost(h)
		if err != nil {
			return fmt.Errorf("store: encode host %s: %w", h.ID, err)
		}
		fields = append(fields, h.ID, b)
		oldDocs = append(oldDocs, c.doc(h.ID))
		oldMembers = append(oldMembers, h.ID)
		written = append(written, h)
	}
	if len(written) == 0 && len(disks) == 0 {
		return nil
	}
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if len(written) > 0 {
			pipe.HSet(ctx, hostsHash(groupID), fields...)
			pipe.Do(ctx, append([]any{"DEL"}, oldDocs...)...)
			pipe.ZRem(ctx, c.index(), oldMembers...)
		}
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

// hostScanPage is how many fields one HSCAN of PurgeHosts asks for.
const hostScanPage = 500

// PurgeHosts deletes up to limit hosts of project groupID last seen before cutoff, each with
// its partitions, and the partitions of the remaining hosts last reported before cutoff.
// Hosts of the old layout go first, then the hash is scanned once. more reports that it
// stopped deleting at limit: there may be more.
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
	trim := func(ids []string) error {
		_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, id := range ids {
				pipe.ZRemRangeByScore(ctx, disksSet(groupID, id), "-inf", hi)
			}
			return nil
		})
		return err
	}
	for off := int64(0); ; off += purgePage {
		ids, err := s.rdb.ZRange(ctx, c.index(), off, off+purgePage-1).Result()
		if err != nil {
			return deleted, more, err
		}
		if len(ids) == 0 {
			break
		}
		if err := trim(ids); err != nil {
			return deleted, more, err
		}
	}
	hash := hostsHash(groupID)
	for cursor := uint64(0); ; {
		kv, next, err := s.rdb.HScan(ctx, hash, cursor, "*", hostScanPage).Result()
		if err != nil {
			return deleted, more, err
		}
		var kept, expired []string // ids; expired: id, document, id, document...
		for i := 0; i+1 < len(kv); i += 2 {
			id, doc := kv[i], kv[i+1]
			if deleted+len(expired)/2 >= limit { // the rest only for their partitions
				more = true
				kept = append(kept, id)
				continue
			}
			h, err := decodeHost(groupID, id, []byte(doc))
			if err != nil || !h.LastSeen.Before(cutoff) {
				kept = append(kept, id)
				continue
			}
			expired = append(expired, id, doc)
		}
		n, err := s.dropHosts(ctx, groupID, expired)
		deleted += n
		if err != nil {
			return deleted, more, err
		}
		if err := trim(kept); err != nil {
			return deleted, more, err
		}
		if cursor = next; cursor == 0 {
			return deleted, more, nil
		}
	}
}

// dropHosts deletes hosts of a project as they were read (read: id, document, id, document...)
// with their partitions, each only if it is still as it was read. Returns how many it deleted.
func (s *Store) dropHosts(ctx context.Context, groupID string, read []string) (int, error) {
	if len(read) == 0 {
		return 0, nil
	}
	keys, args := []string{hostsHash(groupID)}, make([]any, len(read))
	for i := 0; i+1 < len(read); i += 2 {
		keys = append(keys, disksSet(groupID, read[i]), legacyDisksSet(groupID, read[i]))
		args[i], args[i+1] = read[i], read[i+1]
	}
	return dropHosts.Run(ctx, s.rdb, keys, args...).Int()
}

// dropHosts deletes hosts from their project's hash (KEYS[1]) with their partitions (KEYS[2i],
// KEYS[2i+1]), each only if it is still as it was read (ARGV[2i-1] the id, ARGV[2i] the
// document): a host reported again since it was read stays. Returns how many it deleted.
var dropHosts = redis.NewScript(`
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('DEL', KEYS[i + 1], KEYS[i + 2])
    n = n + 1
  end
end
return n
`)

// Host reads a host of a project, from its project's hash or else where it was written
// before. An id no host can have is not looked up: it could name another key of the project
// ("h:disks" is host h's partitions).
func (s *Store) Host(ctx context.Context, groupID, hostID string) (herald.Host, error) {
	var h herald.Host
	notFound := herald.NotFound(herald.CodeHostNotFound, "host", hostID)
	if !herald.ValidHostID(hostID) {
		return h, notFound
	}
	b, err := s.rdb.HGet(ctx, hostsHash(groupID), hostID).Bytes()
	if err == nil {
		return decodeHost(groupID, hostID, b)
	}
	if !errors.Is(err, redis.Nil) {
		return h, err
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
