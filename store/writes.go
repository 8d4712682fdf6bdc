package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// writes gathers the commands of one transaction by key, so that a step over many alerts
// sends one command per key (one MSET for the documents, one ZADD per index) rather than one
// per alert per key: Redis spends its time per command, and the API's requests wait behind
// the engine's.
//
// Removals go before additions, so that a member removed and another added under the same
// key and field in one step (an alert closing and a new one opening for the same target) end
// as added.
type writes struct {
	set  []any // key, value, key, value... for one MSET
	zadd map[string][]redis.Z
	zrem map[string][]any
	hset map[string][]any
	hdel map[string][]string
	sadd map[string]map[string]bool
	// outbox are the notices to add to each outbox, by how long they are held (unix ms): one
	// entry each (OutboxEntry), added with the other sorted sets' members.
	outbox map[string]map[int64][][]byte
}

func newWrites() *writes {
	return &writes{zadd: map[string][]redis.Z{}, zrem: map[string][]any{}, hset: map[string][]any{}, hdel: map[string][]string{},
		sadd: map[string]map[string]bool{}, outbox: map[string]map[int64][][]byte{}}
}

// notices adds notices to the entry of the outbox key held until until.
func (w *writes) notices(key string, until time.Time, notices [][]byte) {
	if len(notices) == 0 {
		return
	}
	if w.outbox[key] == nil {
		w.outbox[key] = map[int64][][]byte{}
	}
	ms := until.UnixMilli()
	w.outbox[key][ms] = append(w.outbox[key][ms], notices...)
}

func (w *writes) setJSON(key string, v any) error {
	b, err := encodeDocAt(key, v)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", key, err)
	}
	w.set = append(w.set, key, b)
	return nil
}

func (w *writes) zAdd(key string, score float64, member string) {
	w.zadd[key] = append(w.zadd[key], redis.Z{Score: score, Member: member})
}

func (w *writes) zRem(key string, members ...any) { w.zrem[key] = append(w.zrem[key], members...) }

func (w *writes) hSet(key, field string, value any) { w.hset[key] = append(w.hset[key], field, value) }

func (w *writes) hDel(key, field string) { w.hdel[key] = append(w.hdel[key], field) }

// sAdd adds member to the set at key, once however often it is asked.
func (w *writes) sAdd(key, member string) {
	if w.sadd[key] == nil {
		w.sadd[key] = map[string]bool{}
	}
	w.sadd[key][member] = true
}

// event adds an audit event to the indexes of its scope c.
func (w *writes) event(c collection, e herald.Event) error {
	b, err := encodeEvent(c, e)
	if err != nil {
		return fmt.Errorf("store: encode event %s: %w", e.ID, err)
	}
	w.hSet(c.docsHash(), c.docField(e.ID), b)
	w.zAdd(eventsOfType(c, e.EventTypeName), score(e.Created), c.indexMember(e.ID))
	w.sAdd(eventTypesSet(c), e.EventTypeName)
	return nil
}

// queue sends the gathered commands into pipe, in an order that does not depend on map
// iteration.
func (w *writes) queue(ctx context.Context, pipe redis.Pipeliner) {
	for key, entries := range w.outbox {
		for _, ms := range slices.Sorted(maps.Keys(entries)) {
			w.zAdd(key, float64(ms), string(OutboxEntry(entries[ms])))
		}
	}
	clear(w.outbox)
	if len(w.set) > 0 {
		pipe.MSet(ctx, w.set...)
	}
	for _, k := range sortedKeys(w.zrem) {
		pipe.ZRem(ctx, k, w.zrem[k]...)
	}
	for _, k := range sortedKeys(w.hdel) {
		pipe.HDel(ctx, k, w.hdel[k]...)
	}
	for _, k := range sortedKeys(w.zadd) {
		pipe.ZAdd(ctx, k, w.zadd[k]...)
	}
	for _, k := range sortedKeys(w.hset) {
		pipe.HSet(ctx, k, w.hset[k]...)
	}
	for _, k := range sortedKeys(w.sadd) {
		members := make([]any, 0, len(w.sadd[k]))
		for _, m := range sortedKeys(w.sadd[k]) {
			members = append(members, m)
		}
		pipe.SAdd(ctx, k, members...)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
