package store

import (
	"cmp"
	"context"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Reach records, per target of an alert, whether anything of the alert was tried there, so
// that no target gets a resolution without the opening it resolves. It fails safe: a target
// with no record got nothing, and its resolution is withheld.
//
//	{g:<id>}:reach:<alert>               HASH target   -> r: an opening or repeat was tried there
//	                                                       (it reached the target, or may have)
//	                                                    e: the alert ended with nothing tried
//	                                                       there: no resolution, nothing after it
//	                                          target#s -> a retry is being sent until (unix ms)
//	                                          target#b -> the delivery whose retry that is
//	                                          n        -> the alert's lastNotified (unix seconds):
//	                                                       MarkNotified
//	{global}:reach:<project>:<alert>     the same for a global alert
//	{g:<id>}:reach-since, {global}:reach-since
//	                                     STRING unix seconds since when the scope's alerts are
//	                                     recorded so: an older alert's target with no record
//	                                     is read as reached, as it was recorded before
//
// A target is a notification of the alert, or one person's email or SMS of it. The hash
// lives as long as the alert: retention deletes it with the alert (PurgeAlerts).
func (s Scope) reach(alertID string) string {
	if s.Global {
		return key(globalTag, "reach", s.GroupID, alertID)
	}
	return key(groupTag(s.GroupID), "reach", alertID)
}

func (s Scope) reachSince() string {
	if s.Global {
		return key(globalTag, "reach-since")
	}
	return key(groupTag(s.GroupID), "reach-since")
}

// beginNotice: an opening or repeat is about to be tried at target ARGV[1]. It is refused
// (0) when the alert ended unseen there, or is no longer active (its schedule, KEYS[2] field
// ARGV[4] or ARGV[5], is gone). Otherwise the target is marked tried: 1 when nothing was tried
// there before, 2 when something was. A retry (ARGV[2] > 0) also marks itself under way until
// ARGV[2] ms, by delivery ARGV[3], so that a resolution waits behind it.
var beginNotice = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == 'e' or v == 'ended' then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 0 and redis.call('HEXISTS', KEYS[2], ARGV[5]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], 'r')
if ARGV[2] ~= '0' then
  redis.call('HSET', KEYS[1], ARGV[1] .. '#s', ARGV[2], ARGV[1] .. '#b', ARGV[3])
end
if v == 'r' then return 2 end
return 1
`)

// endNotice: the try of delivery ARGV[4] at target ARGV[1] is over. ARGV[2]: 1 when it
// reached the target or may have. A try that did not, at a target nothing was tried at
// before it (ARGV[3] = 0), takes its mark back.
var endNotice = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1] .. '#b') == ARGV[4] then
  redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b')
end
if ARGV[2] == '0' and ARGV[3] == '0' and redis.call('HGET', KEYS[1], ARGV[1]) == 'r' then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
`)

// beginClose: may the resolution to target ARGV[1] be sent at ARGV[2] ms? 1: yes; 0: wait,
// a retry of an opening or repeat is under way; -1: no, nothing was tried there (and nothing
// will be now). An alert created (ARGV[3], unix seconds) before the scope's reach-since
// (KEYS[2], set here if missing) is read as its engine recorded it: no record, reached.
var beginClose = redis.NewScript(`
local sending = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '#s'))
if sending and sending > tonumber(ARGV[2]) then return 0 end
if sending then
  redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b')
end
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == 'r' then return 1 end
if not v then
  redis.call('SET', KEYS[2], math.floor(tonumber(ARGV[2]) / 1000), 'NX')
  if tonumber(ARGV[3]) < tonumber(redis.call('GET', KEYS[2])) then return 1 end
end
redis.call('HSET', KEYS[1], ARGV[1], 'e')
return -1
`)

// abandonNotice: the retry of delivery ARGV[2] at target ARGV[1] will never say how it went
// (its sender died). Its mark under way goes; the target stays marked tried: it may have
// reached it. Returns 1 when that retry's mark was there.
var abandonNotice = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1] .. '#b') == ARGV[2] and redis.call('HEXISTS', KEYS[1], ARGV[1] .. '#s') == 1 then
  redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b')
  return 1
