package store

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// The alert engine's state, beside the documents the API reads:
//
//   {g:<id>}:obs                 LIST of observation batches waiting to be evaluated, in order
//   {g:<id>}:obs-lock            who evaluates the project's alerts now (a lease: lease.go)
//   {g:<id>}:open:<cfg>          HASH target -> the configuration's active alert for it
//   {g:<id>}:sched               HASH alert -> its schedule (herald.Schedule, binary: schedule.go)
//   {g:<id>}:due                 ZSET alert -> when the engine must look at it (unix ms)
//   {g:<id>}:expiring            HASH alert -> its expiry, if it ends unless re-reported (expiring.go)
//   {g:<id>}:outbox              ZSET entry -> until when the engine sending it holds it (unix ms)
//   {g:<id>}:outbox-aside        LIST outbox entries or notices this version could not read
//   {g:<id>}:unrouted[-ends]     Prometheus alerts no configuration took, until they end (unrouted.go)
//
// The open and schedule hashes' targets and alert ids are their 12 bytes (targetField,
// docField); the expiring hash and the sets hold whole ids.
//
// The outbox makes delivery at-least-once: a step's notices are written in the same
// transaction as the step, and leave the outbox only once delivered (or handed to a retry
// task); notices of an engine that died come back when their lease runs out. A step's notices
// are one entry (OutboxEntry): a step may hold hundreds, and a member each would cost Redis
// an insertion and a removal per notice.
//
// Global alerts keep the same under {global}, with the project in the key where it matters
// ({global}:gopen:<cfg>:<project>, {global}:due:<project>, {global}:outbox:<project>,
// {global}:outbox-aside:<project>;
// {global}:gsched), so that one project's engine work touches only its own keys and the
// global ones of that project. Schedules and open alerts are hash fields rather than keys of
// their own: an open alert must cost little memory (100,000 of them wait at once).

func obsList(groupID string) string { return key(groupTag(groupID), "obs") }

// Scope is where an alert lives: its project's slot, or (Global) the platform's.
type Scope struct {
	GroupID string
	Global  bool
}

func (s Scope) alerts() collection { return alertCollection(s.Global, s.GroupID) }
func (s Scope) events() collection {
	if s.Global {
		return events("", "")
	}
	return events(s.GroupID, "")
}

func (s Scope) schedules() string {
	if s.Global {
		return key(globalTag, "gsched")
	}
	return key(groupTag(s.GroupID), "sched")
}

// due is the scope's sorted set of when each active alert with a next step is due (unix ms).
// Its members are the alerts' ids' 12 bytes (dueMember), as in the alert indexes; entries
// written before, whole ids, are still claimed, moved and removed.
func (s Scope) due() string {
	if s.Global {
		return key(globalTag, "due", s.GroupID)
	}
	return key(groupTag(s.GroupID), "due")
}

// dueMember is the member of alert id in the due set; dueMembers are both forms it may have.
func (s Scope) dueMember(id string) string { return s.alerts().indexMember(id) }
func (s Scope) dueMembers(id string) []any { return s.alerts().indexMembers(id) }

func (s Scope) outbox() string {
	if s.Global {
		return key(globalTag, "outbox", s.GroupID)
	}
	return key(groupTag(s.GroupID), "outbox")
}

// outboxAside is where outbox entries or notices that could not be read are kept (SetAside).
func (s Scope) outboxAside() string {
	if s.Global {
		return key(globalTag, "outbox-aside", s.GroupID)
	}
	return key(groupTag(s.GroupID), "outbox-aside")
}

// opens is the hash of configuration configID's active alerts, by target id.
func (s Scope) opens(configID string) string {
	if s.Global {
		return key(globalTag, "gopen", configID, s.GroupID)
	}
	return key(groupTag(s.GroupID), "open", configID)
}

// TargetID is the short fixed-length name the store keeps a target key under: targets are
// agent input of any length.
func TargetID(targetKey string) string {
	sum := sha1.Sum([]byte(targetKey))
	return base64.RawURLEncoding.EncodeToString(sum[:12]) // 96 bits: no two targets of a configuration meet
}

