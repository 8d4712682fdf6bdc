package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Protocol is the version of the Redis protocol every client of the store speaks (go-redis's
// Protocol option; the store's tests, herald's connections and the benchmark's all set it).
// RESP2: Herald uses nothing of RESP3 (no client-side caching, no push messages on the
// connections that run commands; asynq's pub/sub works on either), and on a RESP3 connection
// go-redis looks for push notifications before reading each reply of a pipeline, which
// costs the API's reads. Replies differ between the two only in their types (a map, a double,
// a script's boolean), which go-redis's typed commands read either way; the store reads
// nothing untyped that would differ.
const Protocol = 2

// Store is Herald's state in Redis. It is safe for concurrent use; every method is one
// pipeline or transaction where the data allows it.
type Store struct {
	rdb        redis.UniversalClient
	obsBacklog atomic.Int64 // bytes of observations that may wait per project (0: the default)
	settled    settledMemo  // what RepairDue's last reads found (reconcile.go)
	hosts      writtenHosts // the host documents this process wrote lately, not to rewrite them
	shared     sharedTrips  // round trips shared by concurrent callers (shared.go)
	oneNode    bool         // every key on one server (not a Cluster): a command may span slots
}

// New returns a store on rdb (a single node, Sentinel or Cluster client).
func New(rdb redis.UniversalClient) *Store {
	_, oneNode := rdb.(*redis.Client) // a single node's or Sentinel's master: only a ClusterClient spreads slots
	return &Store{rdb: rdb, shared: sharedTrips{rdb: rdb}, oneNode: oneNode}
}

// Redis is the client the store uses, for the parts of Herald that share it (asynq).
func (s *Store) Redis() redis.UniversalClient { return s.rdb }

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// Page selects a slice of a list: Limit items after skipping Offset.
type Page struct{ Offset, Limit int }

// TimeRange bounds a list by time, both ends inclusive; a zero end is unbounded.
type TimeRange struct{ Min, Max time.Time }

func (r TimeRange) bounds() (string, string) {
	lo, hi := "-inf", "+inf"
	if !r.Min.IsZero() {
		lo = strconv.FormatInt(r.Min.Unix(), 10)
	}
	if !r.Max.IsZero() {
		hi = strconv.FormatInt(r.Max.Unix(), 10)
	}
	return lo, hi
}

// score is an item's place in a time index: seconds, the precision of herald.Time. Items of
// the same second sort by id, which is time-ordered too.
func score(t herald.Time) float64 { return float64(t.Unix()) }

// list reads one page of documents of c listed in index within r, oldest first unless
// newestFirst, and the number of items in the whole range. Two round trips: the count and the
// ids in one pipeline, then the documents in one MGET (all on the index's slot).
func list[T any](ctx context.Context, s *Store, c collection, index string, r TimeRange, newestFirst bool, p Page) ([]T, int, error) {
	lo, hi := r.bounds()
	var count *redis.IntCmd
	var ids *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		count = pipe.ZCount(ctx, index, lo, hi)
		by := &redis.ZRangeBy{Min: lo, Max: hi, Offset: int64(p.Offset), Count: int64(p.Limit)}
		if newestFirst {
			ids = pipe.ZRevRangeByScore(ctx, index, by)
		} else {
			ids = pipe.ZRangeByScore(ctx, index, by)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	items, err := getMany[T](ctx, s, c, c.idsOfMembers(ids.Val()))
	return items, int(count.Val()), err
}

// getMany reads the documents of c with ids, in order, skipping any that vanished between
// reading an index and reading the documents. A project's alerts come with their lastNotified
// in the same round trip (projectAlertDocs); a global alert's reach hash is named by its
// project, which only its document says, and is read in a round trip after.
func getMany[T any](ctx context.Context, s *Store, c collection, ids []string) ([]T, error) {
	out := make([]T, 0, len(ids))
	var vals []any
	var notified []*redis.StringCmd // each alert's lastNotified, read with the documents
	var err error
	if g := c.groupID(); g != "" && c.isAlerts() {
		vals, notified, err = s.projectAlertDocs(ctx, c, g, ids)
	} else {
		vals, err = s.docs(ctx, c, ids)
	}
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		var item T
		if err := decodeDocOf(c, ids[i], []byte(str), &item); err != nil {
			return nil, fmt.Errorf("store: decode %s: %w", c.doc(ids[i]), err)
		}
		if a, ok := any(&item).(*herald.Alert); ok && notified != nil {
			if err := setNotified(a, notified[i]); err != nil {
				return nil, err
			}
		}
		out = append(out, item)
	}
	if alerts, ok := any(out).([]herald.Alert); ok && c.isAlerts() && notified == nil {
		return out, s.withNotified(ctx, c, alerts)
	}
	return out, nil
}

// projectAlertDocs reads the documents of alerts ids of project groupID (collection c) as docs
// does, and the lastNotified of each in its reach hash, in one round trip: all of them live on
// the project's slot.
func (s *Store) projectAlertDocs(ctx context.Context, c collection, groupID string, ids []string) ([]any, []*redis.StringCmd, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.doc(id)
	}
	var docs *redis.SliceCmd
	notified := make([]*redis.StringCmd, len(ids))
	sc := Scope{GroupID: groupID}
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		docs = pipe.MGet(ctx, keys...)
		for i, id := range ids {
			notified[i] = readNotified(ctx, pipe, sc, id)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, err
	}
	vals, err := docs.Result()
	return vals, notified, err
}

