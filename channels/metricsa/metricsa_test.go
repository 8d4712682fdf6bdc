package metricsa_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/metricsa"
)

const (
	notifKey = "dd-notif-9a8b7c6d5e4f0001"
	integKey = "dd-integ-9a8b7c6d5e4f0002"
)

var accepted = channelstest.Answer(http.StatusAccepted, `{"status":"ok","event":{"id":1}}`, "Content-Type", "application/json")

func delivery(ev channels.Event, a herald.Alert, key string) channels.Delivery {
	return conformance.Delivery("METRICS_A", ev, a, "metricsAApiKey", key)
}

func TestEvents(t *testing.T) {
	open := channelstest.MetricAlert()
	closed := channelstest.Closed(open, "2026-11-21T19:00:00Z")
	closed.Updated = closed.Resolved
	for _, tc := range []struct {
		ev        channels.Event
		a         herald.Alert
		alertType string
		title     string
	}{
		{channels.EventOpen, open, "error", "OPEN OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017"},
		{channels.EventUpdate, open, "error", "OPEN OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017"},
		{channels.EventClose, closed, "success", "CLOSED OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017"},
		{channels.EventCancel, closed, "success", "CLOSED OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017"},
		{channels.EventAcknowledge, open, "info", "OPEN OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017"},
	} {
		t.Run(string(tc.ev), func(t *testing.T) {
			rc := channelstest.NewReceiver(t, accepted)
			n := metricsa.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
			r := conformance.SendOne(t, n, rc, delivery(tc.ev, tc.a, notifKey))
			if r.Method != http.MethodPost || r.Path != "/api/v1/events" || len(r.Query) != 0 {
				t.Errorf("request %s %s?%v, want POST /api/v1/events", r.Method, r.Path, r.Query)
			}
			for h, want := range map[string]string{"DD-API-KEY": notifKey, "Content-Type": "application/json", "Authorization": ""} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s %q, want %q", h, got, want)
				}
			}
			m := channelstest.JSONObject(t, r.Body)
			for k, want := range map[string]any{
				"title":            tc.title,
				"text":             channels.Summary(tc.a),
				"alert_type":       tc.alertType,
				"aggregation_key":  open.ID,
				"source_type_name": "herald",
				"date_happened":    float64(tc.a.Updated.Unix()),
			} {
				if m[k] != want {
					t.Errorf("%s = %v, want %v", k, m[k], want)
				}
			}
			if tags, _ := json.Marshal(m["tags"]); string(tags) != `["herald","event_type:OUTSIDE_METRIC_THRESHOLD","group:`+open.GroupID+`"]` {
				t.Errorf("tags %s", tags)
			}
		})
	}
}

func TestDateIsUpdated(t *testing.T) {
	rc := channelstest.NewReceiver(t, accepted)
	n := metricsa.Notifier{Client: conformance.Client(), BaseURL: rc.URL + "/"}
	// MetricAlert: created 18:40:55, updated 18:45:00.
	r := conformance.SendOne(t, n, rc, delivery(channels.EventUpdate, channelstest.MetricAlert(), notifKey))
	if r.Path != "/api/v1/events" {
		t.Errorf("path %s", r.Path)
	}
	if got := channelstest.JSONObject(t, r.Body)["date_happened"]; got != float64(time.Date(2026, 11, 21, 18, 45, 0, 0, time.UTC).Unix()) {
		t.Errorf("date_happened %v, want the alert's updated time", got)
	}
}

func TestLimits(t *testing.T) {
	rc := channelstest.NewReceiver(t, accepted)
	a := channelstest.HostAlert()
	a.HostnameAndPort = strings.Repeat("h", 5000)
	m := channelstest.JSONObject(t, conformance.SendOne(t, metricsa.Notifier{Client: conformance.Client(), BaseURL: rc.URL}, rc, delivery(channels.EventOpen, a, notifKey)).Body)
	for k, limit := range map[string]int{"title": 100, "text": 4000} {
		if got := len([]rune(m[k].(string))); got > limit {
			t.Errorf("%s has %d characters, over the service's %d", k, got, limit)
		}
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Case{Kind: metricsa.Kind, Settings: conformance.At("HERALD_METRICS_A_URL"),
		Fields: conformance.Fixed("metricsAApiKey", notifKey), Accept: accepted,
		Unsendable: []conformance.Change{conformance.NoAlertID, conformance.NoEvent}})
}
