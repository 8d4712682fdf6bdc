package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// What each target of an alert saw, so that no target sees a resolution before the opening it
// resolves: a hash per alert with a field per target (a notification, or one person's email or
// SMS of it).
//
//	{g:<id>}:reach:<alert>               HASH target -> reached | closing | ended
//	                                              target#s -> an opening or repeat is being sent until (unix ms)
//	{global}:reach:<project>:<alert>     the same for a global alert
//
// reached: an opening or repeat reached the target (or may have: no answer came). closing: a
// resolution was let through. ended: the alert ended before anything reached the target; no
// resolution is sent, and an opening tried after it is superseded. Kept a week after the
// last write: the alert's notices are settled by then.
func (s Scope) reach(alertID string) string {
	if s.Global {
		return key(globalTag, "reach", s.GroupID, alertID)
	}
	return key(groupTag(s.GroupID), "reach", alertID)
}

const reachKept = 7 * 24 * time.Hour

// beginNotice: an opening or repeat to target ARGV[1] is about to be sent, until ARGV[2] ms at
// the latest. 0 when the alert's resolution was decided already (the notice is superseded).
var beginNotice = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v == 'closing' or v == 'ended' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] .. '#s', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// endNotice: the opening or repeat to target ARGV[1] was tried; ARGV[2] is 1 when it reached
// the target or may have.
var endNotice = redis.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1] .. '#s')
if ARGV[2] == '1' and redis.call('HGET', KEYS[1], ARGV[1]) == false then
  redis.call('HSET', KEYS[1], ARGV[1], 'reached')
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// beginClose: may the resolution to target ARGV[1] be sent at ARGV[2] ms? 1: yes; 0: wait,
// an opening or repeat is being sent; -1: no, nothing reached the target (and nothing will
// now).
var beginClose = redis.NewScript(`
local sending = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '#s'))
if sending and sending > tonumber(ARGV[2]) then return 0 end
local v = redis.call('HGET', KEYS[1], ARGV[1])
local verdict = -1
if v == 'reached' or v == 'closing' or sending then
  redis.call('HSET', KEYS[1], ARGV[1], 'closing')
  verdict = 1
else
  redis.call('HSET', KEYS[1], ARGV[1], 'ended')
end
redis.call('HDEL', KEYS[1], ARGV[1] .. '#s')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return verdict
`)

// BeginNotice records that an opening or repeat of alert alertID is being sent to target
// until until at the latest (a resolution waits behind it meanwhile). ok is false when the
// alert's resolution was decided already: the notice is superseded.
func (s *Store) BeginNotice(ctx context.Context, sc Scope, alertID, target string, until time.Time) (bool, error) {
	n, err := beginNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, until.UnixMilli(), reachKept.Milliseconds()).Int()
	return n == 1, err
}

// EndNotice records that an opening or repeat was tried: reached says it reached the target or
// may have (no answer came).
func (s *Store) EndNotice(ctx context.Context, sc Scope, alertID, target string, reached bool) error {
	r := "0"
	if reached {
		r = "1"
	}
	return endNotice.Run(ctx, s.rdb, []string{sc.reach(alertID)}, target, r, reachKept.Milliseconds()).Err()
}

// CloseVerdict says whether a resolution may be sent.
type CloseVerdict int

// Close verdicts.
const (
	CloseSend        CloseVerdict = iota // an opening reached the target (or may have): send it
	CloseWait                            // an opening is being sent: try again shortly
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