// obsBytes counts the bytes of a project's waiting batches, for the backlog cap.
func obsBytes(groupID string) string { return key(groupTag(groupID), "obs-bytes") }

// obsAside is where batches of observations the engine could not read are kept.
func obsAside(groupID string) string { return key(groupTag(groupID), "obs-aside") }

// appendWithin queues a batch unless the waiting ones already hold the cap (ARGV[2]) of bytes;
// it answers 1 when queued.
var appendWithin = redis.NewScript(`
local waiting = tonumber(redis.call('GET', KEYS[2]) or '0')
if waiting > 0 and waiting + #ARGV[1] > tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], #ARGV[1])
return 1
`)

// DefaultObservationBacklog is how many bytes of observations may wait for the engine per
// project (while workers are down or behind) before more are refused.
const DefaultObservationBacklog = 64 << 20

// backlogRetry is how long an agent refused for a full backlog is told to wait.
const backlogRetry = 30 * time.Second

// LimitObservationBacklog sets the per-project cap of waiting observations (before use).
func (s *Store) LimitObservationBacklog(bytes int64) { s.obsBacklog.Store(bytes) }

// AppendObservations queues a validated batch of observations of a project, durably and in
// order, for the engine. Past the project's backlog cap it queues nothing and answers an
// unavailable error with a Retry-After: what waits is never dropped, the agent sends again
// later. A batch alone larger than the cap is queued when nothing waits.
func (s *Store) AppendObservations(ctx context.Context, groupID string, batch []byte) error {
	ok, err := appendWithin.Run(ctx, s.rdb, []string{obsList(groupID), obsBytes(groupID)}, batch, s.backlog()).Int()
	if err != nil {
		return err
	}
	if ok == 0 {
		e := herald.Errorf(herald.KindUnavailable, herald.CodeObservationBacklogFull, nil,
			"Too many observations of this project wait for evaluation; send them again later.")
		e.RetryAfter = backlogRetry
		return e
	}
	return nil
}

func (s *Store) backlog() int64 {
	if n := s.obsBacklog.Load(); n > 0 {
		return n
	}
	return DefaultObservationBacklog
}

// PendingObservations reads up to n of a project's oldest waiting batches, leaving them queued.
func (s *Store) PendingObservations(ctx context.Context, groupID string, n int) ([][]byte, error) {
	vals, err := s.rdb.LRange(ctx, obsList(groupID), 0, int64(n-1)).Result()
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out, err
}

// dropObservation removes the oldest batch of a project's list KEYS[2] only if it is still
// ARGV[2], fenced (fenceCheck: a session that lost its lease removes nothing); a batch
// another session removed first is not removed again. The batch's bytes leave the backlog's
// count KEYS[3]. With a fourth key, the batch is kept at the end of that list as it leaves
// (SetObservationsAside), in the same step. Returns 1 when it removed it.
//
// The head is compared by LPOS (MAXLEN 1: the head only) and removed by LTRIM, inside Redis,
// so that the script never copies the batch (some 50 KB for 500 observations).
var dropObservation = fenced(`
if redis.call('LPOS', KEYS[2], ARGV[2], 'MAXLEN', 1) ~= 0 then return 0 end
if KEYS[4] then redis.call('RPUSH', KEYS[4], ARGV[2]) end
redis.call('LTRIM', KEYS[2], 1, -1)
local left = redis.call('DECRBY', KEYS[3], #ARGV[2])
if left <= 0 or redis.call('LLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[3]) end
return 1
`)

// DropObservation removes batch, which the holder of lock read and evaluated, from the head
// of its project's queue: exactly that batch, and only while lock still holds the project.
func (l *ProjectLock) DropObservation(ctx context.Context, groupID string, batch []byte) error {
	return l.takeHead(ctx, groupID, []string{obsList(groupID), obsBytes(groupID)}, batch)
}

// SetObservationsAside is DropObservation of a batch the engine cannot read (damaged, or
// written by a newer API before a rollback), which is moved whole to the project's
// obs-aside list rather than dropped: the API told its sender it was accepted.
func (l *ProjectLock) SetObservationsAside(ctx context.Context, groupID string, batch []byte) error {
	return l.takeHead(ctx, groupID, []string{obsList(groupID), obsBytes(groupID), obsAside(groupID)}, batch)
}

