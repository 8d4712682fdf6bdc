package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Digest lines: what a target of a kind people read has been sent lately in one project, and
// the notices waiting to go to it together, as one digest. Under the target's pace hash tag,
// so that a line and its bucket share a Redis Cluster slot:
//
//	<line> = {pace:<kind>:<target hash>}:digest:<project>
//	<line>:sent   ZSET  message id -> when it went (unix ms): the notices sent alone and the
//	                    digests, within the window
//	<line>:wait   HASH  delivery id -> the waiting notice (opaque to the store)
//	<line>:mark   HASH  delivery id -> the digest that claimed it
//	<line>:mode   STRING set while the target is being digested
//	<line>:alone  HASH  delivery id -> when it was let go alone: its retry, however late,
//	                    goes alone again rather than into a digest
//	<line>:claim:<digest>  HASH  delivery id -> notice: what digest <digest> stands for
//
// A claim renames the waiting hash: claiming 10,000 notices moves no entry.

// DigestPolicy is how many messages a target takes one by one: at most After in any Window;
// more wait, and go out together as one digest when the window allows. After 0 is no digests.
type DigestPolicy struct {
	After  int
	Window time.Duration
}

// Off says the policy digests nothing.
func (p DigestPolicy) Off() bool { return p.After <= 0 || p.Window <= 0 }

// DigestVerdict is what becomes of a notice at its target's line.
type DigestVerdict int

const (
	// DigestAlone: the notice goes alone, now (paced as any).
	DigestAlone DigestVerdict = iota
	// DigestWait: the notice waits, until the target may take a message again.
	DigestWait
	// DigestClaim: every notice waiting, this one with them, goes out now as one digest.
	DigestClaim
	// DigestClaimed: a digest claimed the notice (DigestTurn.Digest names it).
	DigestClaimed
)

// Decide is the policy's verdict on a notice at now, given when the target's recent messages
// went (any order, older ones ignored) and how many notices wait for it (the notice itself
// among them if it waits already). claim: the notice may claim a digest (a retry task runs
// it); otherwise it waits even when the window allows. until is when the window allows a
// message again (now when it does). The store's script decides the same (digestStep).
func (p DigestPolicy) Decide(sent []time.Time, waiting int, claim bool, now time.Time) (v DigestVerdict, until time.Time) {
	var in []int64
	for _, t := range sent {
		if t.After(now.Add(-p.Window)) {
			in = append(in, t.UnixMilli())
		}
	}
	until = now
	if len(in) >= p.After {
		sort.Slice(in, func(i, j int) bool { return in[i] < in[j] })
		until = time.UnixMilli(in[len(in)-p.After]).Add(p.Window)
	}
	switch open := len(in) < p.After; {
	case open && waiting == 0:
		return DigestAlone, now
	case open && claim:
		return DigestClaim, now
	}
	return DigestWait, until
}

// DigestLine names the line of the target whose pace bucket is targetKey (PaceKey), in
// project groupID.
func DigestLine(targetKey, groupID string) string { return targetKey + ":digest:" + groupID }

// DigestLineTag is the non-secret name of a line's target, for logs: its hash tag.
func DigestLineTag(line string) string {
	if i, j := strings.IndexByte(line, '{'), strings.IndexByte(line, '}'); i >= 0 && j > i {
		return line[i : j+1]
	}
	return ""
}

// DigestLineKind is the kind of a line's target.
func DigestLineKind(line string) string {
	kind, _, _ := strings.Cut(strings.TrimPrefix(DigestLineTag(line), "{pace:"), ":")
	return kind
}

func validLine(line string) bool {
	return strings.HasPrefix(line, "herald:{pace:") && strings.Contains(line, "}:digest:")
}

var errBadLine = errors.New("store: not a digest line")

// DigestID is the id of the digest that delivery id claims: the same on every retry, so that
// a digest built again is the same message (its email keeps its Message-ID).
func DigestID(deliveryID string) string {
	sum := sha256.Sum256([]byte("digest\x00" + deliveryID))
	return hex.EncodeToString(sum[:12])
}

// How long a line's parts are kept: its waiting notices and marks a day after the last
// change (their tasks run long before), its claims as long as a digest's page (given), or
// until the digest was sent (DigestDone).
const digestKeep = 24 * time.Hour

// DigestTurn is what DigestStep found.
type DigestTurn struct {
	Verdict DigestVerdict
	Until   time.Time // DigestWait: when the target may take a message again
	Digest  string    // DigestClaim, DigestClaimed: the digest's id
	Count   int       // DigestClaim: how many notices it stands for
	Started bool      // the target started being digested (its first notice waits)
	Stopped bool      // the target stopped being digested (a notice goes alone again)
}

