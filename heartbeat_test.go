package herald

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A heartbeat's deadline is its last ping (or creation) plus its period plus its grace, in
// HERALD_MINUTEs; paused or already missed, it has none. Its status follows.
func TestHeartbeatDeadlineAndStatus(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	h := Heartbeat{PeriodMin: 10, GraceMin: 2, Status: HeartbeatNew, Since: t0}
	if got, want := h.Deadline(time.Second, nil), t0.Add(12*time.Second); !got.Equal(want) {
		t.Fatalf("deadline %v, want %v", got, want)
	}
	if s := h.StatusAt(t0.Add(9*time.Second), time.Second, nil); s != HeartbeatNew {
		t.Errorf("before its due time, never pinged: %s", s)
	}
	if s := h.StatusAt(t0.Add(10*time.Second), time.Second, nil); s != HeartbeatLate {
		t.Errorf("past its due time: %s", s)
	}
	if obs := h.Ping(PingSuccess, "", t0.Add(5*time.Second)); len(obs) != 0 {
		t.Errorf("a ping of a heartbeat without open alerts made %v", obs)
	}
	if got, want := h.Deadline(time.Second, nil), t0.Add(17*time.Second); !got.Equal(want) {
		t.Fatalf("deadline after a ping %v, want %v", got, want)
	}
	o := h.Miss(t0.Add(17 * time.Second))
	if o.EventTypeName != EventTypeHeartbeatMissed || !*o.Active || o.HeartbeatName != h.Name || !h.Deadline(time.Second, nil).IsZero() {
		t.Fatalf("missed: %+v, deadline %v", o, h.Deadline(time.Second, nil))
	}
	if s := h.StatusAt(t0.Add(18*time.Second), time.Second, nil); s != HeartbeatDown {
		t.Errorf("missed: %s", s)
	}
	obs := h.Ping(PingFailure, "boom", t0.Add(20*time.Second))
	if len(obs) != 1 || obs[0].EventTypeName != EventTypeHeartbeatFailed || !*obs[0].Active {
		t.Fatalf("a failure made %+v", obs)
	}
	obs = h.Ping(PingSuccess, "", t0.Add(21*time.Second))
	if len(obs) != 2 || *obs[0].Active || *obs[1].Active || h.Missed || h.Failed || h.Status != HeartbeatUp {
		t.Fatalf("a success after a miss and a failure made %+v (%+v)", obs, h)
	}
	h.Pause(t0)
	if !h.Deadline(time.Second, nil).IsZero() || h.StatusAt(t0, time.Second, nil) != HeartbeatPaused {
		t.Error("a paused heartbeat has a deadline")
	}
}

// A heartbeat condition is about the heartbeat's name: its target, and HEARTBEAT_NAME's value;
// an agent cannot report one.
func TestHeartbeatObservations(t *testing.T) {
	a := Heartbeat{Name: "a"}.Observation(EventTypeHeartbeatMissed, true, time.Now())
	b := Heartbeat{Name: "b"}.Observation(EventTypeHeartbeatMissed, true, time.Now())
	if a.TargetKey() == b.TargetKey() || a.TargetKey() == (Observation{}).TargetKey() {
		t.Errorf("target keys %q %q", a.TargetKey(), b.TargetKey())
	}
	rule := AlertRule{EventTypeName: EventTypeHeartbeatMissed, Enabled: true,
		Matchers: []Matcher{{FieldName: "HEARTBEAT_NAME", Operator: "EQUALS", Value: "a"}}}
	if !rule.Matches(a) || rule.Matches(b) {
		t.Error("HEARTBEAT_NAME does not select by the heartbeat's name")
	}
	if err := a.Validate(0); err == nil {
		t.Error("an agent may report HEARTBEAT_MISSED")
	}
}

// A failure's alert keeps the last lines of the ping's body, within its bounds.
func TestHeartbeatFailureOutput(t *testing.T) {
	for _, c := range []struct {
		in   string
		n, m int
		want string
	}{
		{"a\nb\nc\n", 2, 100, "b\nc"},
		{"a\nb\nc", 5, 100, "a\nb\nc"},
		{"one\ntwo\nthree", 5, 9, "two\nthree"},
		{"one\ntwo\nthree", 5, 8, "three"},
		{"ééé", 5, 3, "é"},
		{"", 5, 10, ""},
	} {
		if got := LastLines(c.in, c.n, c.m); got != c.want {
			t.Errorf("LastLines(%q, %d, %d) = %q, want %q", c.in, c.n, c.m, got, c.want)
		}
	}
	h := Heartbeat{Name: "job"}
	obs := h.Ping(PingFailure, "step 1\nerror: disk full\n", time.Now())
	if len(obs) != 1 || obs[0].Annotations[HeartbeatOutput] != "step 1\nerror: disk full" {
		t.Fatalf("failure observation %+v", obs)
	}
}