// ObservationsAside is what SetObservationsAside kept of a project, oldest first.
func (s *Store) ObservationsAside(ctx context.Context, groupID string) ([]string, error) {
	return s.rdb.LRange(ctx, obsAside(groupID), 0, -1).Result()
}

// takeHead runs dropObservation on keys for batch, as its holder.
func (l *ProjectLock) takeHead(ctx context.Context, groupID string, keys []string, batch []byte) error {
	return leaseLost(l.runFenced(ctx, dropObservation, Scope{GroupID: groupID}, keys, batch).Err())
}

// HasPendingObservations reports whether batches wait for a project.
func (s *Store) HasPendingObservations(ctx context.Context, groupID string) (bool, error) {
	n, err := s.rdb.LLen(ctx, obsList(groupID)).Result()
	return n > 0, err
}

// claim hands out the members of a sorted set of due times KEYS[2] that are due by now
// (ARGV[2], ms), at most ARGV[4], and moves each to now+lease (ARGV[3], ms) so that no other
// engine takes it meanwhile and, should this one die, it comes due again when the lease runs
// out; fenced (fenceCheck). Returns alternating member, due.
var claim = fenced(`
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
local leased = tonumber(ARGV[2]) + tonumber(ARGV[3])
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[2], leased, due[i])
end
return due
`)

// removeMembers removes members ARGV[2...] from the sorted set KEYS[2], fenced; a thousand
// to a command (Lua's unpack has a limit).
var removeMembers = fenced(`
for i = 2, #ARGV, 1000 do
  redis.call('ZREM', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return 1
`)

// Due is an alert that came due, and when.
type Due struct {
	AlertID string
	At      time.Time
}

// ClaimDue takes up to n alerts of scope due by now for lease.
func (l *ProjectLock) ClaimDue(ctx context.Context, sc Scope, now time.Time, lease time.Duration, n int) ([]Due, error) {
	vals, err := l.runFenced(ctx, claim, sc, []string{sc.due()}, now.UnixMilli(), lease.Milliseconds(), n).StringSlice()
	if err != nil {
		return nil, leaseLost(err)
	}
	out := make([]Due, 0, len(vals)/2)
	for i := 0; i+1 < len(vals); i += 2 {
		ms, err := strconv.ParseFloat(vals[i+1], 64)
		if err != nil {
			return nil, fmt.Errorf("store: due score %q: %w", vals[i+1], err)
		}
		out = append(out, Due{AlertID: idOfField(vals[i]), At: time.UnixMilli(int64(ms))})
	}
	return out, nil
}

// ForgetDue drops alerts from the due set of scope (alerts that ended meanwhile).
func (l *ProjectLock) ForgetDue(ctx context.Context, sc Scope, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	members := make([]any, 0, 2*len(ids))
	for _, id := range ids {
		members = append(members, sc.dueMembers(id)...)
	}
	return leaseLost(l.runFenced(ctx, removeMembers, sc, []string{sc.due()}, members...).Err())
}

// OutboxEntry is the outbox member that holds notices (each a JSON object) together: the
// notices of one committed step, whose sender holds and removes them as one. Transact writes
// one for the notices of all the changes it commits with the same OutboxUntil, and the sender
// makes the same from the same notices, in any order (they are sorted). One notice is its own
// entry, as every notice was before entries.
func OutboxEntry(notices [][]byte) []byte {
	if len(notices) == 1 {
		return notices[0]
	}
	sorted := slices.Clone(notices)
	slices.SortFunc(sorted, bytes.Compare)
	size := 2
	for _, n := range sorted {
		size += len(n) + 1
	}
	b := append(make([]byte, 0, size), '[')
	for i, n := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
	}
	return append(b, ']')
}

