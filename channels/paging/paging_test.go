package paging_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/paging"
)

const (
	notifKey = "pd-notif-key-0123456789abcdef0001"
	integKey = "pd-integ-key-0123456789abcdef0002"
)

var accepted = channelstest.Answer(http.StatusAccepted, `{"status":"success","message":"Event processed","dedup_key":"x"}`, "Content-Type", "application/json")

func delivery(ev channels.Event, a herald.Alert, key string, integ *herald.Integration) channels.Delivery {
	d := conformance.Delivery("PAGING", ev, a, "serviceKey", key)
	d.Integration = integ
	return d
}

func TestTrigger(t *testing.T) {
	rc := channelstest.NewReceiver(t, accepted)
	n := paging.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
	a := channelstest.HostAlert()
	r := conformance.SendOne(t, n, rc, delivery(channels.EventOpen, a, notifKey, nil))
	if r.Method != http.MethodPost || r.Path != "/v2/enqueue" || len(r.Query) != 0 {
		t.Errorf("request %s %s?%v, want POST /v2/enqueue", r.Method, r.Path, r.Query)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q, want none: the key travels in the body", got)
	}
	m := channelstest.JSONObject(t, r.Body)
	for k, want := range map[string]string{
		"routing_key": notifKey, "event_action": "trigger", "dedup_key": a.ID, "client": "Herald",
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %q", k, m[k], want)
		}
	}
	p, _ := m["payload"].(map[string]any)
	if p == nil {
		t.Fatalf("no payload in %s", r.Body)
	}
	for k, want := range map[string]string{
		"summary":   "OPEN HOST_DOWN: db1.example.com:27017",
		"source":    "db1.example.com:27017",
		"severity":  "critical",
		"timestamp": "2026-11-21T18:40:55Z",
		"class":     "HOST_DOWN",
		"group":     a.GroupID,
	} {
		if p[k] != want {
			t.Errorf("payload.%s = %v, want %q", k, p[k], want)
		}
	}
	if _, err := time.Parse(time.RFC3339, p["timestamp"].(string)); err != nil {
		t.Errorf("timestamp is not RFC 3339: %v", err)
	}
	cd, _ := p["custom_details"].(map[string]any)
	if cd["id"] != a.ID || cd["eventTypeName"] != "HOST_DOWN" || cd["hostnameAndPort"] != a.HostnameAndPort {
		t.Errorf("custom_details %v, want the alert object", cd)
	}
	if hr, _ := cd["humanReadable"].(string); !strings.HasPrefix(hr, "Alert OPEN: HOST_DOWN") {
		t.Errorf("custom_details.humanReadable %q, want the summary", hr)
	}
}

func TestSummaryAndSource(t *testing.T) {
	long := channelstest.MetricAlert()
	long.HostnameAndPort, long.HostID, long.ReplicaSetName = "", "", ""
	long.ClusterName = strings.Repeat("c", 2000)
	project := channelstest.MetricAlert()
	project.HostnameAndPort, project.HostID, project.ReplicaSetName = "", "", ""
	for _, tc := range []struct {
		name          string
		a             herald.Alert
		summaryPrefix string
		summaryLen    int // in characters; 0: not checked
		source        string
	}{
		{"host", channelstest.MetricAlert(), "OPEN OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017", 0, "db1.example.com:27017"},
		{"cluster, cut to 1024", long, "OPEN OUTSIDE_METRIC_THRESHOLD: ccc", 1024, long.ClusterName},
		{"project", project, "OPEN OUTSIDE_METRIC_THRESHOLD: project " + project.GroupID, 0, project.GroupID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, accepted)
			n := paging.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
			m := channelstest.JSONObject(t, conformance.SendOne(t, n, rc, delivery(channels.EventUpdate, tc.a, notifKey, nil)).Body)
			p := m["payload"].(map[string]any)
			s := p["summary"].(string)
			if !strings.HasPrefix(s, tc.summaryPrefix) {
				t.Errorf("summary %.80q..., want prefix %q", s, tc.summaryPrefix)
			}
			if tc.summaryLen > 0 && len([]rune(s)) != tc.summaryLen {
				t.Errorf("summary has %d characters, want %d", len([]rune(s)), tc.summaryLen)
			}
			if p["source"] != tc.source {
				t.Errorf("source %.80v, want %.80q", p["source"], tc.source)
			}
			if m["event_action"] != "trigger" {
				t.Errorf("event_action %v, want trigger for a repeat notice", m["event_action"])
			}
		})
	}
}

