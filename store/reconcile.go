package store

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// What the scheduler reads and repairs of the engine's state (engine.go): an active alert
// whose due entry was lost (a Redis failover that dropped the last writes, say) would never be
// looked at again, and work that waits with no task coming for it would wait forever.

// repairPage is how many alert ids the repair reads at a time.
const repairPage = 500

// restoreDue puts active alerts back in a due set, due at ARGV[1] (unix ms): KEYS[1] is the
// due set, KEYS[2] and KEYS[3] the scope's TRACKING and OPEN indexes, ARGV[2...] each alert's
// id then its member in the indexes and the due set (indexMember, dueMember; an alert listed
// before is listed by its id). An alert that has a due entry, in either form, keeps it (a due
// time is never moved), and one that is no longer in either index (it ended meanwhile) is
// left out. Returns how many it added.
var restoreDue = redis.NewScript(`
local n = 0
for i = 2, #ARGV, 2 do
  local id, m = ARGV[i], ARGV[i+1]
  if (redis.call('ZSCORE', KEYS[2], m) or redis.call('ZSCORE', KEYS[3], m)
    or redis.call('ZSCORE', KEYS[2], id) or redis.call('ZSCORE', KEYS[3], id))
    and not redis.call('ZSCORE', KEYS[1], id) then
    n = n + redis.call('ZADD', KEYS[1], 'NX', ARGV[1], m)
  end
end
return n
`)

// RepairDue finds the active (TRACKING or OPEN) alerts of project groupID that have a next
// step (TRACKING, a notice still to send or an acknowledgement to expire) but no entry in the
// project's due set, and adds them back due at now; the engine then looks at them as at any
// wake-up. Existing due times are never changed. It returns how many it added. Global alerts
// of the project are RepairGlobalDue's.
//
// The status indexes are read a page at a time; an alert that a concurrent change moves past
// the page being read is found by the next run.
//
// Most runs read three counts and nothing else: while the due set holds at least as many
// entries as there are active alerts that need one, none can be missing one (the engine
// removes an alert's entry in the transaction that ends it), and a million open alerts are
// not read every few seconds to find nothing. Active alerts with nothing more to do rightly
// have no entry: how many the last read of the project found is remembered (for up to
// settledFor, then it reads them again), so that they alone do not make every run read them
// all. A due entry left of an alert that ended meanwhile (the engine forgets it when it comes
// due) can hide a missing one until then.
func (s *Store) RepairDue(ctx context.Context, groupID string, now time.Time) (int, error) {
	sc := Scope{GroupID: groupID}
	var due, tracking, open *redis.IntCmd
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		due = pipe.ZCard(ctx, sc.due())
		tracking = pipe.ZCard(ctx, sc.alerts().index("status", herald.StatusTracking))
		open = pipe.ZCard(ctx, sc.alerts().index("status", herald.StatusOpen))
		return nil
	}); err != nil {
		return 0, err
	}
	if !dueMayBeMissing(due.Val(), tracking.Val()+open.Val(), s.settled.get(groupID, now)) {
		return 0, nil
	}
	var withoutEntry, needing int64
	added := 0
	for _, status := range []string{herald.StatusTracking, herald.StatusOpen} {
		index := sc.alerts().index("status", status)
		for off := int64(0); ; off += repairPage {
			ids, err := s.rdb.ZRange(ctx, index, off, off+repairPage-1).Result()
			if err != nil {
				return added, err
			}
			ids = sc.alerts().idsOfMembers(ids)
			missing, err := s.withoutDue(ctx, sc, ids)
			if err != nil {
				return added, err
			}
			byProject, _, err := s.needingDue(ctx, false, groupID, missing)
			if err != nil {
				return added, err
			}
			withoutEntry, needing = withoutEntry+int64(len(missing)), needing+int64(len(byProject[groupID]))
			n, err := s.restoreDue(ctx, sc, byProject[groupID], now)
			added += n
			if err != nil {
				return added, err
			}
			if len(ids) < repairPage {
				break
			}
		}
	}
	s.settled.set(groupID, withoutEntry-needing, now)
	return added, nil
}