// OutboxNotices are the notices of an outbox entry (as ClaimOutbox hands them out).
func OutboxNotices(entry []byte) ([][]byte, error) {
	if len(entry) == 0 || entry[0] != '[' {
		return [][]byte{entry}, nil // one notice
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(entry, &raw); err != nil {
		return nil, fmt.Errorf("store: outbox entry: %w", err)
	}
	out := make([][]byte, len(raw))
	for i, n := range raw {
		out[i] = n
	}
	return out, nil
}

// ClaimOutbox takes up to n entries (OutboxNotices) of scope whose sender's lease ran out by
// now (an engine died before delivering them), for a new lease.
func (l *ProjectLock) ClaimOutbox(ctx context.Context, sc Scope, now time.Time, lease time.Duration, n int) ([][]byte, error) {
	vals, err := l.runFenced(ctx, claim, sc, []string{sc.outbox()}, now.UnixMilli(), lease.Milliseconds(), n).StringSlice()
	if err != nil {
		return nil, leaseLost(err)
	}
	out := make([][]byte, 0, len(vals)/2)
	for i := 0; i < len(vals); i += 2 {
		out = append(out, []byte(vals[i]))
	}
	return out, nil
}

// HoldOutbox keeps outbox entries of scope that a session is still sending held until until,
// so that no other session takes them back meanwhile; entries already done stay done.
func (l *ProjectLock) HoldOutbox(ctx context.Context, sc Scope, until time.Time, notices ...[]byte) error {
	if len(notices) == 0 {
		return nil
	}
	args := append([]any{until.UnixMilli()}, stringArgs(notices)...)
	return leaseLost(l.runFenced(ctx, holdMembers, sc, []string{sc.outbox()}, args...).Err())
}

// holdMembers moves the members ARGV[3...] of the sorted set KEYS[2] that it still holds to
// ARGV[2], never earlier; fenced. A session holds a few entries at a time.
var holdMembers = fenced(`
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[2], 'XX', 'GT', ARGV[2], ARGV[i])
end
return 1
`)

// SetAside keeps, at the end of scope's outbox-aside list, outbox entries or notices that the
// engine could not read (damaged, or written by a newer version it was rolled back from):
// kept whole, for an operator (nothing reads them back), rather than dropped with the entry they
// came in. They leave the outbox itself as any entry does (DoneOutbox).
func (l *ProjectLock) SetAside(ctx context.Context, sc Scope, raw ...[]byte) error {
	if len(raw) == 0 {
		return nil
	}
	return leaseLost(l.runFenced(ctx, pushAside, sc, []string{sc.outboxAside()}, stringArgs(raw)...).Err())
}

// pushAside appends ARGV[2...] to the list KEYS[2], fenced; a thousand to a command.
var pushAside = fenced(`
for i = 2, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return 1
`)

// OutboxAside is what SetAside kept of scope, oldest first.
func (s *Store) OutboxAside(ctx context.Context, sc Scope) ([]string, error) {
	return s.rdb.LRange(ctx, sc.outboxAside(), 0, -1).Result()
}

// DoneOutbox removes outbox entries whose notices were delivered or handed over.
func (l *ProjectLock) DoneOutbox(ctx context.Context, sc Scope, notices ...[]byte) error {
	if len(notices) == 0 {
		return nil
	}
	return leaseLost(l.runFenced(ctx, removeMembers, sc, []string{sc.outbox()}, stringArgs(notices)...).Err())
}

// stringArgs are bs as a command's arguments: each a string (a copy), as Redis stores it.
func stringArgs(bs [][]byte) []any {
	args := make([]any, len(bs))
	for i, b := range bs {
		args[i] = string(b)
	}
	return args
}

// WakeNoLaterThan moves an alert's due time earlier to at (never later), as when an
// acknowledgement that must expire at at is given.
func (s *Store) WakeNoLaterThan(ctx context.Context, sc Scope, alertID string, at time.Time) error {
	return wakeNoLaterThan.Run(ctx, s.rdb, []string{sc.due(), sc.expiring()}, at.UnixMilli(), alertID, sc.dueMember(alertID)).Err()
}

// Tracked is an active alert with the engine's state of it.
type Tracked struct {
	Alert    herald.Alert
	Schedule herald.Schedule
	Target   string // the TargetID of what the alert is about
	Scope    Scope
}

// schedDoc is a schedule as its hash field held it before schedules were binary (schedule.go);
// such fields are still read.
type schedDoc struct {
	Detected int64   `json:"d"`
	Next     []int64 `json:"n"`
	Sent     []int   `json:"s"`
	Target   string  `json:"t"`
}

func decodeScheduleJSON(b []byte) (herald.Schedule, string, error) {
	var sd schedDoc
	if err := json.Unmarshal(b, &sd); err != nil {
		return herald.Schedule{}, "", err
	}
	s := herald.Schedule{Detected: time.UnixMilli(sd.Detected), Next: make([]time.Time, len(sd.Next)), Sent: sd.Sent}
	for i, ms := range sd.Next {
		if ms != 0 {
			s.Next[i] = time.UnixMilli(ms)
		}
	}
	return s, sd.Target, nil
}

// OpenAlertIDs finds the active alerts of (configuration, TargetID) pairs of scope: the
// result has the id for each pair that has one, "" otherwise.
//
// The hashes of open alerts and of schedules hold ids and targets as their 12 bytes
// (targetField, docField: 16 bytes of Redis's memory each rather than 32); entries written
// before, under the whole target or id, are still found (each read asks for both).
func (s *Store) OpenAlertIDs(ctx context.Context, sc Scope, pairs [][2]string) ([]string, error) {
	out := make([]string, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	// One HMGET a configuration: a batch of observations names hundreds of targets of a few.
	var configs []string
	byConfig := map[string][]int{} // configuration -> indexes of its pairs
	for i, p := range pairs {
		if _, ok := byConfig[p[0]]; !ok {
			configs = append(configs, p[0])
		}
		byConfig[p[0]] = append(byConfig[p[0]], i)
	}
	cmds := make([]*redis.SliceCmd, len(configs))
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for j, config := range configs {
			fields := make([]string, 0, 2*len(byConfig[config]))
			for _, i := range byConfig[config] {
				fields = append(fields, targetField(pairs[i][1]), pairs[i][1])
			}
			cmds[j] = pipe.HMGet(ctx, sc.opens(config), fields...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for j, c := range cmds {
		vals := c.Val()
		for k, i := range byConfig[configs[j]] {
			for _, v := range vals[2*k : 2*k+2] {
				if id, ok := v.(string); ok {
					out[i] = idOfField(id)
					break
				}
			}
		}
	}
	return out, nil
}

// Change is what the engine decided about one alert: its new state, when to look at it next
// (zero: never, it ended), the events to record and the notices to send (opaque to the store;
// they go to the outbox, held until OutboxUntil, in one entry with the notices of the other
// changes of the transaction held as long: OutboxEntry). Status changes move index entries.
type Change struct {
	Tracked     Tracked
	PrevStatus  string // "" for a new alert
	Wake        time.Time
	Events      []herald.Event
	Notices     [][]byte
	OutboxUntil time.Time
}

// ErrConflict is returned by Transact when fn's view went stale and attempts ran out.
var ErrConflict = errors.New("store: alerts kept changing under the engine")

// Transact loads the tracked alerts ids of scope, lets decide say what changes, and commits
// all of it atomically; if any of the alerts' documents changed meanwhile (an acknowledgement
// through the API), it loads them again and asks decide again. Missing alerts are left out of
// what decide sees. decide may return changes for new alerts (PrevStatus ""), which must not
// be active for their configuration and target already (the caller holds the project lock).
// It is fenced: once another session took the project, it commits nothing and answers
// ErrLeaseLost.
func (l *ProjectLock) Transact(ctx context.Context, sc Scope, ids []string, decide func([]Tracked) ([]Change, error)) ([]Change, error) {
	// The documents are watched because the API changes them (acknowledgements); schedules and
	// the rest are the engine's alone, as long as the scope's holder is this session: the holder
	// key is watched, and read with the documents. The scope's due set is watched too, so that
	// an acknowledgement's new wake time is not overwritten.
	holder := sc.holder()
	watch := make([]any, 0, len(ids)+3)
	watch = append(watch, "watch", holder, sc.due())
	for _, id := range ids {
		watch = append(watch, sc.alerts().doc(id))
	}
	s := l.s
	// A Cluster client picks the node of a transaction by its watched keys: it is given the
	// holder, whose WATCH then costs a round trip of its own. One node needs none.
	var slotKeys []string
	if !s.oneNode {
		slotKeys = []string{holder}
	}
	for range 10 {
		var changes []Change
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			return l.transactOnce(ctx, tx, sc, ids, watch, decide, &changes)
		}, slotKeys...)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		return changes, err
	}
	return nil, ErrConflict
}

// transactOnce is one try of Transact on tx: the WATCH goes in the round trip of the reads,
// ahead of them, so that a commit costs two round trips, the reads and the MULTI/EXEC. Redis
// runs a connection's commands in order, so the reads see nothing older than the watch. A try
// that ends before its EXEC (nothing to change, the lease lost, an error) sends UNWATCH, so
// that its connection goes back to the pool watching nothing: go-redis does so only for the
// watches of Tx.Watch, which would cost a round trip of its own.
func (l *ProjectLock) transactOnce(ctx context.Context, tx *redis.Tx, sc Scope, ids []string, watch []any,
	decide func([]Tracked) ([]Change, error), changes *[]Change) error {
	watching := true
	defer func() {
		if watching {
			_ = tx.Unwatch(context.WithoutCancel(ctx)).Err()
		}
	}()
	var held *redis.StringCmd
	loaded, err := l.s.loadTracked(ctx, tx, sc, ids, func(pipe redis.Pipeliner) {
		pipe.Do(ctx, watch...)
		held = pipe.Get(ctx, sc.holder())
	})
	if err != nil {
		return err
	}
	if held.Val() != l.token {
		return ErrLeaseLost
	}
	if *changes, err = decide(loaded); err != nil {
		return err
	}
	if len(*changes) == 0 {
		return nil
	}
	w := newWrites()
	for i := range *changes {
		if err := w.change(sc, &(*changes)[i]); err != nil {
			return err
		}
	}
	_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		w.queue(ctx, pipe)
		return nil
	})
	// EXEC ends the watch, whether it committed or not (a watched key changed, or Redis
	// refused a queued command); another error may have come before it.
	if err == nil || errors.Is(err, redis.TxFailedErr) || redis.IsExecAbortError(err) {
		watching = false
	}
	return err
}