// The resolve must carry the trigger's dedup_key and routing key, or the incident stays open.
func TestResolveMatchesTrigger(t *testing.T) {
	rc := channelstest.NewReceiver(t, accepted)
	n := paging.Notifier{Client: conformance.Client(), BaseURL: rc.URL + "/"}
	integ := &herald.Integration{Type: "PAGING", Fields: map[string]string{"serviceKey": integKey}}
	open := channelstest.HostAlert()
	closed := channelstest.Closed(open, "2026-11-21T19:00:00Z")
	reqs := conformance.SendAll(t, n, rc,
		delivery(channels.EventOpen, open, "", integ),
		delivery(channels.EventClose, closed, "", integ),
	)
	trig, res := channelstest.JSONObject(t, reqs[0].Body), channelstest.JSONObject(t, reqs[1].Body)
	if reqs[1].Path != "/v2/enqueue" {
		t.Errorf("resolve path %q, want /v2/enqueue", reqs[1].Path)
	}
	if res["event_action"] != "resolve" {
		t.Errorf("event_action %v, want resolve", res["event_action"])
	}
	if res["dedup_key"] != trig["dedup_key"] || res["dedup_key"] != open.ID {
		t.Errorf("resolve dedup_key %v, trigger %v, want both %s", res["dedup_key"], trig["dedup_key"], open.ID)
	}
	if res["routing_key"] != trig["routing_key"] || res["routing_key"] != integKey {
		t.Errorf("resolve routing_key %v, trigger %v, want both the integration's key", res["routing_key"], trig["routing_key"])
	}
	if _, ok := res["payload"]; ok {
		t.Errorf("resolve carries a payload: %s", reqs[1].Body)
	}
}

func TestOtherEvents(t *testing.T) {
	for ev, want := range map[channels.Event]string{
		channels.EventCancel:      "resolve",
		channels.EventAcknowledge: "acknowledge",
	} {
		rc := channelstest.NewReceiver(t, accepted)
		n := paging.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
		m := channelstest.JSONObject(t, conformance.SendOne(t, n, rc, delivery(ev, channelstest.HostAlert(), notifKey, nil)).Body)
		if m["event_action"] != want || m["dedup_key"] != channelstest.HostAlert().ID {
			t.Errorf("%s: event_action %v dedup_key %v, want %s keyed by the alert id", ev, m["event_action"], m["dedup_key"], want)
		}
	}
}

// An alert from Prometheus pages under a key that carries its fingerprint, the same for the
// trigger and the resolve; its source is the alert's instance.
func TestPrometheusDedupKey(t *testing.T) {
	rc := channelstest.NewReceiver(t, accepted)
	n := paging.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
	labels := herald.Labels{"alertname": "HighLatency", "instance": "db1:9100"}
	a := herald.Alert{ID: "65a1b2c3d4e5f60718293a4c", GroupID: "g1", EventTypeName: herald.EventTypePrometheusAlert,
		Status: herald.StatusOpen, Labels: labels, Fingerprint: labels.Fingerprint()}
	want := a.ID + "-" + a.Fingerprint
	for _, ev := range []channels.Event{channels.EventOpen, channels.EventClose} {
		if err := n.Notify(context.Background(), delivery(ev, a, notifKey, nil)); err != nil {
			t.Fatalf("Notify %s: %v", ev, err)
		}
	}
	reqs := rc.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if m := channelstest.JSONObject(t, r.Body); m["dedup_key"] != want {
			t.Errorf("request %d: dedup_key = %v, want %q", i, m["dedup_key"], want)
		} else if p, _ := m["payload"].(map[string]any); i == 0 && (p["source"] != "db1:9100" || !strings.Contains(p["summary"].(string), "HighLatency")) {
			t.Errorf("trigger payload %v", p)
		}
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Case{Kind: paging.Kind, Settings: conformance.At("HERALD_PAGING_URL"),
		Fields: conformance.Fixed("serviceKey", notifKey), Accept: accepted,
		Unsendable: []conformance.Change{conformance.NoAlertID, conformance.NoEvent}})
}
