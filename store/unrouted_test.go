package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// A project's unrouted alerts are kept until they end or are forgotten, listed until then,
// and bounded: past herald.MaxUnroutedAlerts a new one is not kept (an alert already kept
// still changes), and a write drops what has ended, so its keys hold no more than that.
func TestUnroutedAlertsEndAndAreBounded(t *testing.T) {
	ctx := t.Context()
	rdb, st, gid := newProject(t)
	t0 := time.Now().Truncate(time.Second) // the alerts' times are kept to the second
	alert := func(name string, ends time.Time) store.UnroutedChange {
		ls := herald.Labels{"alertname": name}
		return store.UnroutedChange{Target: store.TargetID("p" + name),
			Alert: &herald.UnroutedAlert{Labels: ls, StartsAt: herald.At(t0), UpdatedAt: herald.At(t0), EndsAt: herald.At(ends)}}
	}
	listed := func(now time.Time) map[string]time.Time {
		t.Helper()
		got, err := st.UnroutedAlerts(ctx, gid, now, herald.MaxUnroutedAlerts+10)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]time.Time{}
		for _, a := range got {
			out[a.Labels["alertname"]] = a.EndsAt.Time
		}
		return out
	}
	update := func(now time.Time, changes ...store.UnroutedChange) int {
		t.Helper()
		refused, err := lease(t, st, gid).UpdateUnrouted(ctx, gid, changes, now)
		if err != nil {
			t.Fatal(err)
		}
		return refused
	}
	update(t0, alert("A", t0.Add(time.Minute)), alert("B", t0.Add(2*time.Minute)), alert("C", t0.Add(time.Hour)))
	if got := listed(t0); len(got) != 3 {
		t.Fatalf("listed %v, want A, B and C", got)
	}
	// A re-send moves B's end; C is resolved; A's end passes.
	update(t0.Add(30*time.Second), alert("B", t0.Add(5*time.Minute)), store.UnroutedChange{Target: store.TargetID("pC")})
	if got := listed(t0.Add(90 * time.Second)); len(got) != 1 || !got["B"].Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("listed %v, want B alone, ending at +5m", got)
	}
	// Up to the cap: B and MaxUnroutedAlerts-1 more are kept (A, ended, is dropped first);
	// past it, a new one is refused, while B still changes.
	now := t0.Add(2 * time.Minute)
	var many []store.UnroutedChange
	for i := range herald.MaxUnroutedAlerts {
		many = append(many, alert(fmt.Sprint("n", i), t0.Add(time.Hour)))
	}
	if refused := update(now, many...); refused != 1 {
		t.Errorf("%d refused, want the one past the cap", refused)
	}
	if refused := update(now, alert("B", t0.Add(10*time.Minute))); refused != 0 {
		t.Errorf("a kept alert's re-send was refused")
	}
	if got := listed(now); len(got) != herald.MaxUnroutedAlerts || !got["B"].Equal(t0.Add(10*time.Minute)) {
		t.Errorf("%d listed (B ends %v), want %d with B at +10m", len(got), got["B"], herald.MaxUnroutedAlerts)
	}
	prefix := "herald:{g:" + gid + "}:"
	if n, m := rdb.HLen(ctx, prefix+"unrouted").Val(), rdb.ZCard(ctx, prefix+"unrouted-ends").Val(); n != herald.MaxUnroutedAlerts || m != n {
		t.Errorf("the project's keys hold %d alerts and %d ends, want %d", n, m, herald.MaxUnroutedAlerts)
	}
	// Once B ends, a new one is kept in its place.
	if refused := update(t0.Add(11*time.Minute), alert("late", t0.Add(time.Hour))); refused != 0 {
		t.Errorf("after B ended, a new alert was refused")
	}
	if got := listed(t0.Add(11 * time.Minute)); len(got) != herald.MaxUnroutedAlerts || got["B"] != (time.Time{}) || got["late"].IsZero() {
		t.Errorf("after B ended: %d listed, B %v, late %v", len(got), got["B"], got["late"])
	}
}