// loadTracked reads the alerts ids of scope with their schedules, leaving out the ended ones;
// also, when not nil, queues its own reads in the same round trip (whose errors other than
// redis.Nil are loadTracked's).
func (s *Store) loadTracked(ctx context.Context, rdb redis.Cmdable, sc Scope, ids []string, also func(redis.Pipeliner)) ([]Tracked, error) {
	if len(ids) == 0 {
		if also != nil {
			if _, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error { also(pipe); return nil }); err != nil && !errors.Is(err, redis.Nil) {
				return nil, err
			}
		}
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = sc.alerts().doc(id)
	}
	var docs, scheds, expiring *redis.SliceCmd
	if _, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		if also != nil {
			also(pipe)
		}
		docs = pipe.MGet(ctx, keys...)
		scheds = pipe.HMGet(ctx, sc.schedules(), scheduleFields(ids)...)
		expiring = pipe.HMGet(ctx, sc.expiring(), ids...)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) { // only also's reads may find nothing
		return nil, err
	}
	out := make([]Tracked, 0, len(ids))
	for i, id := range ids {
		doc, ok1 := docs.Val()[i].(string)
		sched, ok2 := scheds.Val()[i].(string)
		if !ok2 {
			sched, ok2 = scheds.Val()[len(ids)+i].(string) // written before under the whole id
		}
		if !ok1 || !ok2 {
			continue // ended, or never was
		}
		t := Tracked{Scope: sc}
		if err := decodeDocAt(keys[i], doc, &t.Alert); err != nil {
			return nil, fmt.Errorf("store: decode alert %s: %w", id, err)
		}
		var err error
		if t.Schedule, t.Target, err = decodeSchedule([]byte(sched)); err != nil {
			return nil, fmt.Errorf("store: decode schedule %s: %w", id, err)
		}
		if e, ok := expiring.Val()[i].(string); ok {
			if t.Schedule.Expires, ok = entryExpires(e); !ok {
				return nil, fmt.Errorf("store: decode expiry %s: %q", id, e)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// change gathers one alert's change: document, indexes, schedule, due time, the
// configuration-and-target entry, notices, events.
func (w *writes) change(sc Scope, c *Change) error {
	k := w.scopeKeys(sc)
	a := &c.Tracked.Alert
	// The alert's field in the schedules and its value in the open alerts' hash (docField), and
	// its member in the indexes and the due set (indexMember, dueMember), each given to the
	// commands as one interface value, made once.
	var field any = docField(a.ID)
	member := k.alerts.indexMember(a.ID)
	var memberArg any = member
	docKey := k.docPrefix + a.ID
	b, err := encodeAlertAt(docKey, a)
	if err != nil {
		return fmt.Errorf("store: encode alert %s: %w", a.ID, err)
	}
	w.mSet(docKey, b)
	if !a.LastNotified.IsZero() { // read from a document written before it was kept apart
		w.cmds = append(w.cmds, []any{"hsetnx", sc.reach(a.ID), notifiedField, a.LastNotified.Unix()})
	}
	moveAlertIndexes(k.alerts, *a, c.PrevStatus, member, k.index,
		func(key string, z redis.Z) { w.zAdd(key, z.Score, z.Member) }, w.zRem)
	if herald.Active(a.Status) {
		b, err := encodeSchedule(c.Tracked.Schedule, c.Tracked.Target)
		if err != nil {
			return err
		}
		w.hSet(k.schedules, field, b)
		if c.PrevStatus == "" {
			w.hSet(k.opensOf(a.AlertConfigID), targetField(c.Tracked.Target), field)
		}
	} else {
		w.hDel(k.schedules, field)
		w.hDel(k.schedules, a.ID)
		w.hDel(k.opensOf(a.AlertConfigID), targetField(c.Tracked.Target))
		w.hDel(k.opensOf(a.AlertConfigID), c.Tracked.Target)
	}
	switch {
	case c.Wake.IsZero() || !herald.Active(a.Status):
		w.zRem(k.due, sc.dueMembers(a.ID)...)
	default:
		if c.PrevStatus != "" {
			w.zRem(k.due, a.ID) // an entry written before, by the whole id (removals go first)
		}
		w.zAdd(k.due, float64(c.Wake.UnixMilli()), memberArg) // dueMember
	}
	w.expiring(sc, c)
	w.notices(k.outbox, c.OutboxUntil, c.Notices)
	for i := range c.Events {
		if err := w.event(k, &c.Events[i]); err != nil {
			return err
		}
	}
	return nil
}

// notifiedField is the field of an alert's reach hash (reach.go) that holds its lastNotified:
// the unix second of its last delivery that succeeded. It is kept apart from the alert's
// document, so that setting it touches nothing else of the alert, and in the hash every
// notified alert has already, where it costs a few bytes. No target is named so (targets
// start with a notification's index).
const notifiedField = "n"

// readNotified is the read of alert id's lastNotified, in the reach hash of scope sc: an
// answer for setNotified.
func readNotified(ctx context.Context, rdb redis.Cmdable, sc Scope, id string) *redis.StringCmd {
	return rdb.HGet(ctx, sc.reach(id), notifiedField)
}

// markNotified sets the lastNotified of the alerts whose reach hashes are KEYS[2...] to
// ARGV[2...] (unix seconds) where that is later, so that it never moves back. With a token
// ARGV[1] it is fenced (KEYS[1] the holder key); with an empty one, as a retry task runs it,
// it is not.
var markNotified = redis.NewScript(`
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('` + leaseLostReply + `') end
for i = 2, #KEYS do
  local was = tonumber(redis.call('HGET', KEYS[i], '` + notifiedField + `'))
  if not was or was < tonumber(ARGV[i]) then redis.call('HSET', KEYS[i], '` + notifiedField + `', ARGV[i]) end
end
return 1
`)

// MarkNotified sets lastNotified of alerts to the time of their last successful delivery,
// never moving it back. It is for retry tasks, which hold no lease; a session's is
// ProjectLock.MarkNotified.
func (s *Store) MarkNotified(ctx context.Context, sc Scope, at map[string]time.Time) error {
	return s.markNotified(ctx, sc, "", at)
}

// MarkNotified is Store.MarkNotified for the session holding l, fenced: once another session
// took the project, it changes nothing and answers ErrLeaseLost.
func (l *ProjectLock) MarkNotified(ctx context.Context, sc Scope, at map[string]time.Time) error {
	return leaseLost(l.s.markNotified(ctx, sc, l.token, at))
}

// markNotified is MarkNotified, fenced by token unless it is "".
func (s *Store) markNotified(ctx context.Context, sc Scope, token string, at map[string]time.Time) error {
	keys, args := make([]string, 1, len(at)+1), make([]any, 1, len(at)+1)
	keys[0], args[0] = sc.holder(), token
	for id, t := range at {
		if t.IsZero() {
			continue // never delivered: nothing to set
		}
		keys, args = append(keys, sc.reach(id)), append(args, t.Unix())
	}
	if len(keys) == 1 {
		return nil
	}
	return markNotified.Run(ctx, s.rdb, keys, args...).Err()
}

// alertScope is the scope of alert a of collection cs, whose reach hash holds its lastNotified.
func alertScope(cs collection, a *herald.Alert) Scope {
	if cs.name == globalAlerts().name {
		return Scope{GroupID: a.GroupID, Global: true}
	}
	return Scope{GroupID: cs.groupID()}
}

// setNotified sets a's lastNotified to what its reach hash holds (an HGET's answer) where that
// is later than what its document held (one written before lastNotified was kept apart).
func setNotified(a *herald.Alert, cmd *redis.StringCmd) error {
	n, err := cmd.Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		return err
	}
	if t := herald.At(time.Unix(n, 0)); t.After(a.LastNotified.Time) {
		a.LastNotified = t
	}
	return nil
}

// withNotified sets the lastNotified of alerts of cs from their reach hashes, in one round trip.
func (s *Store) withNotified(ctx context.Context, cs collection, alerts []herald.Alert) error {
	if len(alerts) == 0 {
		return nil
	}
	cmds := make([]*redis.StringCmd, len(alerts))
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := range alerts {
			cmds[i] = readNotified(ctx, pipe, alertScope(cs, &alerts[i]), alerts[i].ID)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i := range alerts {
		if err := setNotified(&alerts[i], cmds[i]); err != nil {
			return err
		}
	}
	return nil
}

// keepNotified queues moving a's lastNotified, read from a document written before it was
// kept apart, into its reach hash, unless a time is there already (set since, so later): the
// document is written without it.
func keepNotified(ctx context.Context, pipe redis.Pipeliner, cs collection, a *herald.Alert) {
	if !a.LastNotified.IsZero() {
		pipe.HSetNX(ctx, alertScope(cs, a).reach(a.ID), notifiedField, a.LastNotified.Unix())
	}
}

// Schedule reads the engine's schedule of an active alert, with its expiry if it has one.
func (s *Store) Schedule(ctx context.Context, sc Scope, alertID string) (herald.Schedule, error) {
	vals, err := s.rdb.HMGet(ctx, sc.schedules(), scheduleFields([]string{alertID})...).Result()
	if err != nil {
		return herald.Schedule{}, err
	}
	var sched herald.Schedule
	found := false
	for _, v := range vals {
		if b, ok := v.(string); ok {
			if sched, _, err = decodeSchedule([]byte(b)); err != nil {
				return sched, err
			}
			found = true
			break
		}
	}
	if !found {
		return herald.Schedule{}, errAlertNotFound(alertID)
	}
	if e, err := s.rdb.HGet(ctx, sc.expiring(), alertID).Result(); err == nil {
		sched.Expires, _ = entryExpires(e)
	} else if !errors.Is(err, redis.Nil) {
		return sched, err
	}
	return sched, nil
}

// scheduleFields are the fields the schedules of ids may be under: each id's docField, then
// each id whole (as written before).
func scheduleFields(ids []string) []string {
	out := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		out = append(out, docField(id))
	}
	return append(out, ids...)
}
