package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/paging"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/apiclient"
)

// promAlert is a PROMETHEUS_ALERT observation as the Alertmanager front door makes it:
// firing until endsAt (nil: none given), or resolved.
func promAlert(labels map[string]string, firing bool, endsAt *time.Time) map[string]any {
	o := map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": firing, "labels": labels,
		"annotations":  map[string]string{"summary": "p99 over 1 s", "description": "the API answers slowly"},
		"generatorURL": "http://prometheus.example.com:9090/graph?g0.expr=latency"}
	if endsAt != nil {
		o["endsAt"] = endsAt.UTC().Format(time.RFC3339Nano)
	}
	return o
}

func in(d time.Duration) *time.Time { t := time.Now().Add(d); return &t }

var critical = map[string]string{"alertname": "HighLatency", "severity": "critical", "instance": "api1:9100"}

// writesOf records the commands that write the document or the schedule of alert id, while
// recording.
type writesOf struct {
	mu   sync.Mutex
	id   string
	seen []string
}

func (w *writesOf) match(name string, args []any) bool {
	var keys []any
	switch name {
	case "set", "hset":
		keys = args[1:2]
	case "mset":
		for i := 1; i < len(args); i += 2 {
			keys = append(keys, args[i])
		}
	case "evalsha", "eval":
		if n, err := strconv.Atoi(fmt.Sprint(args[2])); err == nil && 3+n <= len(args) {
			keys = args[3 : 3+n]
		}
	}
	for _, k := range keys {
		// The alert's document has its id in its key; schedules are fields of the scope's
		// ":sched" hash (under the id's bytes, not its text).
		if s, ok := k.(string); ok && (strings.Contains(s, w.id) || strings.HasSuffix(s, ":sched")) {
			w.mu.Lock()
			w.seen = append(w.seen, name+" "+s)
			w.mu.Unlock()
			break
		}
	}
	return false // never fail it: only watch
}

// A Prometheus alert opens (the webhook body carries its fingerprint, labels, annotations and
// generator URL); re-sends while it fires change nothing, send nothing and write neither the
// alert nor its schedule; when its endsAt passes without a re-send it closes with the
// resolution notice.
func TestPrometheusAlertOpensRefreshesAndExpires(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 60)},
		"labelMatchers": []any{map[string]any{"name": "severity", "value": "critical"}}})
	r.observe(promAlert(critical, true, in(time.Minute)))
	a := r.onlyAlert("OPEN")
	id := a["id"].(string)
	fp := herald.Labels(critical).Fingerprint()
	if a["fingerprint"] != fp || a["labels"].(map[string]any)["severity"] != "critical" ||
		a["annotations"].(map[string]any)["summary"] != "p99 over 1 s" || a["generatorURL"] == "" || a["eventTypeName"] != "PROMETHEUS_ALERT" {
		t.Fatalf("GET alerts shows %v", a)
	}
	open := r.recv.waitCount(t, 1, 5*time.Second)[0]
	if open.Event != "alert.open" || open.Alert["fingerprint"] != fp || open.Alert["labels"] == nil ||
		!strings.Contains(open.Alert["humanReadable"].(string), "p99 over 1 s") ||
		!strings.Contains(open.Alert["humanReadable"].(string), "http://prometheus.example.com:9090/graph") {
		t.Fatalf("webhook notice %s %v", open.Event, open.Alert)
	}

	// Re-sent with a later endsAt, as Prometheus does every resend-delay: the expiry moves,
	// nothing else is written, nothing is sent.
	// The notice reached the receiver before the worker recorded it as sent (lastNotified):
	// that write is the opening's, not a re-send's, so recording starts after it.
	a = r.notified(t, id)
	rec := &writesOf{id: id}
	r.faults.fail(1<<30, rec.match)
	ends := time.Now().Add(2500 * time.Millisecond).Truncate(time.Second) // endsAt is to the second, as every time of the API
	for range 3 {
		r.observe(promAlert(critical, true, &ends))
	}
	if !eventually(5*time.Second, func() bool { return r.schedule(id).Expires.Equal(ends) }) {
		t.Fatalf("the re-send did not move the expiry: %v, want %v", r.schedule(id).Expires, ends)
	}
	r.faults.fail(0, nil)
	if len(rec.seen) != 0 {
		t.Errorf("re-sends wrote the alert or its schedule: %v", rec.seen)
	}
	if again := r.alerts("")[0]; again["updated"] != a["updated"] || again["status"] != "OPEN" {
		t.Errorf("a re-send changed the alert: %v", again)
	}
	if n := len(r.recv.deliveries()); n != 1 {
		t.Errorf("%d deliveries after the re-sends, want the opening only", n)
	}

	// Not re-sent again: it closes when endsAt passes, with its resolution notice.
	closed := r.recv.waitCount(t, 2, time.Until(ends)+5*time.Second)[1]
	if closed.Event != "alert.close" || closed.Alert["fingerprint"] != fp {
		t.Fatalf("second notice %s %v, want the resolution", closed.Event, closed.Alert)
	}
	if closed.At.Before(ends) {
		t.Errorf("closed %s before its endsAt", ends.Sub(closed.At))
	}
	c := r.onlyAlert("CLOSED")
	if c["id"] != id || c["resolved"] == nil {
		t.Errorf("closed alert %v", c)
	}
}