// digestStep: delivery ARGV[1] (entry ARGV[2]) at line KEYS (sent, wait, mark, mode, the claim
// of digest ARGV[7], alone) at ARGV[3] ms, After ARGV[4], Window ARGV[5] ms, ARGV[6] 1: it may claim.
// As DigestPolicy.Decide, with the line's state: a claimed notice stays claimed, one sent
// alone stays alone (its retry), a waiting one keeps its entry. ARGV[8], ARGV[9]: how long
// the line's parts and its claims are kept (ms).
var digestStep = redis.NewScript(`
local now, after, window, keep = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[8])
local d = redis.call('HGET', KEYS[3], ARGV[1])
if d then return {'claimed', d, 0, 0} end
if redis.call('HEXISTS', KEYS[6], ARGV[1]) == 1 then return {'alone', '', 0, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local open = n < after
if open and redis.call('HLEN', KEYS[2]) == 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], window + 1000)
  redis.call('HSET', KEYS[6], ARGV[1], now)
  redis.call('PEXPIRE', KEYS[6], keep)
  return {'alone', '', 0, redis.call('DEL', KEYS[4])}
end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], keep)
if open and ARGV[6] == '1' then
  redis.call('RENAME', KEYS[2], KEYS[5])
  redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[9]))
  local ids = redis.call('HKEYS', KEYS[5])
  for _, id in ipairs(ids) do redis.call('HSET', KEYS[3], id, ARGV[7]) end
  redis.call('PEXPIRE', KEYS[3], keep)
  redis.call('ZADD', KEYS[1], now, ARGV[7])
  redis.call('PEXPIRE', KEYS[1], window + 1000)
  return {'claim', ARGV[7], #ids, 0}
end
local untilMs = now
if not open then
  untilMs = tonumber(redis.call('ZRANGE', KEYS[1], n - after, n - after, 'WITHSCORES')[2]) + window
end
local started = 0
if redis.call('SET', KEYS[4], '1', 'NX', 'PX', keep) then started = 1 end
return {'wait', untilMs, started, 0}
`)

func lineKeys(line, digestID string) []string {
	return []string{line + ":sent", line + ":wait", line + ":mark", line + ":mode", line + ":claim:" + digestID, line + ":alone"}
}

// DigestStep is the turn of delivery id, whose notice is entry, at line, by policy p at now.
// A notice that waits is kept in the line (entry) until a digest claims it; claim: this
// delivery may claim the digest (DigestID(id)) when the window allows. claimKeep is how long
// a claim is kept for its digest to be built (again, on a retry).
func (s *Store) DigestStep(ctx context.Context, line, id, entry string, p DigestPolicy, claim bool, claimKeep time.Duration, now time.Time) (DigestTurn, error) {
	if !validLine(line) {
		return DigestTurn{}, errBadLine
	}
	c := "0"
	if claim {
		c = "1"
	}
	digest := DigestID(id)
	res, err := digestStep.Run(ctx, s.rdb, lineKeys(line, digest), id, entry, now.UnixMilli(), p.After, p.Window.Milliseconds(),
		c, digest, digestKeep.Milliseconds(), claimKeep.Milliseconds()).Slice()
	if err != nil {
		return DigestTurn{}, err
	}
	if len(res) != 4 {
		return DigestTurn{}, errors.New("store: a digest step answered oddly")
	}
	what, _ := res[0].(string)
	arg, _ := res[1].(string)
	count, _ := res[2].(int64)
	flag, _ := res[3].(int64)
	switch what {
	case "claimed":
		return DigestTurn{Verdict: DigestClaimed, Digest: arg}, nil
	case "alone":
		return DigestTurn{Verdict: DigestAlone, Stopped: flag == 1}, nil
	case "claim":
		return DigestTurn{Verdict: DigestClaim, Digest: arg, Count: int(count)}, nil
	}
	ms, _ := res[1].(int64)
	return DigestTurn{Verdict: DigestWait, Until: time.UnixMilli(ms), Started: count == 1}, nil
}

// digestWithdraw: delivery ARGV[1] leaves line KEYS (wait, mark) unsent: its notice no longer
// holds. Returns the digest that claimed it first, if one did ("" otherwise).
var digestWithdraw = redis.NewScript(`
local d = redis.call('HGET', KEYS[2], ARGV[1])
if d then return d end
redis.call('HDEL', KEYS[1], ARGV[1])
return ''
`)

// DigestWithdraw takes delivery id's notice out of line, unless a digest claimed it first:
// then it returns that digest's id, and the notice is the digest's to tell or leave out.
func (s *Store) DigestWithdraw(ctx context.Context, line, id string) (string, error) {
	if !validLine(line) {
		return "", errBadLine
	}
	return digestWithdraw.Run(ctx, s.rdb, []string{line + ":wait", line + ":mark"}, id).Text()
}

// DigestClaim is what digest id of line stands for: delivery id -> notice. Empty when the
// claim is gone (never made, its time is over, or the digest was sent: DigestDone).
func (s *Store) DigestClaim(ctx context.Context, line, id string) (map[string]string, error) {
	if !validLine(line) {
		return nil, errBadLine
	}
	return s.rdb.HGetAll(ctx, line+":claim:"+id).Result()
}

// DigestDone drops the claim of digest id of line once the digest was sent and each of its
// notices recorded: its task, queued again by its claimer's retry, finds nothing to send. A
// digest that became a dead letter keeps its claim, to be built again when it is replayed.
func (s *Store) DigestDone(ctx context.Context, line, id string) error {
	if !validLine(line) {
		return errBadLine
	}
	return s.rdb.Del(ctx, line+":claim:"+id).Err()
}
