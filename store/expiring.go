package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Alerts that end unless reported again (alerts from Prometheus, whose schedule has an
// Expires) keep one more entry beside their schedule:
//
//	{g:<id>}:expiring         HASH alert -> "<expires ms> <wake-if-renewed ms, 0: none> <refresh digest>"
//	{global}:expiring:<id>    the same for the project's global alerts
//
// so that a re-report that changes nothing but the expiry (Prometheus re-sends every firing
// alert every few seconds) is applied by one script per batch without reading or rewriting the
// alert: RenewExpiring. The alert's due time is always the earlier of the two times; a renewal
// moves it only while it is still the one the engine committed (not claimed by a session, not
// moved earlier by an acknowledgement).

func (s Scope) expiring() string {
	if s.Global {
		return key(globalTag, "expiring", s.GroupID)
	}
	return key(groupTag(s.GroupID), "expiring")
}

// expiringEntry is the entry of an active alert with an expiry.
func expiringEntry(a herald.Alert, sched herald.Schedule) string {
	var wake int64
	if w := herald.WakeIfRenewed(a, sched); !w.IsZero() {
		wake = w.UnixMilli()
	}
	return strconv.FormatInt(sched.Expires.UnixMilli(), 10) + " " + strconv.FormatInt(wake, 10) + " " + a.RefreshDigest()
}

// entryExpires is the expiry an entry holds; false for a malformed one.
func entryExpires(v string) (time.Time, bool) {
	ms, _, ok := strings.Cut(v, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(n), true
}

// expiring records (or, once it ended, drops) the entry of an alert with an expiry.
func (w *writes) expiring(sc Scope, c *Change) {
	a, sched := c.Tracked.Alert, c.Tracked.Schedule
	switch {
	case sched.Expires.IsZero():
	case herald.Active(a.Status):
		w.hSet(sc.expiring(), a.ID, expiringEntry(a, sched))
	default:
		w.hDel(sc.expiring(), a.ID)
	}
}

// Renewal is a re-report of the active alert of a configuration and target that moves its
// expiry, valid only while the alert's refresh digest is still Digest.
type Renewal struct {
	ConfigID string
	Target   string // TargetID
	Expires  time.Time
	Digest   string
}

// renew applies renewals, fenced (fenceCheck): KEYS[2] the expiring hash, KEYS[3] the due
// set; ARGV[4i-2..4i+1] the active alert of renewal i (empty: none), its new expiry (ms),
// digest, and the alert's member in the due set (dueMember; an entry written before is under
// the id). For each it answers 1 when applied, 0 when the alert needs the engine (none is
// active, it has no expiry, or the re-report changes more than the expiry).
var renew = fenced(`
local out = {}
for j = 1, #ARGV - 4, 4 do
  local ok = 0
  local id = ARGV[j + 1]
  local v = id ~= '' and redis.call('HGET', KEYS[2], id)
  if v then
    local exp, wake, digest = string.match(v, '^(%d+) (%d+) (.*)$')
    if digest == ARGV[j + 3] then
      ok = 1
      local new = ARGV[j + 2]
      if new ~= exp then
        redis.call('HSET', KEYS[2], id, new .. ' ' .. wake .. ' ' .. digest)
        local was, now = exp, new
        if wake ~= '0' and tonumber(wake) < tonumber(was) then was = wake end
        if wake ~= '0' and tonumber(wake) < tonumber(now) then now = wake end
        local m = ARGV[j + 4]
        local due = redis.call('ZSCORE', KEYS[3], m)
        if not due then
          m = id
          due = redis.call('ZSCORE', KEYS[3], m)
        end
        if due and tonumber(due) == tonumber(was) and now ~= was then
          redis.call('ZADD', KEYS[3], now, m)
        end
      end
    end
  end
  out[#out + 1] = ok
end
return out
`)

// RenewExpiring moves the expiry of active alerts of scope that a re-report only renews,
// without reading their documents (two round trips: their ids, then the renewals); the result
// says which renewals were applied. The others (no active alert, or one whose annotations the
// re-report changes) are for the engine's usual path. The caller holds the project's lease, so
// nothing changes the alerts between the two; it is fenced, as a Transact is.
func (l *ProjectLock) RenewExpiring(ctx context.Context, sc Scope, rs []Renewal) ([]bool, error) {
	out := make([]bool, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	pairs := make([][2]string, len(rs))
	for i, r := range rs {
		pairs[i] = [2]string{r.ConfigID, r.Target}
	}
	ids, err := l.s.OpenAlertIDs(ctx, sc, pairs)
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, 4*len(rs))
	for i, r := range rs {
		m := ""
		if ids[i] != "" {
			m = sc.dueMember(ids[i])
		}
		args = append(args, ids[i], r.Expires.UnixMilli(), r.Digest, m)
	}
	res, err := l.runFenced(ctx, renew, sc, []string{sc.expiring(), sc.due()}, args...).Int64Slice()
	if err != nil {
		return nil, leaseLost(err)
	}
	for i := range out {
		out[i] = i < len(res) && res[i] == 1
	}
	return out, nil
}

// wakeNoLaterThan moves alert ARGV[2]'s due time in KEYS[1] (its entry ARGV[3], dueMember, or
// one written before under the id) earlier to ARGV[1] (never later), and the wake-if-renewed
// time of its expiring entry in KEYS[2] (if it has one) with it, so that a renewal never moves
// the due time past it.
var wakeNoLaterThan = redis.NewScript(`
redis.call('ZADD', KEYS[1], 'XX', 'LT', ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', 'LT', ARGV[1], ARGV[2])
local v = redis.call('HGET', KEYS[2], ARGV[2])
if v then
  local exp, wake, digest = string.match(v, '^(%d+) (%d+) (.*)$')
  if exp and (wake == '0' or tonumber(ARGV[1]) < tonumber(wake)) then
    redis.call('HSET', KEYS[2], ARGV[2], exp .. ' ' .. ARGV[1] .. ' ' .. digest)
  end
end
return 1
`)