// docs reads the stored documents of c with ids, in order: a string each, nil where there is
// none. Documents of a collection kept in a hash that are not there are looked for at keys of
// their own, where they were written before.
func (s *Store) docs(ctx context.Context, c collection, ids []string) ([]any, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.doc(id)
	}
	if !c.inHash() {
		return s.rdb.MGet(ctx, keys...).Result()
	}
	fields := make([]string, len(ids))
	for i, id := range ids {
		fields[i] = c.docField(id)
	}
	vals, err := s.rdb.HMGet(ctx, c.docsHash(), fields...).Result()
	if err != nil {
		return nil, err
	}
	var missing []int
	for i, v := range vals {
		if v == nil {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return vals, nil
	}
	old := make([]string, len(missing))
	for j, i := range missing {
		old[j] = keys[i]
	}
	found, err := s.rdb.MGet(ctx, old...).Result()
	if err != nil {
		return nil, err
	}
	for j, i := range missing {
		vals[i] = found[j]
	}
	return vals, nil
}

// get reads one document into dst; a missing one is notFound.
func get(ctx context.Context, rdb redis.Cmdable, key string, dst any, notFound error) error {
	return decodeAnswer(rdb.Get(ctx, key), dst, func() error { return notFound })
}

// getByID reads document id, at key(id): notFound(id) when there is none, or when id is not of
// herald's form (then nothing is read).
func getByID[T any](ctx context.Context, rdb redis.Cmdable, key func(string) string, id string, notFound func(string) error) (T, error) {
	var v T
	if !herald.ValidID(id) {
		return v, notFound(id)
	}
	err := decodeAnswer(rdb.Get(ctx, key(id)), &v, func() error { return notFound(id) })
	return v, err
}

// getByName reads the document of cs that name reference ref points to; ok is false when there
// is none.
func getByName[T any](ctx context.Context, rdb redis.Cmdable, ref string, cs collection) (v T, ok bool, err error) {
	id, err := rdb.Get(ctx, ref).Result()
	if errors.Is(err, redis.Nil) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	ok = true
	err = decodeAnswer(rdb.Get(ctx, cs.doc(id)), &v, func() error { ok = false; return nil })
	return v, ok && err == nil, err
}

// decodeAnswer decodes the document a GET answered into dst: notFound's error when there is
// none (made only then: a read that finds its document, the usual one, builds no error).
func decodeAnswer(cmd *redis.StringCmd, dst any, notFound func() error) error {
	b, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return notFound()
	}
	if err != nil {
		return err
	}
	key, _ := cmd.Args()[1].(string)
	if err := decodeDocAt(key, b, dst); err != nil {
		return fmt.Errorf("store: decode %v: %w", cmd.Args()[1], err)
	}
	return nil
}

// decodeValue decodes the document an MGET (cmd) answered as vals[i] into dst: notFound's
// error when there is none.
func decodeValue(vals []any, i int, cmd *redis.SliceCmd, dst any, notFound func() error) error {
	if i >= len(vals) || vals[i] == nil {
		return notFound()
	}
	doc, ok := vals[i].(string)
	if !ok {
		return fmt.Errorf("store: %v is a %T, not a document", cmd.Args()[1+i], vals[i])
	}
	key, _ := cmd.Args()[1+i].(string)
	if err := decodeDocAt(key, doc, dst); err != nil {
		return fmt.Errorf("store: decode %v: %w", cmd.Args()[1+i], err)
	}
	return nil
}

// set queues writing v as the document at key.
func set(ctx context.Context, pipe redis.Pipeliner, key string, v any) error {
	b, err := encodeDocAt(key, v)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", key, err)
	}
	pipe.Set(ctx, key, b, 0)
	return nil
}

