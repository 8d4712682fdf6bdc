package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// A project's delivery attempts are a capped list, newest first: what an operator reads to see
// what Herald tried and how it went. Capped rather than kept per alert, so that 100,000 open
// alerts cost it nothing.
func attemptsList(groupID string) string { return key(groupTag(groupID), "attempts") }

// AttemptsKept is how many attempts a project's log keeps.
const AttemptsKept = 5000

// Attempt is one try at delivering a notice.
type Attempt struct {
	At         herald.Time `json:"at"`
	AlertID    string      `json:"alertId"`
	Global     bool        `json:"global,omitempty"`
	DeliveryID string      `json:"deliveryId"`
	Kind       string      `json:"typeName"`
	Via        string      `json:"via,omitempty"` // EMAIL or SMS, when a notification fans out to people
	Outcome    string      `json:"outcome"`       // DELIVERED, RETRYING, REJECTED, FAILED, DEAD_LETTER, SUPERSEDED, PACED, DIGESTED
	StatusCode int         `json:"statusCode,omitempty"`
	DurationMs int64       `json:"durationMs"`
	Reason     string      `json:"reason,omitempty"`
	// DigestID, on a DIGESTED attempt, is the digest that told the target about the alert
	// (its delivery id and its page's).
	DigestID string `json:"digestId,omitempty"`
	// Waiting, on a PACED attempt, says its notice waits in its target's digest line: it is
	// kept with its alert only (alertTold), not in the project's log, which a storm's waiting
	// notices would fill. Not stored: it says where the attempt is kept.
	Waiting bool `json:"-"`
}

// DigestedReason is the reason of a DIGESTED attempt told in digest id.
func DigestedReason(id string) string { return "told in digest " + id }

// Attempt outcomes.
const (
	OutcomeDelivered  = "DELIVERED"
	OutcomeRetrying   = "RETRYING"
	OutcomeRejected   = "REJECTED"
	OutcomeFailed     = "FAILED"
	OutcomeDeadLetter = "DEAD_LETTER"
	OutcomeSuperseded = "SUPERSEDED" // not sent: what it said is no longer so (Reason says why)
	OutcomePaced      = "PACED"      // not tried yet: it waits for its target's next slot (Reason says until when)
	OutcomeDigested   = "DIGESTED"   // told in a digest with others (DigestID names it), not alone
)

// AttemptOutcomes are the outcomes an attempt has when it is made. DEAD_LETTER is not one:
// it re-marks, in the log, the RETRYING attempt that was its task's last try.
func AttemptOutcomes() []string {
	return []string{OutcomeDelivered, OutcomeRetrying, OutcomeRejected, OutcomeFailed}
}

// attemptDoc is an attempt as the log keeps it: short names, the time in unix seconds, the
// alert's id in 16 characters (packID), and a delivery id that starts with the alert's id (as
// the engine's do) as the rest of it. The full log is the largest fixed cost of a project in
// Redis (5,000 attempts); in the API's form, which it kept before and is still read, an
// attempt took some 170 bytes, in this one some 80. Every field of Attempt has one here (a
// test checks).
type attemptDoc struct {
	At             *int64 `json:"t,omitempty"`
	AlertID        string `json:"a,omitempty"`
	Global         bool   `json:"g,omitempty"`
	DeliveryID     string `json:"d,omitempty"`  // the rest of a delivery id after the alert's id
	DeliveryIDFull string `json:"dw,omitempty"` // a delivery id that does not start with it
	Kind           string `json:"k,omitempty"`
	Via            string `json:"v,omitempty"`
	Outcome        string `json:"o,omitempty"`
	StatusCode     int    `json:"s,omitempty"`
	DurationMs     int64  `json:"ms,omitempty"`
	Reason         string `json:"r,omitempty"`
	DigestID       string `json:"dg,omitempty"`
}

func packAttempt(a Attempt) attemptDoc {
	d := attemptDoc{At: packTime(a.At), AlertID: packID(a.AlertID), Global: a.Global, Kind: a.Kind, Via: a.Via,
		Outcome: a.Outcome, StatusCode: a.StatusCode, DurationMs: a.DurationMs, Reason: a.Reason, DigestID: a.DigestID}
	if rest, ok := strings.CutPrefix(a.DeliveryID, a.AlertID); ok && a.AlertID != "" && rest != "" {
		d.DeliveryID = rest
	} else {
		d.DeliveryIDFull = a.DeliveryID
	}
	return d
}