// Resolved by Prometheus (endsAt now, active false): the alert closes with its resolution
// notice; firing again opens a new alert for the same fingerprint.
func TestPrometheusAlertResolvesAndFiresAgain(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 60)}})
	r.observe(promAlert(critical, true, in(time.Minute)))
	first := r.onlyAlert("OPEN")["id"]
	r.recv.waitCount(t, 1, 5*time.Second)
	r.observe(promAlert(critical, false, in(0)))
	got := r.recv.waitCount(t, 2, 5*time.Second)
	if got[1].Event != "alert.close" || got[1].Alert["id"] != first {
		t.Fatalf("after the resolution: %s %v", got[1].Event, got[1].Alert["id"])
	}
	r.observe(promAlert(critical, true, in(time.Minute)))
	again := r.onlyAlert("OPEN")["id"]
	if again == first {
		t.Errorf("firing again reopened the closed alert")
	}
	if got := r.recv.waitCount(t, 3, 5*time.Second)[2]; got.Event != "alert.open" || got.Alert["id"] != again {
		t.Errorf("third notice %s %v", got.Event, got.Alert["id"])
	}
}

// Acknowledging through Herald's API stops the repeats of a firing Prometheus alert while it
// keeps being re-sent; its resolution still goes out.
func TestPrometheusAlertAcknowledged(t *testing.T) {
	const minute = 100 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 5)}})
	r.observe(promAlert(critical, true, in(time.Minute)))
	id := r.onlyAlert("OPEN")["id"].(string)
	r.recv.waitCount(t, 2, 5*time.Second) // the opening and a repeat: it repeats every 500 ms

	r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{
		"acknowledgedUntil": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgementComment": "on it"}, 200)
	settled := time.Now().Add(100 * time.Millisecond)
	for range 6 { // re-sent for 1.8 s: more than three repeat intervals
		r.observe(promAlert(critical, true, in(time.Minute)))
		time.Sleep(300 * time.Millisecond)
	}
	for _, d := range r.recv.deliveries() {
		if d.At.After(settled) {
			t.Errorf("a %s notice at %s while acknowledged", d.Event, d.At.Format(time.StampMilli))
		}
	}
	n := len(r.recv.deliveries())
	r.observe(promAlert(critical, false, in(0)))
	if got := r.recv.waitCount(t, n+1, 5*time.Second)[n]; got.Event != "alert.close" {
		t.Errorf("after the resolution: %s, want alert.close (sent while acknowledged too)", got.Event)
	}
}