// RepairGlobalDue is RepairDue for the global alerts of every project, in one pass over the
// global status indexes (they list the global alerts of all projects together). It returns
// how many it added back, by project.
//
// As RepairDue, most runs read counts and nothing else: the global active alerts' two, and,
// only when there are any, one a project for its global due set (all in one slot, a pipeline
// a page of projects). A project no longer listed is not counted, which can only make a run
// read the alerts when it need not, never skip one it should.
func (s *Store) RepairGlobalDue(ctx context.Context, now time.Time) (map[string]int, error) {
	added := map[string]int{}
	active, err := s.activeCount(ctx, globalAlerts())
	if err != nil || active == 0 {
		return added, err
	}
	entries, err := s.globalDueEntries(ctx)
	if err != nil {
		return added, err
	}
	if !dueMayBeMissing(entries, active, s.settled.get(globalSettled, now)) {
		return added, nil
	}
	var settled int64 // active alerts with nothing more to do and no entry, as RepairDue counts them
	for _, status := range []string{herald.StatusTracking, herald.StatusOpen} {
		index := globalAlerts().index("status", status)
		for off := int64(0); ; off += repairPage {
			ids, err := s.rdb.ZRange(ctx, index, off, off+repairPage-1).Result()
			if err != nil {
				return added, err
			}
			ids = globalAlerts().idsOfMembers(ids)
			byProject, rest, err := s.needingDue(ctx, true, "", ids)
			if err != nil {
				return added, err
			}
			for gid, ids := range rest {
				without, err := s.withoutDue(ctx, Scope{GroupID: gid, Global: true}, ids)
				if err != nil {
					return added, err
				}
				settled += int64(len(without))
			}
			for gid, ids := range byProject {
				n, err := s.restoreDue(ctx, Scope{GroupID: gid, Global: true}, ids, now)
				if n > 0 {
					added[gid] += n
				}
				if err != nil {
					return added, err
				}
			}
			if len(ids) < repairPage {
				break
			}
		}
	}
	s.settled.set(globalSettled, settled, now)
	return added, nil
}

// globalSettled is the settledMemo entry of the global alerts (no project has an empty id).
const globalSettled = ""

// activeCount is how many alerts of cs are active (TRACKING or OPEN).
func (s *Store) activeCount(ctx context.Context, cs collection) (int64, error) {
	var tracking, open *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		tracking = pipe.ZCard(ctx, cs.index("status", herald.StatusTracking))
		open = pipe.ZCard(ctx, cs.index("status", herald.StatusOpen))
		return nil
	})
	if err != nil {
		return 0, err
	}
	return tracking.Val() + open.Val(), nil
}

// globalDueEntries is how many entries the global due sets of the listed projects hold
// together.
func (s *Store) globalDueEntries(ctx context.Context) (int64, error) {
	var total int64
	for off := int64(0); ; off += repairPage {
		gids, err := s.rdb.ZRange(ctx, projectIndex(), off, off+repairPage-1).Result()
		if err != nil {
			return 0, err
		}
		cards := make([]*redis.IntCmd, len(gids))
		if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for i, gid := range gids {
				cards[i] = pipe.ZCard(ctx, Scope{GroupID: gid, Global: true}.due())
			}
			return nil
		}); err != nil {
			return 0, err
		}
		for _, c := range cards {
			total += c.Val()
		}
		if len(gids) < repairPage {
			return total, nil
		}
	}
}

// dueMayBeMissing reports whether a scope with due entries and active alerts, settled of which
// were last found rightly without an entry, may have an active alert missing its entry: only
// with fewer entries than alerts that need one.
func dueMayBeMissing(entries, active, settled int64) bool { return entries+settled < active }

// settledFor is how long RepairDue trusts its last count of a project's active alerts that
// rightly have no due entry: one lost while another of them ended would go unseen in the
// counts, so the alerts are read again at least this often.
const settledFor = 10 * time.Minute

