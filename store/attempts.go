package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

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
}

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

// RecordAttempts adds attempts to their project's log.
func (s *Store) RecordAttempts(ctx context.Context, groupID string, as []Attempt) error {
	if len(as) == 0 {
		return nil
	}
	vals := make([]any, len(as))
	for i, a := range as {
		b, err := json.Marshal(packAttempt(a))
		if err != nil {
			return err
		}
		vals[i] = b
	}
	k := attemptsList(groupID)
	pipe := s.rdb.TxPipeline()
	pipe.LPush(ctx, k, vals...)
	pipe.LTrim(ctx, k, 0, AttemptsKept-1)
	_, err := pipe.Exec(ctx)
	return err
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
	var all []Attempt
	for _, v := range vals {
		if a, ok := decodeAttempt([]byte(v)); ok && a.AlertID == alertID {
			all = append(all, a)
		}
	}
	lo, hi := min(p.Offset, len(all)), min(p.Offset+p.Limit, len(all))
	return all[lo:hi], len(all), nil
}