// Two configurations route by severity: critical alerts page (the dedup key carries the
// fingerprint), the rest go to the webhook.
func TestPrometheusAlertsRoutedBySeverity(t *testing.T) {
	var mu sync.Mutex
	var pages []map[string]any
	pd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		pages = append(pages, m)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"success"}`))
	}))
	t.Cleanup(pd.Close)
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) {
		c.Notifiers["PAGING"] = paging.Notifier{Client: channels.NewHTTPClient(true, 5*time.Second), BaseURL: pd.URL}
	})
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "labelMatchers": []any{map[string]any{"name": "severity", "value": "critical"}},
		"notifications": []any{map[string]any{"typeName": "PAGING", "serviceKey": "pd-service-key-0123456789abcdef", "delayMin": 0, "intervalMin": 60}}})
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "labelMatchers": []any{map[string]any{"name": "severity", "value": "critical", "isEqual": false}},
		"notifications": []any{r.webhook(0, 60)}})
	warning := map[string]string{"alertname": "DiskFilling", "severity": "warning", "instance": "db1:9100"}
	r.observe(promAlert(critical, true, in(time.Minute)), promAlert(warning, true, in(time.Minute)))

	hook := r.recv.waitCount(t, 1, 5*time.Second)[0]
	if hook.Alert["fingerprint"] != herald.Labels(warning).Fingerprint() {
		t.Errorf("the webhook got %v, want the warning", hook.Alert["labels"])
	}
	var page map[string]any
	if !eventually(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(pages) > 0 {
			page = pages[0]
		}
		return page != nil
	}) {
		t.Fatal("nothing paged")
	}
	if key, _ := page["dedup_key"].(string); !strings.HasSuffix(key, "-"+herald.Labels(critical).Fingerprint()) {
		t.Errorf("dedup_key %q does not carry the critical alert's fingerprint", key)
	}
	time.Sleep(300 * time.Millisecond) // nothing else comes: each alert went one way
	mu.Lock()
	defer mu.Unlock()
	if len(pages) != 1 || len(r.recv.deliveries()) != 1 {
		t.Errorf("%d pages and %d webhooks, want one each", len(pages), len(r.recv.deliveries()))
	}
	if n := len(r.alerts("?status=OPEN")); n != 2 {
		t.Errorf("%d open alerts, want 2", n)
	}
	_ = context.Background
}

// A maintenance window naming PROMETHEUS silences alerts from Prometheus (and a HOST window
// does not).
func TestPrometheusAlertSilencedByWindow(t *testing.T) {
	r := newRig(t, 100*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 5)}})
	start := time.Now().Add(-time.Second)
	end := time.Now().Truncate(time.Second).Add(3 * time.Second)
	for _, types := range [][]string{{"HOST"}, {"PROMETHEUS"}} {
		r.do("POST", "/groups/"+r.project+"/maintenanceWindows", map[string]any{"alertTypeNames": types,
			"startDate": start.UTC().Format(time.RFC3339), "endDate": end.UTC().Format(time.RFC3339)}, 200)
	}
	r.observe(promAlert(critical, true, in(time.Minute)))
	r.onlyAlert("OPEN")
	first := r.recv.waitCount(t, 1, time.Until(end)+2*time.Second)[0]
	if first.At.Before(end) {
		t.Errorf("a notice at %s inside the PROMETHEUS window ending %s", first.At.Format(time.StampMilli), end.Format(time.StampMilli))
	}
}

// A re-send with other annotations (Prometheus renders their templates at each evaluation)
// records them without a notice; the next identical re-send is a renewal again.
func TestPrometheusAlertNewAnnotations(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 60)}})
	r.observe(promAlert(critical, true, in(time.Minute)))
	id := r.onlyAlert("OPEN")["id"].(string)
	r.recv.waitCount(t, 1, 5*time.Second)

	changed := promAlert(critical, true, in(2*time.Minute))
	changed["annotations"] = map[string]string{"summary": "p99 over 2 s", "description": "slower"}
	r.observe(changed)
	if !eventually(5*time.Second, func() bool {
		a := r.alerts("")[0]
		return a["annotations"].(map[string]any)["summary"] == "p99 over 2 s"
	}) {
		t.Fatalf("new annotations not recorded: %v", r.alerts("")[0])
	}
	r.notified(t, id)
	rec := &writesOf{id: id}
	r.faults.fail(1<<30, rec.match)
	again := promAlert(critical, true, in(3*time.Minute))
	again["annotations"] = changed["annotations"]
	ends := time.Now().Add(3 * time.Minute).Truncate(time.Second)
	again["endsAt"] = ends.UTC().Format(time.RFC3339)
	r.observe(again)
	if !eventually(5*time.Second, func() bool { return r.schedule(id).Expires.Equal(ends) }) {
		t.Fatalf("the re-send did not move the expiry")
	}
	r.faults.fail(0, nil)
	if len(rec.seen) != 0 {
		t.Errorf("an identical re-send after new annotations wrote the alert: %v", rec.seen)
	}
	if n := len(r.recv.deliveries()); n != 1 {
		t.Errorf("%d deliveries, want the opening only", n)
	}
}

// notified waits until alert id shows the notice sent about it (lastNotified) and returns it.
func (r *rig) notified(t *testing.T, id string) map[string]any {
	t.Helper()
	var a map[string]any
	if !eventually(5*time.Second, func() bool {
		for _, x := range r.alerts("") {
			if x["id"] == id && x["lastNotified"] != nil {
				a = x
				return true
			}
		}
		return false
	}) {
		t.Fatalf("alert %s never showed lastNotified: %v", id, r.alerts(""))
	}
	return a
}

// frontDoor calls the project's Alertmanager front door (path under .../api/v2) as the rig's
// key, and decodes its answer into out (nil: none).
func (r *rig) frontDoor(method, path string, body any, want int, out any) {
	r.t.Helper()
	door := apiclient.Client{Base: strings.TrimSuffix(r.client.Base, api.BasePath) + api.PrometheusPath + "/groups/" + r.project + "/api/v2",
		HTTP: r.client.HTTP}
	if err := door.Do(context.Background(), method, path, body, want, out); err != nil {
		r.t.Fatal(err)
	}
}

// postable is an alert as Prometheus posts it, ending at ends.
func postable(labels map[string]string, ends time.Time) map[string]any {
	return map[string]any{"labels": labels, "annotations": map[string]string{"summary": "disk is full"},
		"startsAt": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano), "endsAt": ends.UTC().Format(time.RFC3339Nano)}
}

// An alert posted to the front door that no configuration takes opens no alert and sends
// nothing, but is listed by GET /api/v2/alerts (as Alertmanager lists every alert it holds),
// with no receiver, until it is resolved or its end passes. Once a configuration takes it, it
// is listed once, with that configuration as its receiver.
func TestPrometheusAlertNoConfigurationTakesIsListed(t *testing.T) {
	r := newRig(t, 200*time.Millisecond)
	disk := map[string]string{"alertname": "DiskFull", "instance": "db1:9100"}
	soon := map[string]string{"alertname": "Soon", "instance": "db1:9100"}
	ends := time.Now().Add(1500 * time.Millisecond).Truncate(time.Second).Add(time.Second) // the API keeps seconds
	r.frontDoor("POST", "/alerts", []any{postable(disk, time.Now().Add(time.Hour)), postable(soon, ends)}, 200, nil)
	var listed []herald.GettableAlert
	names := func() string {
		r.frontDoor("GET", "/alerts", nil, 200, &listed)
		var out []string
		for _, a := range listed {
			out = append(out, a.Labels["alertname"])
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	if !eventually(5*time.Second, func() bool { return names() == "DiskFull Soon" }) {
		t.Fatalf("the front door lists %q, want DiskFull and Soon\n%s", names(), r.failedTasks())
	}
	for _, a := range listed {
		if a.Receivers == nil || len(a.Receivers) != 0 || a.Status.State != "active" || a.Fingerprint != herald.Labels(a.Labels).Fingerprint() ||
			a.Annotations["summary"] != "disk is full" {
			t.Errorf("an alert no configuration takes is listed as %+v", a)
		}
	}
	if got := r.alerts(""); len(got) != 0 {
		t.Errorf("an alert no configuration takes opened %v", got)
	}
	// Its end passed without a re-send: no longer listed.
	if !eventually(time.Until(ends)+5*time.Second, func() bool { return names() == "DiskFull" }) {
		t.Fatalf("after Soon's end the front door lists %q", names())
	}
	// Resolved by Prometheus: no longer listed.
	r.frontDoor("POST", "/alerts", []any{postable(disk, time.Now().Add(-time.Second))}, 200, nil)
	if !eventually(5*time.Second, func() bool { return names() == "" }) {
		t.Fatalf("after DiskFull's resolution the front door lists %q", names())
	}
	// Firing again, then taken by a configuration: listed once, routed to it.
	r.frontDoor("POST", "/alerts", []any{postable(disk, time.Now().Add(time.Hour))}, 200, nil)
	if !eventually(5*time.Second, func() bool { return names() == "DiskFull" }) {
		t.Fatalf("firing again, the front door lists %q", names())
	}
	cfg := r.config(map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "notifications": []any{r.webhook(0, 60)}})
	r.frontDoor("POST", "/alerts", []any{postable(disk, time.Now().Add(time.Hour))}, 200, nil)
	r.onlyAlert("OPEN")
	if names(); len(listed) != 1 || len(listed[0].Receivers) != 1 || listed[0].Receivers[0].Name != cfg {
		t.Errorf("once taken, the front door lists %+v, want DiskFull once, routed to %s", listed, cfg)
	}
	if n := len(r.recv.deliveries()); n > 1 {
		t.Errorf("%d deliveries, want the one of the configuration's alert at most", n)
	}
}
