package dispatch_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
)

// A batch dated 1700 (as the API took it before it bounded times, and as one may still wait in
// a queue) flooded its webhook: the next slot's arithmetic overflowed and landed in the past,
// due again at every step. Now the alert is notified once at once, then once a slot: the
// notices are numbered 1, 2, 3 without a repeat, and the third comes a whole interval after
// the first was decided.
func TestPastDatedBatchNotifiesOncePerSlot(t *testing.T) {
	const minute = 200 * time.Millisecond
	const interval = 5 * minute // intervalMin 5
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	o := hostDown("h1", true)
	o["at"] = "1700-01-01T00:00:00Z"
	batch, err := json.Marshal([]any{o})
	if err != nil {
		t.Fatal(err)
	}
	d := dispatch.NewDispatcher(r.Store, herald.SystemClock{})
	t.Cleanup(func() { d.Close() })
	if err := d.Observe(context.Background(), r.project, batch); err != nil {
		t.Fatal(err)
	}

	a := r.onlyAlert("OPEN")
	if a["created"] != "1700-01-01T00:00:00Z" {
		t.Errorf("created %v, want the observation's time", a["created"])
	}
	got := r.recv.waitCount(t, 3, 10*time.Second)[:3]
	seqs := []int{seqOf(t, got[0]), seqOf(t, got[1]), seqOf(t, got[2])}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int{1, 2, 3}) {
		t.Errorf("the first three notices are numbered %v, want 1, 2, 3", seqs)
	}
	// The second notice is the first slot after the first was decided, the third a slot
	// later: more than an interval after the first was decided, which was before it arrived
	// (at most `late` before, on a busy machine).
	if gap := got[2].At.Sub(got[0].At); gap < interval-late {
		t.Errorf("three notices within %s, want more than %s: a slot repeated", gap, interval-late)
	}
	if next := r.schedule(a["id"].(string)).Next[0]; !next.After(got[0].At) || next.Sub(next.Truncate(time.Second)) != 0 {
		t.Errorf("next notice due at %v: want after the first notice, on the cadence (whole seconds from 1700)", next)
	}
}

// A configuration stored with delayMin 2147483647 (before the API bounded it; a common
// "never") opened its alert and notified the moment the condition was detected: the delay
// wrapped (with minutes of a minute: 2147483647 of them overflow a time.Duration). It
// saturates now: the alert stays TRACKING and nothing is sent.
func TestStoredHugeDelayWaits(t *testing.T) {
	r := newRig(t, time.Minute)
	now := time.Now()
	n := herald.Notification{TypeName: "WEBHOOK", DelayMin: 2147483647, IntervalMin: 60, Fields: map[string]string{"webhookUrl": r.recv.url(), "webhookSecret": webhookSecret}}
	cfg := herald.AlertConfig{ID: herald.NewID(now), GroupID: r.project, Created: herald.At(now), Updated: herald.At(now),
		AlertRule: herald.AlertRule{Enabled: true, EventTypeName: "HOST_DOWN", Notifications: []herald.Notification{n}}}
	if err := r.Store.CreateAlertConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	r.observe(hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { return len(r.alerts("")) == 1 }) {
		t.Fatalf("no alert: %s", r.failedTasks())
	}
	r.waitEngineIdle(10 * time.Second)
	if a := r.alerts(""); len(a) != 1 || a[0]["status"] != "TRACKING" {
		t.Errorf("want one TRACKING alert: %v", a)
	}
	if got := r.recv.deliveries(); len(got) != 0 {
		t.Errorf("%d notices sent for a delay of 2147483647 minutes: %+v", len(got), got)
	}
}
