package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// appendAttempt writes what json.Marshal writes of the packed attempt, byte for byte, for
// attempts of every shape: each field set or not, ids of herald's form or not, delivery ids
// that start with the alert's or not, and reasons with what encoding/json escapes (quotes,
// control characters, HTML characters, non-ASCII); after bytes already in the buffer.
func TestAppendAttemptIsJSONMarshal(t *testing.T) {
	var every Attempt
	filled(t, &every, 7)
	now := time.Unix(1_795_496_771, 0)
	alert := herald.NewID(now)
	cases := []Attempt{
		{},
		every,
		{At: herald.At(now), AlertID: alert, DeliveryID: alert + "-0-1", Kind: "WEBHOOK", Outcome: OutcomeDelivered, DurationMs: 3},
		{AlertID: alert, DeliveryID: alert, Outcome: OutcomeRetrying}, // the whole id is the alert's
		{AlertID: "not-an-id", DeliveryID: "elsewhere-1", Global: true, Via: "SMS", StatusCode: 503},
		{DeliveryID: "d", Reason: `target answered "500" <b>&</b> \ tab	line` + "\n\x01\x7f é 日本 \u2028"},
		{At: herald.At(time.Unix(-5, 0)), DurationMs: -2, StatusCode: -1, Outcome: OutcomeSuperseded},
	}
	for _, a := range cases {
		want, err := json.Marshal(packAttempt(a))
		if err != nil {
			t.Fatal(err)
		}
		got := appendAttempt([]byte("prefix"), a)
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%+v:\n got %s\nwant prefix%s", a, got, want)
		}
	}
}

// BenchmarkAppendAttempt is the log entry of a delivery as the engine records it.
func BenchmarkAppendAttempt(b *testing.B) {
	now := time.Unix(1_795_496_771, 0)
	alert := herald.NewID(now)
	a := Attempt{At: herald.At(now), AlertID: alert, DeliveryID: alert + "-0-1", Kind: "WEBHOOK", Outcome: OutcomeDelivered, DurationMs: 3}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = appendAttempt(buf[:0], a)
	}
}
