package dispatch_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Timing tolerance: how late a notice may arrive after its due time on a busy 2-core CI
// machine. Early is never allowed.
const late = 800 * time.Millisecond

// seqOf is the notice number of an open/update delivery (its idempotency key ends in it).
func seqOf(t *testing.T, d delivery) int {
	t.Helper()
	i := strings.LastIndexByte(d.Idempotency, '-')
	n, err := strconv.Atoi(d.Idempotency[i+1:])
	if err != nil {
		t.Fatalf("idempotency key %q", d.Idempotency)
	}
	return n
}

// checkNotEarly: no open/update notice arrived before its slot (detected + (n-1) intervals),
// and each is signed.
func checkNotEarly(t *testing.T, ds []delivery, detected time.Time, interval time.Duration) {
	t.Helper()
	for _, d := range ds {
		if !d.SignatureOK {
			t.Errorf("delivery %s: the signature does not verify with the secret", d.Idempotency)
		}
		if d.Event == "alert.close" {
			continue
		}
		if due := detected.Add(time.Duration(seqOf(t, d)-1) * interval); d.At.Before(due) {
			t.Errorf("delivery %s arrived %s before its due time", d.Idempotency, due.Sub(d.At))
		}
	}
}

// open → first notice → repeat → acknowledge (no repeats) → expiry (repeats resume, event) →
// clear (CLOSED, resolution notice), with lastNotified set.
func TestAlertLifeEndToEnd(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	interval := 5 * minute
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	id := a["id"].(string)
	detected := r.schedule(id).Detected

	got := r.recv.waitCount(t, 2, 5*time.Second)
	if got[0].Event != "alert.open" || got[1].Event != "alert.update" {
		t.Fatalf("events %s, %s", got[0].Event, got[1].Event)
	}
	if got[0].Alert["id"] != id || got[0].Alert["status"] != "OPEN" || got[0].Alert["humanReadable"] == "" {
		t.Errorf("webhook body %v", got[0].Alert)
	}
	if d := got[1].At.Sub(detected.Add(interval)); d > late {
		t.Errorf("repeat %s late", d)
	}

	// Acknowledge for a while: nothing is sent until it expires.
	until := time.Now().Add(2 * interval).Truncate(time.Second).Add(time.Second)
	r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{"acknowledgedUntil": until.UTC().Format(time.RFC3339), "acknowledgementComment": "on it"}, 200)
	ackedAt := time.Now()
	before := len(r.recv.deliveries())
	resumed := r.recv.waitCount(t, before+1, time.Until(until)+2*interval+late)[before]
	for _, d := range r.recv.deliveries()[before:] {
		if d.At.After(ackedAt.Add(100*time.Millisecond)) && d.At.Before(until) {
			t.Errorf("a notice at %s while acknowledged until %s", d.At.Format(time.StampMilli), until.Format(time.StampMilli))
		}
	}
	if resumed.At.Before(until) {
		t.Errorf("repeats resumed at %s, before the acknowledgement expired at %s", resumed.At, until)
	}
	evs, _, err := r.Store.Events(context.Background(), store.EventScope{GroupID: r.project},
		store.EventFilter{EventType: herald.EventAlertUnacknowledged}, store.Page{Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].AlertID != id {
		t.Errorf("expiry records ALERT_UNACKNOWLEDGED_AUDIT: %v %v", evs, err)
	}
	if a := r.do("GET", "/groups/"+r.project+"/alerts/"+id, nil, 200); a["acknowledgedUntil"] != nil {
		t.Errorf("still acknowledged after expiry: %v", a)
	}

	// Clear: CLOSED, resolved, and a resolution notice.
	r.observe(hostDown("h1", false))
	closed := r.onlyAlert("CLOSED")
	if closed["resolved"] == nil || closed["lastNotified"] == nil {
		t.Errorf("closed alert lacks resolved or lastNotified: %v", closed)
	}
	if !eventually(5*time.Second, func() bool {
		ds := r.recv.deliveries()
		return ds[len(ds)-1].Event == "alert.close"
	}) {
		t.Fatalf("no resolution notice: %+v", r.recv.deliveries())
	}
	n := len(r.recv.deliveries())
	time.Sleep(2 * interval) // a closed alert stays quiet: bounded, the assertion is below
	all := r.recv.deliveries()
	if len(all) != n {
		t.Errorf("%d notices after closing", len(all)-n)
	}
	checkNotEarly(t, all, detected, interval)
}

