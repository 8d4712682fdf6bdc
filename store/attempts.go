package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/jsonfield"
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
	Outcome    string      `json:"outcome"`       // DELIVERED, RETRYING, REJECTED, FAILED, DEAD_LETTER, SUPERSEDED
	StatusCode int         `json:"statusCode,omitempty"`
	DurationMs int64       `json:"durationMs"`
	Reason     string      `json:"reason,omitempty"`
}

// Attempt outcomes.
const (
	OutcomeDelivered  = "DELIVERED"
	OutcomeRetrying   = "RETRYING"
	OutcomeRejected   = "REJECTED"
	OutcomeFailed     = "FAILED"
	OutcomeDeadLetter = "DEAD_LETTER"
	OutcomeSuperseded = "SUPERSEDED" // not sent: what it said is no longer so (Reason says why)
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
}

func packAttempt(a Attempt) attemptDoc {
	d := attemptDoc{At: packTime(a.At), AlertID: packID(a.AlertID), Global: a.Global, Kind: a.Kind, Via: a.Via,
		Outcome: a.Outcome, StatusCode: a.StatusCode, DurationMs: a.DurationMs, Reason: a.Reason}
	if rest, ok := strings.CutPrefix(a.DeliveryID, a.AlertID); ok && a.AlertID != "" && rest != "" {
		d.DeliveryID = rest
	} else {
		d.DeliveryIDFull = a.DeliveryID
	}
	return d
}

func (d attemptDoc) unpack() Attempt {
	a := Attempt{At: unpackTime(d.At), AlertID: unpackID(d.AlertID), Global: d.Global, DeliveryID: d.DeliveryIDFull,
		Kind: d.Kind, Via: d.Via, Outcome: d.Outcome, StatusCode: d.StatusCode, DurationMs: d.DurationMs, Reason: d.Reason}
	if d.DeliveryID != "" {
		a.DeliveryID = a.AlertID + d.DeliveryID
	}
	return a
}

// appendAttempt appends a's entry in the log: json.Marshal(packAttempt(a)) byte for byte,
// written by hand (a storm records one for every delivery, and reflection cost some 0.8 µs of
// a worker's CPU each). Strings go through stored, as the alert documents' do.
func appendAttempt(b []byte, a Attempt) []byte {
	start := len(b)
	b = append(b, '{')
	if !a.At.IsZero() {
		b = strconv.AppendInt(jsonfield.Name(b, "t"), a.At.Unix(), 10)
	}
	b = stored.StringField(b, "a", packID(a.AlertID))
	if a.Global {
		b = append(jsonfield.Name(b, "g"), "true"...)
	}
	if rest, ok := strings.CutPrefix(a.DeliveryID, a.AlertID); ok && a.AlertID != "" && rest != "" {
		b = stored.StringField(b, "d", rest)
	} else {
		b = stored.StringField(b, "dw", a.DeliveryID)
	}
	b = stored.StringField(b, "k", a.Kind)
	b = stored.StringField(b, "v", a.Via)
	b = stored.StringField(b, "o", a.Outcome)
	if a.StatusCode != 0 {
		b = strconv.AppendInt(jsonfield.Name(b, "s"), int64(a.StatusCode), 10)
	}
	if a.DurationMs != 0 {
		b = strconv.AppendInt(jsonfield.Name(b, "ms"), a.DurationMs, 10)
	}
	b = stored.StringField(b, "r", a.Reason)
	if len(b) > start+1 { // every member was written after a comma: the first's goes
		b = append(b[:start+1], b[start+2:]...)
	}
	return append(b, '}')
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
	buf := make([]byte, 0, 96*len(as)) // one buffer for all: an entry of the engine's takes at most 96 bytes
	for i, a := range as {
		start := len(buf)
		buf = appendAttempt(buf, a)
		vals[i] = buf[start:len(buf):len(buf)] // a grown buffer leaves the earlier entries where they were
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
