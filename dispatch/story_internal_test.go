package dispatch

import (
	"slices"
	"testing"

	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Each transition a step makes is one line, in the order it happens.
func TestTransitions(t *testing.T) {
	tests := []struct {
		step herald.Step
		want []string
	}{
		{herald.Step{}, nil},
		{herald.Step{Opened: true}, []string{"alert opened"}},
		{herald.Step{Opened: true, Unacknowledged: true}, []string{"alert opened", "alert acknowledgement expired"}},
		{herald.Step{Closed: true}, []string{"alert closed"}},
		{herald.Step{Cancelled: true}, []string{"alert cancelled: its configuration was edited, disabled or deleted"}},
		{herald.Step{Silenced: []int{0}}, nil}, // a line of its own, with the notifications
	}
	for _, tt := range tests {
		if got := transitions(tt.step); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %q, want %q", tt.step, got, tt.want)
		}
	}
}

// A delivery is routine (debug), and so is a paced one; a retry or a superseded notice is worth knowing (info); a
// delivery that failed for good is a warning.
func TestAttemptLevel(t *testing.T) {
	for outcome, want := range map[string]zapcore.Level{
		store.OutcomeDelivered:  zapcore.DebugLevel,
		store.OutcomeRetrying:   zapcore.InfoLevel,
		store.OutcomeSuperseded: zapcore.InfoLevel,
		store.OutcomePaced:      zapcore.DebugLevel,
		store.OutcomeDeadLetter: zapcore.WarnLevel,
		store.OutcomeRejected:   zapcore.WarnLevel,
		store.OutcomeFailed:     zapcore.WarnLevel,
	} {
		if got, msg := attemptLevel(outcome); got != want || msg == "" {
			t.Errorf("%s: %s %q, want %s", outcome, got, msg, want)
		}
	}
}
