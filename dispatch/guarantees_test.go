package dispatch_test

import (
	"testing"
	"time"
)

// An agent re-reporting a condition that still holds changes nothing about when the alert's
// next step is due: TRACKING turns OPEN on time and repeats keep their cadence, with no
// scheduler running to repair the schedule.
func TestReReportsKeepTheSchedule(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(2, 5)}})
	start := time.Now()
	r.observe(hostDown("h1", true))
	detected := time.Time{}
	const span = 3 * time.Second
	for time.Since(start) < span {
		time.Sleep(100 * time.Millisecond)
		r.observe(hostDown("h1", true))
		if detected.IsZero() {
			if as := r.alerts(""); len(as) == 1 {
				detected = r.schedule(as[0]["id"].(string)).Detected
			}
		}
	}
	if detected.IsZero() {
		t.Fatal("no alert")
	}
	got := r.recv.deliveries()
	if len(got) == 0 {
		t.Fatal("the alert never opened while its condition was re-reported")
	}
	if d := got[0].At.Sub(detected.Add(2 * minute)); d > late {
		t.Errorf("opened %s late", d)
	}
	// Slots at 2, 7, 12, ... minutes after detection: all those before the end of the span.
	want := 1 + int((time.Since(detected)-2*minute-late)/(5*minute))
	if len(got) < want-1 {
		t.Errorf("%d notices in %s of re-reports, want about %d (one per interval)", len(got), span, want)
	}
	checkNotEarly(t, got, detected.Add(2*minute), 5*minute)
}