func (d attemptDoc) unpack() Attempt {
	a := Attempt{At: unpackTime(d.At), AlertID: unpackID(d.AlertID), Global: d.Global, DeliveryID: d.DeliveryIDFull,
		Kind: d.Kind, Via: d.Via, Outcome: d.Outcome, StatusCode: d.StatusCode, DurationMs: d.DurationMs, Reason: d.Reason,
		DigestID: d.DigestID}
	if d.DeliveryID != "" {
		a.DeliveryID = a.AlertID + d.DeliveryID
	}
	return a
}

// decodeAttempt reads an attempt of the log, in either form.
func decodeAttempt(b []byte) (Attempt, bool) {
	if bytes.HasPrefix(b, []byte(`{"at":`)) {
		var a Attempt
		return a, json.Unmarshal(b, &a) == nil
	}
	var d attemptDoc
	if json.Unmarshal(b, &d) != nil {
		return Attempt{}, false
	}
	return d.unpack(), true
}

// RecordAttempts adds attempts to their project's log, in order (the last is the newest), and
// those about digests (DIGESTED, and PACED ones Waiting) to their alert's record instead
// (alertTold): a storm's thousands of them would push every message sent out of the log.
func (s *Store) RecordAttempts(ctx context.Context, groupID string, as []Attempt) error {
	vals := make([]any, 0, len(as))
	told := map[Scope][]any{}
	for _, a := range as {
		b, err := json.Marshal(packAttempt(a))
		if err != nil {
			return err
		}
		if a.Waiting || a.Outcome == OutcomeDigested {
			sc := Scope{GroupID: groupID, Global: a.Global}
			if told[sc], err = appendTold(told[sc], a); err != nil {
				return err
			}
			continue
		}
		vals = append(vals, b)
	}
	if len(vals) > 0 {
		k := attemptsList(groupID)
		pipe := s.rdb.TxPipeline()
		pipe.LPush(ctx, k, vals...)
		pipe.LTrim(ctx, k, 0, AttemptsKept-1)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	for sc, args := range told {
		for chunk := range slices.Chunk(args, toldWrite*3) {
			if err := recordTold.Run(ctx, s.rdb, []string{sc.told()}, append([]any{toldKept, toldTTL.Milliseconds()}, chunk...)...).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Each alert told of in digests keeps its own record of them: a storm's DIGESTED attempts
// (one per alert and target, tens of thousands) fill the capped log many times over, yet each
// alert's deliveries must say which digest told whom about it.
//
//	{g:<id>}:told, {global}:told:<project>
//	    HASH  packed alert id -> its last toldKept attempts about digests, newest first, one a
//	          line, in the log's packed form without the alert's id (nor a DIGESTED one's
//	          reason, DigestedReason): a notice waiting (PACED), then, in its place, the digest
//	          that told of it (DIGESTED); one per delivery
//
// The hash lasts as long as a digest's page after its last write; retention deletes an
// alert's field with the alert (PurgeAlerts). A project whose notices are never digested (its
// webhooks) has none.
func (s Scope) told() string {
	if s.Global {
		return key(globalTag, "told", s.GroupID)
	}
	return key(groupTag(s.GroupID), "told")
}

const (
	toldKept  = 16                  // attempts an alert's record keeps: a few targets' opening and resolution
	toldTTL   = 14 * 24 * time.Hour // a digest's page's life (actlink.MaxAge)
	toldWrite = 1000                // attempts one script call records
)

// appendTold appends attempt a to the arguments of recordTold: its alert's field, what names
// its delivery in a line, and its line.
func appendTold(args []any, a Attempt) ([]any, error) {
	d := packAttempt(a)
	d.AlertID = ""
	if a.Outcome == OutcomeDigested && a.Reason == DigestedReason(a.DigestID) {
		d.Reason = ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	needle := `"d":"` + d.DeliveryID + `"`
	if d.DeliveryIDFull != "" || d.DeliveryID == "" {
		needle = `"dw":"` + d.DeliveryIDFull + `"`
	}
	return append(args, packID(a.AlertID), needle, b), nil
}

// recordTold: for each (field, delivery, line) of ARGV from the third, the alert's record at
// KEYS[1] field gets line first and loses any older line of the same delivery (ARGV's plain
// text in it), and keeps ARGV[1] lines at most. The hash lasts ARGV[2] ms.
var recordTold = redis.NewScript(`
local keep = tonumber(ARGV[1])
for i = 3, #ARGV, 3 do
  local out = {ARGV[i + 2]}
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  if cur then
    for line in string.gmatch(cur, '[^\n]+') do
      if #out >= keep then break end
      if not string.find(line, ARGV[i + 1], 1, true) then out[#out + 1] = line end
    end
  end
  redis.call('HSET', KEYS[1], ARGV[i], table.concat(out, '\n'))
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// alertTold reads alert alertID's record of digests (newest first), in project groupID or
// as a global alert of it.
func (s *Store) alertTold(ctx context.Context, groupID, alertID string) ([]Attempt, error) {
	var cmds []*redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, global := range []bool{false, true} {
			cmds = append(cmds, pipe.HGet(ctx, Scope{GroupID: groupID, Global: global}.told(), packID(alertID)))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	var out []Attempt
	for _, c := range cmds {
		for line := range strings.SplitSeq(c.Val(), "\n") {
			var d attemptDoc
			if line == "" || json.Unmarshal([]byte(line), &d) != nil {
				continue
			}
			d.AlertID = packID(alertID)
			a := d.unpack()
			if a.Outcome == OutcomeDigested && a.Reason == "" {
				a.Reason = DigestedReason(a.DigestID)
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// Attempts reads a page of a project's attempts, newest first, of one alert when alertID is
// set (the log is capped, so filtering it reads at most AttemptsKept entries).
func (s *Store) Attempts(ctx context.Context, groupID, alertID string, p Page) ([]Attempt, int, error) {
	k := attemptsList(groupID)
	if alertID == "" {
		var out []Attempt
		vals, err := s.rdb.LRange(ctx, k, int64(p.Offset), int64(p.Offset+p.Limit-1)).Result()
		if err != nil {
			return nil, 0, err
		}
		n, err := s.rdb.LLen(ctx, k).Result()
		if err != nil {
			return nil, 0, err
		}
		for _, v := range vals {
			if a, ok := decodeAttempt([]byte(v)); ok {
				out = append(out, a)
			}
		}
		return out, int(n), nil
	}
	vals, err := s.rdb.LRange(ctx, k, 0, AttemptsKept-1).Result()
	if err != nil {
		return nil, 0, err
	}
	var logged []Attempt
	for _, v := range vals {
		if a, ok := decodeAttempt([]byte(v)); ok && a.AlertID == alertID {
			logged = append(logged, a)
		}
	}
	told, err := s.alertTold(ctx, groupID, alertID)
	if err != nil {
		return nil, 0, err
	}
	all := mergeAttempts(logged, told)
	lo, hi := min(p.Offset, len(all)), min(p.Offset+p.Limit, len(all))
	return all[lo:hi], len(all), nil
}

// mergeAttempts merges an alert's attempts of the log and of its record of digests, both
// newest first, into one list newest first (the log's first at the same second); an attempt
// in both is listed once.
func mergeAttempts(logged, told []Attempt) []Attempt {
	type id struct{ delivery, outcome, digest string }
	inLog := map[id]bool{}
	for _, a := range logged {
		if a.Outcome == OutcomeDigested {
			inLog[id{a.DeliveryID, a.Outcome, a.DigestID}] = true
		}
	}
	out := make([]Attempt, 0, len(logged)+len(told))
	i := 0
	for _, a := range told {
		if inLog[id{a.DeliveryID, a.Outcome, a.DigestID}] {
			continue
		}
		for i < len(logged) && !logged[i].At.Before(a.At.Time) {
			out = append(out, logged[i])
			i++
		}
		out = append(out, a)
	}
	return append(out, logged[i:]...)
}