// A long HERALD_MINUTE times the longest period and grace does not wrap round: the heartbeat
// is due and missed after it was last seen, never before.
func TestHeartbeatDeadlineDoesNotWrap(t *testing.T) {
	t0 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	h := Heartbeat{PeriodMin: MaxHeartbeatPeriodMin, GraceMin: MaxHeartbeatGraceMin, Status: HeartbeatUp, Since: t0, LastPing: At(t0)}
	minute := 1_000_000 * time.Hour
	if due, deadline := h.Due(minute, nil), h.Deadline(minute, nil); !due.After(t0) || deadline.Before(due) {
		t.Errorf("since %v: due %v, deadline %v", t0, due, deadline)
	}
	if s := h.StatusAt(t0.Add(time.Hour), minute, nil); s != HeartbeatUp {
		t.Errorf("an hour after its ping: %s", s)
	}
}

// A heartbeat's name is printable: no control character, C0 or C1 (U+0085 breaks lines too).
func TestHeartbeatNameIsPrintable(t *testing.T) {
	noCron := func(string, string) (Cron, error) { return nil, nil }
	for _, name := range []string{"", "a\nb", "a\tb", "a\x7fb", "a\u0085b", "a\u009bb", "\xff"} {
		var h Heartbeat
		err := HeartbeatInput{Name: &name}.Apply(&h, false, noCron)
		if e, ok := err.(*Error); !ok || e.Kind != KindInvalid || h.Name != "" {
			t.Errorf("name %q: %v, stored %q", name, err, h.Name)
		}
	}
	name := "nightly backup – eu"
	var h Heartbeat
	if err := (HeartbeatInput{Name: &name}).Apply(&h, false, noCron); err != nil || h.Name != name {
		t.Errorf("name %q: %v, stored %q", name, err, h.Name)
	}
}

// Runs pair by run id, however they overlap: an end takes its duration from the start of its
// own rid; a start again restarts its run; at most MaxOpenRuns stay open, the oldest forgotten.
func TestHeartbeatPingRunPairs(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 2, 30, 0, 0, time.UTC)
	var h Heartbeat
	h.PingRun(PingStart, "a", "", t0)
	h.PingRun(PingStart, "b", "", t0.Add(time.Second))
	h.PingRun(PingSuccess, "b", "", t0.Add(1500*time.Millisecond))
	if h.LastDurationMs != 500 || len(h.Runs) != 1 || h.Runs[0].RID != "a" {
		t.Fatalf("b ended: %d ms, open %+v", h.LastDurationMs, h.Runs)
	}
	h.PingRun(PingFailure, "a", "", t0.Add(3*time.Second))
	if h.LastDurationMs != 3000 || len(h.Runs) != 0 || !h.Failed {
		t.Fatalf("a failed: %d ms, open %+v, failed %v", h.LastDurationMs, h.Runs, h.Failed)
	}
	h.PingRun(PingStart, "", "", t0)
	h.PingRun(PingStart, "", "", t0.Add(time.Minute)) // restarted
	h.Ping(PingSuccess, "", t0.Add(2*time.Minute))
	if h.LastDurationMs != 60_000 || len(h.Runs) != 0 {
		t.Fatalf("without rid: %d ms, open %+v", h.LastDurationMs, h.Runs)
	}
	h.PingRun(PingSuccess, "never", "", t0.Add(3*time.Minute))
	if h.LastDurationMs != 60_000 {
		t.Errorf("an end without a start changed the last duration to %d ms", h.LastDurationMs)
	}
	for i := range MaxOpenRuns + 2 {
		h.PingRun(PingStart, fmt.Sprint("r", i), "", t0.Add(time.Duration(i)*time.Second))
	}
	if len(h.Runs) != MaxOpenRuns || h.Runs[0].RID != "r2" || h.Runs[MaxOpenRuns-1].RID != fmt.Sprint("r", MaxOpenRuns+1) {
		t.Errorf("after %d starts: %+v", MaxOpenRuns+2, h.Runs)
	}
	for rid, ok := range map[string]bool{"a": true, "0f8fad5b-d9cb-469f-a165-70867728950e": true, "job:nightly.2_x": true,
		"": false, "a b": false, "é": false, "a/b": false, strings.Repeat("x", MaxRunID+1): false} {
		if ValidRunID(rid) != ok {
			t.Errorf("ValidRunID(%q) = %v", rid, !ok)
		}
	}
}