// recordEvents queues audit events into the indexes of their scope c. The caller's
// transaction must be on c's slot.
func recordEvents(ctx context.Context, pipe redis.Pipeliner, c collection, evs []herald.Event) error {
	for _, e := range evs {
		if err := recordEvent(ctx, pipe, c, e); err != nil {
			return err
		}
	}
	return nil
}

func recordEvent(ctx context.Context, pipe redis.Pipeliner, c collection, e herald.Event) error {
	b, err := encodeEvent(c, e)
	if err != nil {
		return fmt.Errorf("store: encode event %s: %w", e.ID, err)
	}
	c.setDoc(ctx, pipe, e.ID, b)
	pipe.ZAdd(ctx, eventsOfType(c, e.EventTypeName), redis.Z{Score: score(e.Created), Member: c.indexMember(e.ID)})
	pipe.SAdd(ctx, eventTypesSet(c), e.EventTypeName)
	return nil
}

// update reads the document at key into a fresh T and lets change modify it and say which
// audit events (of scope evs) the change makes; extra may queue more writes on the same slot,
// and reads (whose replies are there once update returns). The document, the events and the extra writes commit atomically: if anything else writes
// the document meanwhile, it starts again (optimistic locking with WATCH). An error from
// change writes nothing.
func update[T any](ctx context.Context, s *Store, key string, notFound error, evs collection,
	change func(v *T) ([]herald.Event, error), extra func(v T, pipe redis.Pipeliner)) (T, error) {
	var out T
	const attempts = 20
	for range attempts {
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			var v T
			if err := get(ctx, tx, key, &v, notFound); err != nil {
				return err
			}
			evList, err := change(&v)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
				if extra != nil {
					extra(v, pipe)
				}
				if err := recordEvents(ctx, pipe, evs, evList); err != nil {
					return err
				}
				return set(ctx, pipe, key, v)
			})
			if errors.Is(err, redis.Nil) { // a read of extra's found nothing: the rest are writes
				err = nil
			}
			out = v
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		return out, err
	}
	return out, fmt.Errorf("store: %s changed %d times while updating it", key, attempts)
}

// mergedPage reads one page of the union of sorted sets KEYS (disjoint), newest first: by
// score, then member, both descending (as ZREVRANGEBYSCORE orders one set), within scores
// ARGV[1] (max) to ARGV[2] (min), skipping ARGV[3] members and returning ARGV[4], after the
// number of members in that range. The sets are walked in chunks side by side, sending back
// only the page. Members of one score compare byte by byte, as Redis orders them (Lua's < on strings
// follows the server's collation, which need not be bytes': ids may be 12 bytes of binary).
// When only one set has members in the range (a type's events, all of them of this layout),
// that set's page is the page, skipped to by Redis itself. Otherwise a page deep in the list
// skips the seconds before it by counting (scores are whole seconds) and walks only the
// second it starts in: the walk in Lua costs some microseconds a member.
var mergedPage = redis.NewScript(`
local hi, lo, skip, want = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local function after(a, b)
  for k = 1, math.min(#a, #b) do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local bufs, pos, taken, chunk = {}, {}, {}, 16
local function fill(i)
  if pos[i] > #bufs[i] and not bufs[i].done then
    local got = redis.call('ZREVRANGEBYSCORE', KEYS[i], hi, lo, 'WITHSCORES', 'LIMIT', taken[i], chunk)
    local b = {}
    for j = 1, #got, 2 do b[#b+1] = {got[j], tonumber(got[j+1])} end
    b.done = #got < 2 * chunk
    taken[i] = taken[i] + #b
    bufs[i], pos[i] = b, 1
  end
end
local total, nonempty, only = 0, 0, nil
for i = 1, #KEYS do
  local c = redis.call('ZCOUNT', KEYS[i], lo, hi)
  total = total + c
  if c > 0 then nonempty, only = nonempty + 1, i end
end
local out, n = {total}, 0
if nonempty < 2 or skip >= total then
  if only and skip < total then
    local got = redis.call('ZREVRANGEBYSCORE', KEYS[only], hi, lo, 'LIMIT', skip, want)
    for j = 1, #got do out[#out+1] = got[j] end
  end
  return out
end
if skip > 0 then
  -- Skip whole scores (seconds) without walking them: the page's first member has the highest
  -- score s with at least skip+1 members scored s or above (found by halving, counting with
  -- ZCOUNT); the members scored above s are skipped, the walk starts at s.
  local function atOrAbove(s)
    local c = 0
    for i = 1, #KEYS do c = c + redis.call('ZCOUNT', KEYS[i], s, hi) end
    return c
  end
  local smin, smax
  for i = 1, #KEYS do
    local top = redis.call('ZREVRANGEBYSCORE', KEYS[i], hi, lo, 'WITHSCORES', 'LIMIT', 0, 1)
    local bottom = redis.call('ZRANGEBYSCORE', KEYS[i], lo, hi, 'WITHSCORES', 'LIMIT', 0, 1)
    if top[2] then
      local t, b = tonumber(top[2]), tonumber(bottom[2])
      if not smax or t > smax then smax = t end
      if not smin or b < smin then smin = b end
    end
  end
  local below, above = math.floor(smin), math.floor(smax) + 1 -- atOrAbove(below) > skip >= atOrAbove(above)
  while above - below > 1 do
    local mid = math.floor((below + above) / 2)
    if atOrAbove(mid) > skip then below = mid else above = mid end
  end
  local skipped = atOrAbove(above)
  hi, skip = string.format('%d', below), skip - skipped
end
chunk = math.min(math.max(skip + want, 16), 512)
for i = 1, #KEYS do bufs[i], pos[i], taken[i] = {done = false}, 1, 0; fill(i) end
local function first(e, b) return e[2] > b[2] or (e[2] == b[2] and after(e[1], b[1])) end
` + mergeWalk)