// settledMemo remembers, by project, how many active alerts RepairDue's last read found with
// nothing more to do (so rightly without a due entry), and when.
type settledMemo struct {
	mu sync.Mutex
	by map[string]settledCount
}

type settledCount struct {
	n  int64
	at time.Time
}

// get is the count found for project groupID within settledFor of now (0: none).
func (m *settledMemo) get(groupID string, now time.Time) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.by[groupID]
	if !ok || now.Sub(c.at) >= settledFor || now.Before(c.at) {
		delete(m.by, groupID)
		return 0
	}
	return c.n
}

// set records what a read of project groupID found at now.
func (m *settledMemo) set(groupID string, n int64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.by == nil {
		m.by = map[string]settledCount{}
	}
	if n <= 0 {
		delete(m.by, groupID)
		return
	}
	m.by[groupID] = settledCount{n: n, at: now}
}

// withoutDue keeps the ids that have no entry, in either form, in the due set of sc.
func (s *Store) withoutDue(ctx context.Context, sc Scope, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([][2]*redis.FloatCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = [2]*redis.FloatCmd{pipe.ZScore(ctx, sc.due(), sc.dueMember(id)), pipe.ZScore(ctx, sc.due(), id)}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	var out []string
	for i, c := range cmds {
		if errors.Is(c[0].Err(), redis.Nil) && errors.Is(c[1].Err(), redis.Nil) {
			out = append(out, ids[i])
		}
	}
	return out, nil
}

// needingDue reads the alerts ids (global, or of project groupID) with their schedules and
// keeps those that are active and have a next step, by project; rest are the active ones with
// nothing more to do (rightly without a due entry), by project.
func (s *Store) needingDue(ctx context.Context, global bool, groupID string, ids []string) (need, rest map[string][]string, err error) {
	need, rest = map[string][]string{}, map[string][]string{}
	if len(ids) == 0 {
		return need, rest, nil
	}
	sc := Scope{GroupID: groupID, Global: global}
	// Ended meanwhile, or without a schedule the engine could act on: left out.
	tracked, err := s.loadTracked(ctx, s.rdb, sc, ids, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tracked {
		a, id := t.Alert, t.Alert.ID
		gid := groupID
		if global {
			gid = a.GroupID
		}
		switch {
		case gid == "" || !herald.Active(a.Status):
		case hasNextStep(a, t.Schedule):
			need[gid] = append(need[gid], id)
		default:
			rest[gid] = append(rest[gid], id)
		}
	}
	return need, rest, nil
}

// hasNextStep reports whether the engine has something to do about an active alert some day:
// open it, send a notice, end its acknowledgement, or close it at its expiry. An alert with nothing more to send
// rightly has no due entry (herald.Advance: Wake zero).
func hasNextStep(a herald.Alert, s herald.Schedule) bool {
	if !herald.Active(a.Status) {
		return false
	}
	if a.Status == herald.StatusTracking || !a.AcknowledgedUntil.IsZero() || !s.Expires.IsZero() {
		return true // (an alert with an expiry closes at it)
	}
	for _, n := range s.Next {
		if !n.IsZero() {
			return true
		}
	}
	return false
}

// restoreDue runs the script on the due set of scope sc.
func (s *Store) restoreDue(ctx context.Context, sc Scope, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 2*len(ids)+1)
	args = append(args, strconv.FormatInt(now.UnixMilli(), 10))
	for _, id := range ids {
		args = append(args, id, sc.alerts().indexMember(id))
	}
	keys := []string{sc.due(), sc.alerts().index("status", herald.StatusTracking), sc.alerts().index("status", herald.StatusOpen)}
	return restoreDue.Run(ctx, s.rdb, keys, args...).Int()
}

// WaitingWork is work of a project that may have no task coming for it.
type WaitingWork struct {
	Observations int64 // observation batches waiting to be evaluated
	Outbox       int64 // outbox entries (each a step's notices: OutboxEntry), project and global, whose sender's lease ran out by now
	// OutboxClaimedUntil is when the earliest notice still claimed by a sender comes back if
	// that sender does not renew it (zero: none is claimed): a sender that died leaves its
	// notices to whoever looks then.
	OutboxClaimedUntil time.Time
}

// Any reports whether anything waits.
func (w WaitingWork) Any() bool { return w.Observations > 0 || w.Outbox > 0 }

// Waiting reports what work of project groupID waits: observation batches, and outbox notices
// whose lease ran out by now (those ClaimOutbox would hand out).
func (s *Store) Waiting(ctx context.Context, groupID string, now time.Time) (WaitingWork, error) {
	var obs, out, gout *redis.IntCmd
	var claimed earliest
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		obs = pipe.LLen(ctx, obsList(groupID))
		out = pipe.ZCount(ctx, Scope{GroupID: groupID}.outbox(), "-inf", ms)
		gout = pipe.ZCount(ctx, Scope{GroupID: groupID, Global: true}.outbox(), "-inf", ms)
		claimed.queueClaims(ctx, pipe, groupID, ms)
		return nil
	})
	if err != nil {
		return WaitingWork{}, err
	}
	return WaitingWork{Observations: obs.Val(), Outbox: out.Val() + gout.Val(), OutboxClaimedUntil: claimed.at()}, nil
}

