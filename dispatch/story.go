package dispatch

import (
	"context"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// The engine's log tells each alert's story, derived from what was committed and nothing else,
// so that a line is never written for a step that did not happen: one line at info per
// transition of a committed step (opened, closed, cancelled, acknowledgement expired, a notice
// withheld by a maintenance window) and per recorded attempt that did not deliver (retrying,
// failed, rejected, dead letter, superseded); at debug, every attempt, deliveries included.
// Every line names the project, the alert and its configuration; an attempt's also the
// notification (its index in the configuration and its kind). No line holds a secret: a step
// carries none, and an attempt's reason is what the API shows too.

// stepLines logs the transitions of committed steps of scope sc.
func (e *Engine) stepLines(sc store.Scope, steps []herald.Step) {
	if !e.Log.Core().Enabled(zapcore.InfoLevel) {
		return // a storm commits thousands of steps a second: no fields built for lines not written
	}
	for _, st := range steps {
		for _, t := range transitions(st) {
			e.Log.Info(t, alertFields(st.Alert, sc.Global, zap.String("status", st.Alert.Status))...)
		}
		if len(st.Silenced) > 0 {
			e.Log.Info("alert silenced by a maintenance window: its notices are withheld",
				alertFields(st.Alert, sc.Global, zap.Ints("notifications", st.Silenced))...)
		}
	}
}

// transitions are the messages of the lifecycle transitions a step makes, in the order they
// happen.
func transitions(st herald.Step) []string {
	var out []string
	if st.Opened {
		out = append(out, "alert opened")
	}
	if st.Unacknowledged {
		out = append(out, "alert acknowledgement expired")
	}
	if st.Closed {
		out = append(out, "alert closed")
	}
	if st.Cancelled {
		out = append(out, "alert cancelled: its configuration was edited, disabled or deleted")
	}
	return out
}

// alertFields name an alert in a log line.
func alertFields(a herald.Alert, global bool, more ...zap.Field) []zap.Field {
	fs := []zap.Field{zap.String("groupId", a.GroupID), zap.String("alertId", a.ID),
		zap.String("alertConfigId", a.AlertConfigID), zap.String("eventTypeName", a.EventTypeName)}
	if global {
		fs = append(fs, zap.Bool("global", true))
	}
	return append(fs, more...)
}

// tried is a recorded attempt with the notice it was a delivery of.
type tried struct {
	n notice
	store.Attempt
}

// appendTried appends attempts as paired with their notice.
func appendTried(dst []tried, n notice, as []store.Attempt) []tried {
	for _, a := range as {
		dst = append(dst, tried{n: n, Attempt: a})
	}
	return dst
}

// recordAttempts records attempts in project groupID's log and then, once recorded, logs them.
func (e *Engine) recordAttempts(ctx context.Context, groupID string, ts []tried) error {
	if len(ts) == 0 {
		return nil
	}
	as := make([]store.Attempt, len(ts))
	for i, t := range ts {
		as[i] = t.Attempt
	}
	if err := e.store.RecordAttempts(ctx, groupID, as); err != nil {
		return err
	}
	for _, t := range ts {
		e.attemptLine(t)
	}
	return nil
}

// attemptLine logs one recorded attempt at the level its outcome deserves.
func (e *Engine) attemptLine(t tried) {
	level, msg := attemptLevel(t.Outcome)
	if ce := e.Log.Check(level, msg); ce != nil {
		fs := []zap.Field{zap.String("groupId", t.n.GroupID), zap.String("alertId", t.AlertID),
			zap.String("alertConfigId", t.n.ConfigID), zap.Int("notification", t.n.Notification),
			zap.String("typeName", t.Kind), zap.String("deliveryId", t.DeliveryID), zap.String("event", t.n.Event),
			zap.String("outcome", t.Outcome), zap.Int64("durationMs", t.DurationMs)}
		if t.Global {
			fs = append(fs, zap.Bool("global", true))
		}
		if t.Via != "" {
			fs = append(fs, zap.String("via", t.Via))
		}
		if t.StatusCode != 0 {
			fs = append(fs, zap.Int("statusCode", t.StatusCode))
		}
		if t.Reason != "" {
			fs = append(fs, zap.String("reason", t.Reason))
		}
		ce.Write(fs...)
	}
}

// attemptLevel is the level and message of an attempt's line by its outcome: a delivery is
// routine (debug), and so is one that waits for its target's slot; a retry or a superseded
// notice is worth knowing (info), a delivery that failed for good a warning.
func attemptLevel(outcome string) (zapcore.Level, string) {
	switch outcome {
	case store.OutcomeDelivered:
		return zapcore.DebugLevel, "delivery attempt delivered"
	case store.OutcomeRetrying:
		return zapcore.InfoLevel, "delivery attempt failed: retrying"
	case store.OutcomeSuperseded:
		return zapcore.InfoLevel, "delivery superseded: not sent"
	case store.OutcomePaced: // routine in a storm: one a notice
		return zapcore.DebugLevel, "delivery paced: waiting for its target's slot"
	case store.OutcomeDigested: // routine in a storm: one a notice the digest tells
		return zapcore.DebugLevel, "delivery digested: told in a digest with others"
	case store.OutcomeDeadLetter:
		return zapcore.WarnLevel, "delivery failed for good: a dead letter"
	case store.OutcomeRejected:
		return zapcore.WarnLevel, "delivery rejected: the service refused the credential"
	default:
		return zapcore.WarnLevel, "delivery failed for good"
	}
}
