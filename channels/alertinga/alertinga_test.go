package alertinga_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/alertinga"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
)

const (
	notifKey = "og-notif-6d1f0c2e-0001"
	integKey = "og-integ-6d1f0c2e-0002"
)

var accepted = channelstest.Answer(http.StatusAccepted, `{"result":"Request will be processed","took":0.1,"requestId":"r-1"}`, "Content-Type", "application/json")

func delivery(ev channels.Event, a herald.Alert, key, region string, integ *herald.Integration) channels.Delivery {
	d := conformance.Delivery("ALERTING_A", ev, a, "alertingAApiKey", key, "alertingARegion", region)
	d.Integration = integ
	return d
}

// us and eu are the two regions' receivers, and a notifier pointed at them.
func regions(t *testing.T, answer http.HandlerFunc) (us, eu *channelstest.Receiver, n alertinga.Notifier) {
	us = channelstest.NewReceiver(t, answer)
	eu = channelstest.NewReceiver(t, answer)
	return us, eu, alertinga.Notifier{Client: conformance.Client(), BaseURL: us.URL, EUBaseURL: eu.URL}
}

func TestCreate(t *testing.T) {
	us, eu, n := regions(t, accepted)
	a := channelstest.MetricAlert()
	if err := n.Notify(context.Background(), delivery(channels.EventOpen, a, notifKey, "", nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if len(eu.Requests()) != 0 {
		t.Errorf("the EU address got a request for a US notification")
	}
	r := us.Only(t)
	if r.Method != http.MethodPost || r.Path != "/v2/alerts" || len(r.Query) != 0 {
		t.Errorf("request %s %s?%v, want POST /v2/alerts", r.Method, r.Path, r.Query)
	}
	for h, want := range map[string]string{"Authorization": "GenieKey " + notifKey, "Content-Type": "application/json"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
	m := channelstest.JSONObject(t, r.Body)
	for k, want := range map[string]string{
		"message":  "OPEN OUTSIDE_METRIC_THRESHOLD: db1.example.com:27017",
		"alias":    a.ID,
		"priority": "P1",
		"source":   "Herald",
		"entity":   "db1.example.com:27017",
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %q", k, m[k], want)
		}
	}
	if m["description"] != channels.Summary(a) {
		t.Errorf("description %q, want the summary", m["description"])
	}
	if tags, _ := json.Marshal(m["tags"]); string(tags) != `["herald","OUTSIDE_METRIC_THRESHOLD"]` {
		t.Errorf("tags %s", tags)
	}
	det, _ := m["details"].(map[string]any)
	for k, want := range map[string]string{
		"groupId": a.GroupID, "alertConfigId": a.AlertConfigID, "eventTypeName": a.EventTypeName, "status": "OPEN",
	} {
		if det[k] != want {
			t.Errorf("details.%s = %v, want %q", k, det[k], want)
		}
	}
}

func TestLimits(t *testing.T) {
	us, _, n := regions(t, accepted)
	a := channelstest.HostAlert()
	a.HostnameAndPort = strings.Repeat("h", 20000)
	if err := n.Notify(context.Background(), delivery(channels.EventUpdate, a, notifKey, "", nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	m := channelstest.JSONObject(t, us.Only(t).Body)
	for k, limit := range map[string]int{"message": 130, "description": 15000, "entity": 512} {
		if got := len([]rune(m[k].(string))); got > limit {
			t.Errorf("%s has %d characters, over the service's %d", k, got, limit)
		}
	}
}

func TestClose(t *testing.T) {
	us, _, n := regions(t, accepted)
	a := channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:00:00Z")
	if err := n.Notify(context.Background(), delivery(channels.EventClose, a, notifKey, "", nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	r := us.Only(t)
	if r.Method != http.MethodPost || r.Path != "/v2/alerts/"+a.ID+"/close" {
		t.Errorf("request %s %s, want POST /v2/alerts/<alias>/close", r.Method, r.Path)
	}
	if got := r.Query.Get("identifierType"); got != "alias" {
		t.Errorf("identifierType %q, want alias", got)
	}
	if got := r.Header.Get("Authorization"); got != "GenieKey "+notifKey {
		t.Errorf("Authorization %q", got)
	}
	m := channelstest.JSONObject(t, r.Body)
	if m["source"] != "Herald" || m["note"] != "Resolved at 2026-11-21T19:00:00Z" {
		t.Errorf("close body %s", r.Body)
	}
}

// The alias in the close path is escaped: one path segment whatever the id holds.
func TestCloseEscapesAlias(t *testing.T) {
	paths := make(chan string, 1)
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.EscapedPath()
		w.WriteHeader(http.StatusAccepted)
	})
	a := channelstest.HostAlert()
	a.ID = "a/b c?d"
	n := alertinga.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
	if err := n.Notify(context.Background(), delivery(channels.EventClose, a, notifKey, "", nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if raw, want := <-paths, "/v2/alerts/a%2Fb%20c%3Fd/close"; raw != want {
		t.Errorf("path %q, want %q", raw, want)
	}
}

func TestOtherEvents(t *testing.T) {
	for _, tc := range []struct {
		ev   channels.Event
		path string
	}{
		{channels.EventCancel, "/close"},
		{channels.EventAcknowledge, "/acknowledge"},
	} {
		us, _, n := regions(t, accepted)
		a := channelstest.HostAlert()
		a.AcknowledgingUsername = "ops@example.com"
		if err := n.Notify(context.Background(), delivery(tc.ev, a, notifKey, "", nil)); err != nil {
			t.Fatalf("Notify %s: %v", tc.ev, err)
		}
		r := us.Only(t)
		if r.Path != "/v2/alerts/"+a.ID+tc.path || r.Query.Get("identifierType") != "alias" {
			t.Errorf("%s: path %s?%v, want /v2/alerts/<alias>%s?identifierType=alias", tc.ev, r.Path, r.Query, tc.path)
		}
	}
}

func TestRegion(t *testing.T) {
	eu := &herald.Integration{Type: "ALERTING_A", Fields: map[string]string{"apiKey": integKey, "region": "EU"}}
	usInteg := &herald.Integration{Type: "ALERTING_A", Fields: map[string]string{"apiKey": integKey, "region": "US"}}
	for _, tc := range []struct {
		name   string
		region string
		integ  *herald.Integration
		ev     channels.Event
		wantEU bool
	}{
		{"default US", "", nil, channels.EventOpen, false},
		{"notification EU", "EU", nil, channels.EventOpen, true},
		{"notification EU, close", "EU", nil, channels.EventClose, true},
		{"notification eu, any case", "eu", nil, channels.EventOpen, true},
		{"integration EU when the notification has none", "", eu, channels.EventOpen, true},
		{"integration EU, close", "", eu, channels.EventClose, true},
		{"notification US wins over integration EU", "US", eu, channels.EventOpen, false},
		{"notification EU wins over integration US", "EU", usInteg, channels.EventOpen, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usRC, euRC, n := regions(t, accepted)
			if err := n.Notify(context.Background(), delivery(tc.ev, channelstest.HostAlert(), notifKey, tc.region, tc.integ)); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			got, other := usRC, euRC
			if tc.wantEU {
				got, other = euRC, usRC
			}
			got.Only(t)
			if n := len(other.Requests()); n != 0 {
				t.Errorf("the other region's address got %d requests", n)
			}
		})
	}
}

func TestConformance(t *testing.T) {
	unknownRegion := conformance.Change{Name: "unknown region", Change: func(d *channels.Delivery) { d.Notification.SetField("alertingARegion", "APAC") }}
	conformance.Run(t, conformance.Case{Kind: alertinga.Kind, Settings: conformance.At("HERALD_ALERTING_A_URL"),
		Fields: conformance.Fixed("alertingAApiKey", notifKey, "alertingARegion", "US"), Accept: accepted,
		Unsendable: []conformance.Change{unknownRegion, conformance.NoAlertID, conformance.NoEvent}})
}