// delayMin keeps the alert TRACKING, then opens it with its first notice on time.
func TestDelayKeepsTracking(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(10, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("TRACKING")
	detected := r.schedule(a["id"].(string)).Detected
	if len(r.recv.deliveries()) != 0 {
		t.Fatal("a tracking alert notified")
	}
	r.onlyAlert("OPEN")
	got := r.recv.waitCount(t, 1, 5*time.Second)
	due := detected.Add(10 * minute)
	if got[0].At.Before(due) || got[0].At.Sub(due) > late {
		t.Errorf("first notice at %s, due %s", got[0].At.Format(time.StampMilli), due.Format(time.StampMilli))
	}
}

// A condition that clears while the alert is tracking ends it without any notice.
func TestClearWhileTrackingSendsNothing(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(5, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("TRACKING")
	detected := r.schedule(a["id"].(string)).Detected
	r.observe(hostDown("h1", false))
	r.onlyAlert("CLOSED")
	time.Sleep(time.Until(detected.Add(5*minute + late))) // past when it would have opened
	if ds := r.recv.deliveries(); len(ds) != 0 {
		t.Errorf("notices for an alert that never opened: %+v", ds)
	}
}

// Disabling the configuration cancels its alert: CANCELLED, and no notice of any kind after.
func TestDisablingCancels(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	cfg := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	r.observe(hostDown("h1", true))
	r.onlyAlert("OPEN")
	r.recv.waitCount(t, 1, 5*time.Second)
	r.do("PATCH", "/groups/"+r.project+"/alertConfigs/"+cfg, map[string]any{"enabled": false}, 200)
	r.onlyAlert("CANCELLED")
	n := len(r.recv.deliveries())
	time.Sleep(2 * 5 * minute) // two intervals: a live alert would have repeated twice
	if ds := r.recv.deliveries(); len(ds) != n {
		t.Errorf("notices after cancelling: %+v", ds[n:])
	}
	if cs := r.do("GET", "/groups/"+r.project+"/alertConfigs/"+cfg+"/alerts", nil, 200); cs["totalCount"].(float64) != 0 {
		t.Errorf("a cancelled alert is still listed as open for its configuration")
	}
}

// A maintenance window silences notices of its alert types, and when it ends the alert
// resumes at its next due time without a burst of what the window swallowed.
func TestMaintenanceWindowSilencesThenResumes(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	interval := 5 * minute
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	start := time.Now().Add(-time.Second)
	end := time.Now().Truncate(time.Second).Add(3 * time.Second)
	r.do("POST", "/groups/"+r.project+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"},
		"startDate": start.UTC().Format(time.RFC3339), "endDate": end.UTC().Format(time.RFC3339)}, 200)
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	detected := r.schedule(a["id"].(string)).Detected
	first := r.recv.waitCount(t, 1, time.Until(end)+interval+late)[0]
	if first.At.Before(end) {
		t.Fatalf("a notice at %s inside the window ending %s", first.At.Format(time.StampMilli), end.Format(time.StampMilli))
	}
	if first.At.Sub(end) > interval+late {
		t.Errorf("resumed %s after the window", first.At.Sub(end))
	}
	time.Sleep(interval / 2) // a burst would be several notices at once
	if ds := r.recv.deliveries(); len(ds) > 2 {
		t.Errorf("a burst of %d notices after the window", len(ds))
	}
	checkNotEarly(t, r.recv.deliveries(), detected, interval)
}

// A measurement in other units than the threshold's opens the alert when beyond it and closes
// it when back.
func TestMeasurementThresholdInOtherUnits(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "OUTSIDE_METRIC_THRESHOLD", "notifications": []any{r.webhook(0, 60)},
		"metricThreshold": map[string]any{"metricName": "MEMORY_RESIDENT", "operator": "GREATER_THAN", "threshold": 1, "units": "GIGABYTES", "mode": "AVERAGE"}})
	measure := func(mb float64) map[string]any {
		return map[string]any{"metricName": "MEMORY_RESIDENT", "value": mb, "units": "MEGABYTES", "hostId": "h1", "hostnameAndPort": "db1:27017"}
	}
	r.observe(measure(512))
	r.observe(measure(2048))
	a := r.onlyAlert("OPEN")
	if a["metricName"] != "MEMORY_RESIDENT" || a["currentValue"].(map[string]any)["number"] != 2048.0 {
		t.Errorf("alert %v", a)
	}
	r.observe(measure(900))
	r.onlyAlert("CLOSED")
	got := r.recv.waitCount(t, 2, 5*time.Second)
	if got[0].Event != "alert.open" || got[1].Event != "alert.close" {
		t.Errorf("events %s, %s", got[0].Event, got[1].Event)
	}
}

