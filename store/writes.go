package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
	// Each command is gathered whole, its name and key first (as go-redis would build it), and
	// queued as it is: a step may have hundreds of alerts, and go-redis's ZAdd and HSet copy
	// their arguments into a new slice.
	set  []any // "mset", key, value, key, value...
	zadd map[string][]any
	zrem map[string][]any
	hset map[string][]any
	hdel map[string][]any
	sadd map[string]map[string]bool
	cmds [][]any // commands of their own, sent last
	// outbox are the notices to add to each outbox, by how long they are held (unix ms): one
	// entry each (OutboxEntry), added with the other sorted sets' members.
	outbox map[string]map[int64][][]byte
	keys   *scopeKeys // of the scope of the last change gathered
	// score and scoreArg are the last score added and its argument, formatted as go-redis
	// formats a float: a step's hundreds of members have a few scores between them (creation
	// seconds, due times), so each is formatted once.
	score    float64
	scoreArg any
}

// scopeKeys are the keys a scope's changes write, each built once per transaction: a step
// may write hundreds of alerts to the same dozen keys.
type scopeKeys struct {
	sc                             Scope
	alerts, events                 collection
	docPrefix                      string // an alert's document is at docPrefix + its id
	schedules, due, outbox, expiry string
	eventDocs, eventTypes          string
	indexes                        map[[2]string]string // alerts' indexes by kind and name (cs.index)
	eventsOf                       map[string]string    // events' indexes by type (eventsOfType)
	opens                          map[string]string    // configurations' open alerts (Scope.opens)
}

// scopeKeys are the keys of sc, as built for the last change gathered when it was of sc.
func (w *writes) scopeKeys(sc Scope) *scopeKeys {
	if w.keys != nil && w.keys.sc == sc {
		return w.keys
	}
	k := &scopeKeys{sc: sc, alerts: sc.alerts(), events: sc.events(), schedules: sc.schedules(), due: sc.due(),
		outbox: sc.outbox(), expiry: sc.expiring(), indexes: map[[2]string]string{}, eventsOf: map[string]string{}, opens: map[string]string{}}
	k.docPrefix = k.alerts.doc("")
	k.eventDocs, k.eventTypes = k.events.docsHash(), eventTypesSet(k.events)
	w.keys = k
	return k
}

// index is the alerts' index of kind and name (alerts().index(kind, name)).
func (k *scopeKeys) index(kind, name string) string {
	ix, ok := k.indexes[[2]string{kind, name}]
	if !ok {
		ix = k.alerts.index(kind, name)
		k.indexes[[2]string{kind, name}] = ix
	}
	return ix
}

// opensOf is the hash of the active alerts of configuration configID (Scope.opens).
func (k *scopeKeys) opensOf(configID string) string {
	h, ok := k.opens[configID]
	if !ok {
		h = k.sc.opens(configID)
		k.opens[configID] = h
	}
	return h
}

// eventsOfType is the index of the scope's events of type typ.
func (k *scopeKeys) eventsOfType(typ string) string {
	ix, ok := k.eventsOf[typ]
	if !ok {
		ix = eventsOfType(k.events, typ)
		k.eventsOf[typ] = ix
	}
	return ix
}

func newWrites() *writes {
	return &writes{zadd: map[string][]any{}, zrem: map[string][]any{}, hset: map[string][]any{}, hdel: map[string][]any{},
		sadd: map[string]map[string]bool{}, outbox: map[string]map[int64][][]byte{}}
}

// command is the command name on key gathered so far in m, begun if it was not.
func command(m map[string][]any, name, key string) []any {
	if c, ok := m[key]; ok {
		return c
	}
	return []any{name, key}
}

// scoreArgOf is score as a ZADD's argument.
func (w *writes) scoreArgOf(score float64) any {
	if w.scoreArg == nil || score != w.score {
		w.score, w.scoreArg = score, strconv.FormatFloat(score, 'f', -1, 64)
	}
	return w.scoreArg
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

func (w *writes) mSet(key string, value []byte) {
	if len(w.set) == 0 {
		w.set = append(w.set, "mset")
	}
	w.set = append(w.set, key, value)
}

func (w *writes) zAdd(key string, score float64, member any) {
	w.zadd[key] = append(command(w.zadd, "zadd", key), w.scoreArgOf(score), member)
}

func (w *writes) zRem(key string, members ...any) {
	w.zrem[key] = append(command(w.zrem, "zrem", key), members...)
}

func (w *writes) hSet(key string, field, value any) {
	w.hset[key] = append(command(w.hset, "hset", key), field, value)
}

func (w *writes) hDel(key string, field any) {
	w.hdel[key] = append(command(w.hdel, "hdel", key), field)
}

// sAdd adds member to the set at key, once however often it is asked.
func (w *writes) sAdd(key, member string) {
	if w.sadd[key] == nil {
		w.sadd[key] = map[string]bool{}
	}
	w.sadd[key][member] = true
}

// event adds an audit event to the indexes of the events of scope k.
func (w *writes) event(k *scopeKeys, e *herald.Event) error {
	b, err := encodeEvent(k.events, *e)
	if err != nil {
		return fmt.Errorf("store: encode event %s: %w", e.ID, err)
	}
	w.hSet(k.eventDocs, k.events.docField(e.ID), b)
	w.zAdd(k.eventsOfType(e.EventTypeName), score(e.Created), k.events.indexMember(e.ID))
	w.sAdd(k.eventTypes, e.EventTypeName)
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
		pipe.Do(ctx, w.set...)
	}
	for _, m := range []map[string][]any{w.zrem, w.hdel, w.zadd, w.hset} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			pipe.Do(ctx, m[k]...)
		}
	}
	for _, c := range w.cmds {
		pipe.Do(ctx, c...)
	}
	for _, k := range slices.Sorted(maps.Keys(w.sadd)) {
		members := make([]any, 0, len(w.sadd[k]))
		for _, m := range slices.Sorted(maps.Keys(w.sadd[k])) {
			members = append(members, m)
		}
		pipe.SAdd(ctx, k, members...)
	}
}