end
return 0
`)

// TrackReach records that sc's alerts created from now on have every try recorded
// (reach-since), unless that was recorded before. An engine calls it before it creates an
// alert in sc.
func (s *Store) TrackReach(ctx context.Context, sc Scope, now time.Time) error {
	return s.rdb.SetNX(ctx, sc.reachSince(), now.Unix(), 0).Err()
}

// Try is what BeginNotice found.
type Try struct {
	OK       bool // the notice may be sent; false: the alert ended (or ended unseen there)
	WasTried bool // something was tried at the target before
}

// BeginNotice records that an opening or repeat of alert alertID is about to be tried at
// target by delivery by. A retry gives until: a resolution waits behind it until then at the
// latest. OK is false when the alert ended since, or ended with nothing tried at the target:
// the notice is superseded.
func (s *Store) BeginNotice(ctx context.Context, sc Scope, alertID, target, by string, until time.Time) (Try, error) {
	untilMs := int64(0)
	if !until.IsZero() {
		untilMs = until.UnixMilli()
	}
	n, err := beginNotice.Run(ctx, s.rdb, []string{sc.reach(alertID), sc.schedules()},
		target, untilMs, by, docField(alertID), alertID).Int()
	return Try{OK: n > 0, WasTried: n == 2}, err
}

// MarkTried records that a session's first try of an opening or repeat of alert alertID is
// about to be sent to target, as BeginNotice does without its checks: the session's own
// notices follow its commits, so their alert is open. It shares its round trip with the
// callers waiting at the same moment. The Try says whether something was tried there before.
func (s *Store) MarkTried(ctx context.Context, sc Scope, alertID, target string) (Try, error) {
	cmd := redis.NewBoolCmd(ctx, "hsetnx", sc.reach(alertID), target, "r")
	if err := s.shared.run(ctx, []redis.Cmder{cmd}); err != nil {
		return Try{}, err
	}
	return Try{OK: true, WasTried: !cmd.Val()}, cmd.Err()
}

// EndNotice records how the try that BeginNotice began went: reached says it reached the
// target or may have (no answer came).
func (s *Store) EndNotice(ctx context.Context, sc Scope, alertID, target, by string, t Try, reached bool) error {
	return endNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, flag(reached), flag(t.WasTried), by).Err()
}

// AbandonNotice ends the retry of delivery by at target of alert alertID that a sender which
// died began, if its mark is still there: the resolution need not wait for the mark to lapse.
// The caller must hold the delivery's task, so that the try is over. It reports whether there
// was such a mark.
func (s *Store) AbandonNotice(ctx context.Context, sc Scope, alertID, target, by string) (bool, error) {
	n, err := abandonNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, by).Int()
	return n == 1, err
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// CloseVerdict says whether a resolution may be sent.
type CloseVerdict int

// Close verdicts.
const (
	CloseSend        CloseVerdict = iota // something was tried at the target: send it
	CloseWait                            // a retry of an opening is under way: try again shortly
	CloseNeverOpened                     // nothing was tried at the target: not sent, nor anything after
)

// BeginClose decides whether alert alertID's resolution may be sent to target at now.
func (s *Store) BeginClose(ctx context.Context, sc Scope, alertID, target string, now time.Time) (CloseVerdict, error) {
	n, err := beginClose.Run(ctx, s.rdb, []string{sc.reach(alertID), sc.reachSince()},
		target, now.UnixMilli(), idCreated(alertID)).Int()
	switch {
	case err != nil:
		return CloseWait, err
	case n == 1:
		return CloseSend, nil
	case n == 0:
		return CloseWait, nil
	}
	return CloseNeverOpened, nil
}

// idCreated is the creation second an id carries. An id of another form reads as created
// last, so that its alert is never taken for an older one.
func idCreated(id string) int64 {
	t, ok := herald.IDTime(id)
	if !ok {
		return math.MaxInt32
	}
	return t.Unix()
}

// Reach names one target of one alert, for the reach checks of many notices at once (a
// digest's): BeginCloses, BeginNotices, EndNotices.
type Reach struct {
	Scope   Scope
	AlertID string
	Target  string
}

// reachBatch is how many reach checks one round trip takes.
const reachBatch = 1000

// BeginCloses is BeginClose for many resolutions, in a round trip per reachBatch (each check
// as BeginClose makes it, in order). Each verdict is its check's; errs[i] is not nil where a
// check failed (its verdict CloseWait). err is the first of them.
func (s *Store) BeginCloses(ctx context.Context, rs []Reach, now time.Time) (vs []CloseVerdict, errs []error, err error) {
	cmds, err := s.runEach(ctx, beginClose, len(rs), func(i int) ([]string, []any) {
		r := rs[i]
		return []string{r.Scope.reach(r.AlertID), r.Scope.reachSince()}, []any{r.Target, now.UnixMilli(), idCreated(r.AlertID)}
	})
	vs, errs = make([]CloseVerdict, len(rs)), make([]error, len(rs))
	for i, c := range cmds {
		n, cerr := c.Int()
		switch {
		case cerr != nil:
			vs[i], errs[i] = CloseWait, cerr
			err = cmp.Or(err, cerr)
		case n == 1:
			vs[i] = CloseSend
		case n == 0:
			vs[i] = CloseWait
		default:
			vs[i] = CloseNeverOpened
		}
	}
	return vs, errs, err
}

// BeginNotices is BeginNotice for many openings or repeats tried by one delivery (by, until
// until), in a round trip per reachBatch. A check that failed has no Try (not OK) and its
// error in errs; err is the first of them.
func (s *Store) BeginNotices(ctx context.Context, rs []Reach, by string, until time.Time) (ts []Try, errs []error, err error) {
	cmds, err := s.runEach(ctx, beginNotice, len(rs), func(i int) ([]string, []any) {
		r := rs[i]
		return []string{r.Scope.reach(r.AlertID), r.Scope.schedules()}, []any{r.Target, until.UnixMilli(), by, docField(r.AlertID), r.AlertID}
	})
	ts, errs = make([]Try, len(rs)), make([]error, len(rs))
	for i, c := range cmds {
		n, cerr := c.Int()
		if cerr != nil {
			errs[i], err = cerr, cmp.Or(err, cerr)
			continue
		}
		ts[i] = Try{OK: n > 0, WasTried: n == 2}
	}
	return ts, errs, err
}

// EndNotices is EndNotice for many tries begun by one delivery (by): ts[i] is the Try of
// rs[i], reached[i] whether it reached its target or may have. It returns how many failed,
// and the first error.
func (s *Store) EndNotices(ctx context.Context, rs []Reach, by string, ts []Try, reached []bool) (failed int, err error) {
	cmds, err := s.runEach(ctx, endNotice, len(rs), func(i int) ([]string, []any) {
		r := rs[i]
		return []string{r.Scope.reach(r.AlertID)}, []any{r.Target, flag(reached[i]), flag(ts[i].WasTried), by}
	})
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil {
			failed, err = failed+1, cmp.Or(err, cerr)
		}
	}
	return failed, err
}

// AbandonNotices is AbandonNotice for many tries begun by one delivery (by), in a round trip
// per reachBatch: the openings of a digest whose sender died, left out when it runs again. It
// returns the first error.
func (s *Store) AbandonNotices(ctx context.Context, rs []Reach, by string) error {
	cmds, err := s.runEach(ctx, abandonNotice, len(rs), func(i int) ([]string, []any) {
		return []string{rs[i].Scope.reach(rs[i].AlertID)}, []any{rs[i].Target, by}
	})
	for _, c := range cmds {
		err = cmp.Or(err, c.Err())
	}
	return err
}

// runEach runs script n times, with item(i)'s keys and arguments, in pipelines of reachBatch:
// one command each, in order. A pipeline whose commands Redis answers NOSCRIPT (its script
// cache lacks the script) has the script loaded and those commands sent again. Each command
// keeps its own reply and error; err is set only when loading the script failed, and then
// every command not run has it.
func (s *Store) runEach(ctx context.Context, script *redis.Script, n int, item func(i int) ([]string, []any)) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, n)
	for lo := 0; lo < n; lo += reachBatch {
		todo := make([]int, 0, min(reachBatch, n-lo))
		for i := lo; i < min(lo+reachBatch, n); i++ {
			todo = append(todo, i)
		}
		for loaded := false; len(todo) > 0; loaded = true {
			pipe := s.rdb.Pipeline()
			for _, i := range todo {
				keys, args := item(i)
				cmds[i] = script.EvalSha(ctx, pipe, keys, args...)
			}
			_, _ = pipe.Exec(ctx) // each command keeps its own error
			again := todo[:0]
			for _, i := range todo {
				if err := cmds[i].Err(); err != nil && !loaded && redis.HasErrorPrefix(err, "NOSCRIPT") {
					again = append(again, i)
				}
			}
			if todo = again; len(todo) == 0 {
				break
			}
			if err := script.Load(ctx, s.rdb).Err(); err != nil {
				for _, i := range todo {
					cmds[i].SetErr(err)
				}
				return cmds, err
			}
		}
	}
	return cmds, nil
}