// A matcher keeps a configuration to the hosts it names.
func TestMatcherExcludesHost(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)},
		"matchers": []any{map[string]any{"fieldName": "HOSTNAME", "operator": "STARTS_WITH", "value": "db-"}}})
	r.observe(
		map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "w1", "hostnameAndPort": "web-1:80"},
		map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "d1", "hostnameAndPort": "db-1:27017"},
	)
	a := r.onlyAlert("OPEN")
	if a["hostId"] != "d1" {
		t.Errorf("alert for %v, want d1", a["hostId"])
	}
	if all := r.alerts(""); len(all) != 1 {
		t.Errorf("%d alerts, want 1 (the web host does not match)", len(all))
	}
}

// The same condition reported again, in one batch or many, is one alert.
func TestRepeatedConditionIsOneAlert(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true), hostDown("h1", true))
	r.observe(hostDown("h1", true))
	r.onlyAlert("OPEN")
	time.Sleep(300 * time.Millisecond) // let any duplicate surface
	if all := r.alerts(""); len(all) != 1 {
		t.Errorf("%d alerts for one condition", len(all))
	}
	if ds := r.recv.waitCount(t, 1, 5*time.Second); len(ds) != 1 {
		t.Errorf("%d first notices", len(ds))
	}
}

// A global configuration for tagged projects opens a global alert, which the global
// acknowledgement stops.
func TestGlobalConfigOpensGlobalAlert(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	r.do("POST", "/globalAlertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "forAllGroups": true,
		"tags": []string{"prod"}, "notifications": []any{r.webhook(0, 5)}}, 201)
	r.observe(hostDown("h1", true))
	var ga map[string]any
	if !eventually(10*time.Second, func() bool {
		res := r.do("GET", "/globalAlerts?status=OPEN", nil, 200)["results"].([]any)
		if len(res) == 1 {
			ga = res[0].(map[string]any)
		}
		return ga != nil
	}) {
		t.Fatal("no global alert")
	}
	if ga["groupId"] != r.project || ga["hostId"] != "h1" {
		t.Errorf("global alert %v", ga)
	}
	if len(r.alerts("")) != 0 {
		t.Error("a global configuration opened a project alert")
	}
	r.recv.waitCount(t, 1, 5*time.Second)
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	ack := r.do("PATCH", "/globalAlerts/"+ga["id"].(string), map[string]any{"acknowledgedUntil": until}, 201)
	if ack["acknowledgedUntil"] == nil {
		t.Fatalf("not acknowledged: %v", ack)
	}
	n := len(r.recv.deliveries())
	time.Sleep(2 * 5 * minute)
	if got := len(r.recv.deliveries()); got > n+1 { // one may have been under way
		t.Errorf("%d notices after acknowledging", got-n)
	}
}