// NextWork is when project groupID next needs a session, as one ends: its earliest due alert
// (project or global) and when the earliest of its notices that a sender still holds comes
// back if that sender does not renew its claim (each zero: none).
type NextWork struct {
	Due, ClaimedUntil time.Time
}

// ProjectNextWork reads a project's NextWork after now in one round trip.
func (s *Store) ProjectNextWork(ctx context.Context, groupID string, now time.Time) (NextWork, error) {
	var due, claimed earliest
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		due.queueDue(ctx, pipe, groupID)
		claimed.queueClaims(ctx, pipe, groupID, strconv.FormatInt(now.UnixMilli(), 10))
		return nil
	})
	if err != nil {
		return NextWork{}, err
	}
	return NextWork{Due: due.at(), ClaimedUntil: claimed.at()}, nil
}

// ProjectNextDue is when the earliest alert of project groupID, project or global, is due; ok
// is false when none is waiting.
func (s *Store) ProjectNextDue(ctx context.Context, groupID string) (time.Time, bool, error) {
	var due earliest
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		due.queueDue(ctx, pipe, groupID)
		return nil
	})
	if err != nil {
		return time.Time{}, false, err
	}
	at := due.at()
	return at, !at.IsZero(), nil
}

// earliest reads the earliest entry of one sorted set in each of a project's two scopes
// (project and global), by score in unix milliseconds.
type earliest [2]*redis.ZSliceCmd

// projectScopes are a project's two scopes, in earliest's order.
func projectScopes(groupID string) [2]Scope {
	return [2]Scope{{GroupID: groupID}, {GroupID: groupID, Global: true}}
}

// queueDue queues the reads of the earliest due alerts on pipe.
func (e *earliest) queueDue(ctx context.Context, pipe redis.Pipeliner, groupID string) {
	for i, sc := range projectScopes(groupID) {
		e[i] = pipe.ZRangeWithScores(ctx, sc.due(), 0, 0)
	}
}

// queueClaims queues the reads of the earliest outbox claims after ms (milliseconds) on pipe.
func (e *earliest) queueClaims(ctx context.Context, pipe redis.Pipeliner, groupID, ms string) {
	for i, sc := range projectScopes(groupID) {
		e[i] = pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: sc.outbox(), Start: "(" + ms, Stop: "+inf", ByScore: true, Count: 1})
	}
}

// at is the earliest of the entries read (zero: none).
func (e *earliest) at() time.Time {
	var first time.Time
	for _, cmd := range e {
		if zs := cmd.Val(); len(zs) > 0 {
			if at := time.UnixMilli(int64(zs[0].Score)); first.IsZero() || at.Before(first) {
				first = at
			}
		}
	}
	return first
}
