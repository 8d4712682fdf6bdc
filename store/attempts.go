package store

import (
	"context"
	"encoding/json"
	"fmt"

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

// RecordAttempts adds attempts to their project's log.
func (s *Store) RecordAttempts(ctx context.Context, groupID string, as []Attempt) error {
	if len(as) == 0 {
		return nil
	}
	vals := make([]any, len(as))
	for i, a := range as {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("store: encode attempt: %w", err)
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
			var a Attempt
			if json.Unmarshal([]byte(v), &a) == nil {
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
		var a Attempt
		if json.Unmarshal([]byte(v), &a) == nil && a.AlertID == alertID {
			all = append(all, a)
		}
	}
	lo, hi := min(p.Offset, len(all)), min(p.Offset+p.Limit, len(all))
	return all[lo:hi], len(all), nil
}
