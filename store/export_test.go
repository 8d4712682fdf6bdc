package store

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

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

// AlertDocOlder is the document of a at key as Herald wrote it before lastNotified was kept
// apart: with its empty id ("i":"") and its lastNotified, first in a ten-byte
// slot (slot; null and spaces when never notified) or after the times.
func AlertDocOlder(tb testing.TB, key string, a herald.Alert, slot bool) []byte {
	d := packAlertAt(key, &a)
	d.ID = "" // omitted now; written empty then
	b, err := json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	rest := `"i":"",` + string(b[1:])
	n := packTime(a.LastNotified)
	if slot {
		t := "null      "
		if n != nil {
			t = strconv.FormatInt(*n, 10)
		}
		return []byte(`{"n":` + t + `,` + rest)
	}
	if n == nil {
		return []byte("{" + rest)
	}
	d.LastNotified = n
	b, err = json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(`{"i":"",` + string(b[1:]))
}

// NonceCountKey is the key of nonce's count.
func NonceCountKey(nonce string) string { return nonceCount(nonce) }

// CheckRedisVersion is checkRedisVersion.
var CheckRedisVersion = checkRedisVersion

// VersionInInfo and VersionInHello read a server's version in its answers.
var VersionInInfo, VersionInHello = versionInInfo, versionInHello

// ForgetOrgProjectIndexes deletes the indexes of organizations' projects and their mark, as
// a store written before those indexes existed has neither.
func (s *Store) ForgetOrgProjectIndexes(ctx context.Context, orgIDs ...string) error {
	keys := []string{orgProjectsBuilt()}
	for _, id := range orgIDs {
		keys = append(keys, orgProjectIndex(id))
	}
	return s.rdb.Del(ctx, keys...).Err()
}