// mergeWalk ends a script that merges sorted sources: it takes the members of sources 1..#KEYS
// (bufs[i] from pos[i], refilled by fill(i)) in the order of first(a, b), skipping skip of them
// (n counts those taken) and appending want to out, which it returns.
const mergeWalk = `
while #out - 1 < want do
  local best
  for i = 1, #KEYS do
    local e = bufs[i][pos[i]]
    if e and (not best or first(e, bufs[best][pos[best]])) then best = i end
  end
  if not best then break end
  local e = bufs[best][pos[best]]
  pos[best] = pos[best] + 1
  fill(best)
  n = n + 1
  if n > skip then out[#out+1] = e[1] end
end
return out
`

// listMerged is list, newest first, over the union of disjoint indexes (one status index each,
// say). Two round trips, as list: the count and the page's ids, then the documents.
func listMerged[T any](ctx context.Context, s *Store, c collection, indexes []string, r TimeRange, p Page) ([]T, int, error) {
	if len(indexes) == 1 {
		return list[T](ctx, s, c, indexes[0], r, true, p)
	}
	lo, hi := r.bounds()
	var page []string
	var total int64
	if p.Offset+p.Limit <= mergedInProcess {
		var err error
		if page, total, err = s.mergedPageHere(ctx, indexes, lo, hi, p); err != nil {
			return nil, 0, err
		}
	} else {
		vals, err := mergedPage.Run(ctx, s.rdb, indexes, hi, lo, p.Offset, p.Limit).Slice()
		if err != nil || len(vals) == 0 {
			return nil, 0, err
		}
		total, _ = vals[0].(int64)
		page = make([]string, 0, len(vals)-1)
		for _, v := range vals[1:] {
			id, _ := v.(string)
			page = append(page, id)
		}
	}
	items, err := getMany[T](ctx, s, c, c.idsOfMembers(page))
	return items, int(total), err
}

// mergedInProcess bounds the pages listMerged merges itself (offset and limit together):
// each index's first members up to the page's end, read in one pipeline, cost Redis far less
// than mergedPage's walk in Lua (some microseconds a member), and the first pages are the
// ones read most.
const mergedInProcess = 1000

// mergedPageHere is mergedPage's page and total, merged in this process from each index's
// first p.Offset+p.Limit members within lo..hi.
func (s *Store) mergedPageHere(ctx context.Context, indexes []string, lo, hi string, p Page) ([]string, int64, error) {
	counts := make([]*redis.IntCmd, len(indexes))
	heads := make([]*redis.ZSliceCmd, len(indexes))
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, index := range indexes {
			counts[i] = pipe.ZCount(ctx, index, lo, hi)
			if p.Offset+p.Limit > 0 { // a count of 0 would read the whole range
				heads[i] = pipe.ZRevRangeByScoreWithScores(ctx, index, &redis.ZRangeBy{Min: lo, Max: hi, Count: int64(p.Offset + p.Limit)})
			}
		}
		return nil
	}); err != nil {
		return nil, 0, err
	}
	var total int64
	var all []redis.Z
	for i := range indexes {
		total += counts[i].Val()
		if heads[i] != nil {
			all = append(all, heads[i].Val()...)
		}
	}
	// As ZREVRANGEBYSCORE orders one set: by score, then member (bytes), both descending.
	slices.SortFunc(all, func(a, b redis.Z) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(b.Member.(string), a.Member.(string))
	})
	page := make([]string, 0, p.Limit)
	for _, z := range all[min(p.Offset, len(all)):min(p.Offset+p.Limit, len(all))] {
		page = append(page, z.Member.(string))
	}
	return page, total, nil
}