// A receiver that fails twice gets the notice a third time, with the same idempotency key,
// and the alert's lastNotified is set from the delivery that succeeded.
func TestFailedDeliveryIsRetried(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.recv.status = func(n int) int {
		if n <= 2 {
			return 500
		}
		return 200
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	got := r.recv.waitCount(t, 3, 20*time.Second)
	if got[0].Idempotency != got[1].Idempotency || got[1].Idempotency != got[2].Idempotency {
		t.Errorf("idempotency keys differ across retries: %q %q %q", got[0].Idempotency, got[1].Idempotency, got[2].Idempotency)
	}
	var last map[string]any
	if !eventually(5*time.Second, func() bool {
		last = r.do("GET", "/groups/"+r.project+"/alerts/"+a["id"].(string), nil, 200)
		return last["lastNotified"] != nil
	}) {
		t.Fatalf("lastNotified not set after the successful retry: %v", last)
	}
	if ln, _ := time.Parse(time.RFC3339, last["lastNotified"].(string)); ln.Before(got[2].At.Truncate(time.Second)) {
		t.Errorf("lastNotified %s is before the delivery that succeeded (%s)", ln, got[2].At)
	}
}

// Withdrawing an acknowledgement (acknowledgedUntil in the past) un-acknowledges at once, and
// repeats resume then, not when the withdrawn acknowledgement would have ended: after the
// engine passed a repeat's slot while the alert was acknowledged (it then looks again only
// when the acknowledgement ends), the withdrawal must make it look again.
func TestWithdrawnAcknowledgementResumesRepeats(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	interval := 5 * minute
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	r.recv.waitCount(t, 1, 5*time.Second)

	until := time.Now().Add(time.Hour)
	r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{"acknowledgedUntil": until.UTC().Format(time.RFC3339)}, 200)
	// The repeat's slot passes while acknowledged: the engine then waits for the acknowledgement's end.
	if !eventually(5*interval, func() bool {
		next, _, err := r.Store.ProjectNextDue(context.Background(), r.project)
		return err == nil && next.After(time.Now().Add(time.Minute))
	}) {
		t.Fatal("the engine never stepped the acknowledged alert to its acknowledgement's end")
	}
	before := len(r.recv.deliveries())
	withdrawn := time.Now()
	past := withdrawn.Add(-time.Minute).UTC().Format(time.RFC3339)
	if a := r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{"acknowledgedUntil": past}, 200); a["acknowledgedUntil"] != nil {
		t.Fatalf("still acknowledged: %v", a)
	}
	got := r.recv.waitCount(t, before+1, 2*interval+late)
	if d := got[before]; d.Event != "alert.update" || d.At.Sub(withdrawn) > interval+late {
		t.Errorf("first notice after the withdrawal: %s %s after it", d.Event, d.At.Sub(withdrawn))
	}
}

// Every maintenance window in effect silences, however many windows the project has: the
// engine read the 500 that end soonest, and a window ending after them (a week's maintenance
// among many short or scheduled ones, or many silences) silenced nothing.
func TestManyMaintenanceWindowsAllSilence(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5)}})
	ctx, now := context.Background(), time.Now()
	for range 500 { // windows of another type, ending before the HOST window: listed first
		w := herald.MaintenanceWindow{ID: herald.NewID(now), GroupID: r.project, Created: herald.At(now), Updated: herald.At(now),
			StartDate: herald.At(now.Add(-time.Minute)), EndDate: herald.At(now.Add(time.Hour)), AlertTypeNames: []string{"BACKUP"}}
		if err := r.Store.CreateWindow(ctx, w, herald.NewEvent(herald.EventWindowAdded, herald.Principal{}, herald.Scope{GroupID: r.project}, now)); err != nil {
			t.Fatal(err)
		}
	}
	r.do("POST", "/groups/"+r.project+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"},
		"startDate": now.Add(-time.Minute).UTC().Format(time.RFC3339), "endDate": now.Add(2 * time.Hour).UTC().Format(time.RFC3339)}, 200)
	r.observe(hostDown("h1", true))
	r.onlyAlert("OPEN")
	// The opening is due at once and its repeat a few hundred ms on: neither may come.
	if eventually(5*minute+late, func() bool { return len(r.recv.deliveries()) > 0 }) {
		t.Errorf("a notice while a maintenance window silences the alert: %+v", r.recv.deliveries()[0].Event)
	}
}
