package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Which targets of an alert have not seen its opening, so that no target sees a resolution
// before the opening it resolves. Only failures write here: a target whose opening reached it
// at once costs nothing.
//
//	{g:<id>}:reach:<alert>               HASH target -> unreached | ended
//	                                              target#s -> an opening or repeat is being retried until (unix ms)
//	                                              target#b -> the delivery whose try that is
//	{global}:reach:<project>:<alert>     the same for a global alert
//
// A target is a notification of the alert, or one person's email or SMS of it. unreached: its
// opening failed (the target answered with a failure) and nothing has reached it since.
// ended: the alert ended before anything reached it; no resolution is sent, and an opening
// tried after it is superseded. No field: what was sent reached the target (or may have: no
// answer came). Kept a week after the last write. Marks written before target#b was (an
// older worker's) have none: they lapse at their time, as all did then.
func (s Scope) reach(alertID string) string {
	if s.Global {
		return key(globalTag, "reach", s.GroupID, alertID)
	}
	return key(groupTag(s.GroupID), "reach", alertID)
}

const reachKept = 7 * 24 * time.Hour

// beginNotice: a retry of an opening or repeat to target ARGV[1] is about to be sent by
// delivery ARGV[4], until ARGV[2] ms at the latest. 0 when the alert ended unseen by the
// target (superseded).
var beginNotice = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == 'ended' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] .. '#s', ARGV[2], ARGV[1] .. '#b', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// endNotice: an opening or repeat to target ARGV[1] was tried. ARGV[2]: 1 when it reached the
// target (or may have), which clears an earlier failed opening; ARGV[4]: 1 when it was the
// opening, whose failure marks the target unreached.
var endNotice = redis.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b')
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == 'ended' then return 0 end
if ARGV[2] == '1' then
  redis.call('HDEL', KEYS[1], ARGV[1])
elseif ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], 'unreached')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
`)

// beginClose: may the resolution to target ARGV[1] be sent at ARGV[2] ms? 1: yes; 0: wait, a
// retry of an opening or repeat is under way; -1: no, nothing reached the target (and nothing
// will now).
var beginClose = redis.NewScript(`
local sending = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '#s'))
if sending and sending > tonumber(ARGV[2]) then return 0 end
if sending then -- a retry that never said how it went may have reached the target
  redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b', ARGV[1])
  return 1
end
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == 'unreached' or v == 'ended' then
  redis.call('HSET', KEYS[1], ARGV[1], 'ended')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return -1
end
return 1
`)

// BeginNotice records that a retry of an opening or repeat of alert alertID is being sent to
// target by delivery by, until until at the latest (a resolution waits behind it meanwhile).
// ok is false when the alert ended unseen by the target: the notice is superseded.
func (s *Store) BeginNotice(ctx context.Context, sc Scope, alertID, target, by string, until time.Time) (bool, error) {
	n, err := beginNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, until.UnixMilli(), reachKept.Milliseconds(), by).Int()
	return n == 1, err
}

// abandonNotice: the try of delivery ARGV[2] to target ARGV[1] that BeginNotice marked will
// never say how it went (its sender died): as when its mark lapses (beginClose), it may have
// reached the target. Another try's mark, or none, is left as it is. Returns 1 when it was
// the mark of that try.
var abandonNotice = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1] .. '#b') == ARGV[2] and redis.call('HEXISTS', KEYS[1], ARGV[1] .. '#s') == 1 then
  redis.call('HDEL', KEYS[1], ARGV[1] .. '#s', ARGV[1] .. '#b', ARGV[1])
  return 1
end
return 0
`)

// AbandonNotice ends the try of delivery by to target of alert alertID that a sender which
// died began (BeginNotice), if its mark is still there: the resolution need not wait for the
// mark to lapse. The caller must hold the delivery's task, so that the try is over (asynq gave
// the task to one worker at a time; its last holder's lease ran out). It reports whether
// there was such a mark.
func (s *Store) AbandonNotice(ctx context.Context, sc Scope, alertID, target, by string) (bool, error) {
	n, err := abandonNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, by).Int()
	return n == 1, err
}

// EndNotice records that an opening or repeat was tried: reached says it reached the target
// or may have (no answer came); opening, that it was the alert's opening.
func (s *Store) EndNotice(ctx context.Context, sc Scope, alertID, target string, reached, opening bool) error {
	return endNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, flag(reached), reachKept.Milliseconds(), flag(opening)).Err()
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
	CloseSend        CloseVerdict = iota // the opening reached the target (or may have): send it
	CloseWait                            // a retry of an opening is under way: try again shortly
	CloseNeverOpened                     // nothing reached the target: not sent, nor anything after
)

// BeginClose decides whether alert alertID's resolution may be sent to target at now.
func (s *Store) BeginClose(ctx context.Context, sc Scope, alertID, target string, now time.Time) (CloseVerdict, error) {
	n, err := beginClose.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, now.UnixMilli(), reachKept.Milliseconds()).Int()
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
