package alertingb_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/alertingb"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
)

const (
	notifKey   = "vo-notif-3b9e77d1-0001"
	integKey   = "vo-integ-3b9e77d1-0002"
	notifRoute = "db-team"
	integRoute = "ops-default"
	endpoint   = "/integrations/generic/20131114/alert/"
)

var success = channelstest.Answer(http.StatusOK, `{"result":"success","entity_id":"65a1b2c3d4e5f60718293a4c"}`, "Content-Type", "application/json")

func delivery(ev channels.Event, a herald.Alert, key, route string, integ *herald.Integration) channels.Delivery {
	d := conformance.Delivery("ALERTING_B", ev, a, "alertingBApiKey", key, "alertingBRoutingKey", route)
	d.Integration = integ
	return d
}

func TestCritical(t *testing.T) {
	rc := channelstest.NewReceiver(t, success)
	n := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
	a := channelstest.HostAlert()
	r := conformance.SendOne(t, n, rc, delivery(channels.EventOpen, a, notifKey, notifRoute, nil))
	if want := endpoint + notifKey + "/" + notifRoute; r.Method != http.MethodPost || r.Path != want || len(r.Query) != 0 {
		t.Errorf("request %s %s?%v, want POST %s", r.Method, r.Path, r.Query, want)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q, want none: the key is in the path", got)
	}
	m := channelstest.JSONObject(t, r.Body)
	for k, want := range map[string]any{
		"message_type":        "CRITICAL",
		"entity_id":           a.ID,
		"entity_display_name": "OPEN HOST_DOWN: db1.example.com:27017",
		"state_message":       channels.Summary(a),
		"state_start_time":    float64(a.Created.Unix()),
		"monitoring_tool":     "Herald",
		"host_name":           "db1.example.com:27017",
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if m["state_start_time"] != float64(1795286455) {
		t.Errorf("state_start_time %v, want 1795286455 (2026-11-21T18:40:55Z)", m["state_start_time"])
	}
}

func TestRecoveryMatchesCritical(t *testing.T) {
	rc := channelstest.NewReceiver(t, success)
	n := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL + "/"}
	integ := &herald.Integration{Type: "ALERTING_B", Fields: map[string]string{"apiKey": integKey, "routingKey": integRoute}}
	open := channelstest.MetricAlert()
	open.HostnameAndPort, open.HostID = "", ""
	closed := channelstest.Closed(open, "2026-11-21T19:00:00Z")
	reqs := conformance.SendAll(t, n, rc,
		delivery(channels.EventOpen, open, "", "", integ),
		delivery(channels.EventClose, closed, "", "", integ),
	)
	crit, rec := channelstest.JSONObject(t, reqs[0].Body), channelstest.JSONObject(t, reqs[1].Body)
	if want := endpoint + integKey + "/" + integRoute; reqs[0].Path != want || reqs[1].Path != want {
		t.Errorf("paths %s and %s, want both %s", reqs[0].Path, reqs[1].Path, want)
	}
	if rec["message_type"] != "RECOVERY" {
		t.Errorf("message_type %v, want RECOVERY", rec["message_type"])
	}
	if rec["entity_id"] != crit["entity_id"] || rec["entity_id"] != open.ID {
		t.Errorf("entity_id %v and %v, want both %s", crit["entity_id"], rec["entity_id"], open.ID)
	}
	if _, ok := crit["host_name"]; ok {
		t.Errorf("host_name %v sent for an alert without a host", crit["host_name"])
	}
	if !strings.HasPrefix(rec["entity_display_name"].(string), "CLOSED OUTSIDE_METRIC_THRESHOLD: rs0") {
		t.Errorf("entity_display_name %v", rec["entity_display_name"])
	}
}

func TestOtherEvents(t *testing.T) {
	for ev, want := range map[channels.Event]string{
		channels.EventUpdate:      "CRITICAL",
		channels.EventCancel:      "RECOVERY",
		channels.EventAcknowledge: "ACKNOWLEDGEMENT",
	} {
		rc := channelstest.NewReceiver(t, success)
		n := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
		if got := channelstest.JSONObject(t, conformance.SendOne(t, n, rc, delivery(ev, channelstest.HostAlert(), notifKey, notifRoute, nil)).Body)["message_type"]; got != want {
			t.Errorf("%s: message_type %v, want %s", ev, got, want)
		}
	}
}

// The keys are path segments: escaped so that a key cannot change the path.
func TestKeysEscaped(t *testing.T) {
	paths := make(chan string, 1)
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.EscapedPath()
		success(w, r)
	})
	n := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
	if err := n.Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert(), "k/../x", "team a?b", nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if raw, want := <-paths, endpoint+"k%2F..%2Fx/team%20a%3Fb"; raw != want {
		t.Errorf("path %q, want %q", raw, want)
	}
}

func TestKeyChoice(t *testing.T) {
	integ := &herald.Integration{Type: "ALERTING_B", Fields: map[string]string{"apiKey": integKey, "routingKey": integRoute}}
	for _, tc := range []struct {
		name       string
		key, route string
		integ      *herald.Integration
		want       string
	}{
		{"notification only", notifKey, notifRoute, nil, notifKey + "/" + notifRoute},
		{"integration only", "", "", integ, integKey + "/" + integRoute},
		{"notification wins", notifKey, notifRoute, integ, notifKey + "/" + notifRoute},
		{"own key, integration's route", notifKey, "", integ, notifKey + "/" + integRoute},
		{"integration's key, own route", "", notifRoute, integ, integKey + "/" + notifRoute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, success)
			n := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}
			if got := conformance.SendOne(t, n, rc, delivery(channels.EventOpen, channelstest.HostAlert(), tc.key, tc.route, tc.integ)).Path; got != endpoint+tc.want {
				t.Errorf("path %s, want %s", got, endpoint+tc.want)
			}
		})
	}
}

// A 200 is the service's answer only with a result: "failure" is a permanent failure, whose
// message (which may echo the key) is not repeated.
func TestResultInTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"success", `{"result":"success","entity_id":"x"}`, true},
		{"without a result", ``, true},
		{"failure", `{"result":"failure","message":"Missing fields: message_type"}`, false},
		{"failure echoing the key", `{"result":"failure","message":"No such key ` + notifKey + `"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(tc.body)) })
			err := alertingb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}.Notify(context.Background(),
				delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, notifRoute, nil))
			rc.Only(t)
			var f *channels.Failure
			switch {
			case tc.ok && err != nil:
				t.Fatalf("Notify = %v, want nil", err)
			case !tc.ok && (!errors.As(err, &f) || f.Retry || f.Rejected || f.Status != 200):
				t.Fatalf("Notify = %v, want a permanent *Failure with status 200", err)
			case err != nil && strings.Contains(err.Error(), notifKey):
				t.Errorf("error %q contains the key", err)
			}
		})
	}
	// A base URL that cannot be parsed.
	err := alertingb.Notifier{Client: conformance.Client(), BaseURL: "http://bad host\x7f"}.Notify(context.Background(),
		delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, notifRoute, nil))
	if err == nil || strings.Contains(err.Error(), notifKey) {
		t.Errorf("Notify with a bad base URL = %v, want an error without the key", err)
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Case{Kind: alertingb.Kind, Settings: conformance.At("HERALD_ALERTING_B_URL"),
		Fields: conformance.Fixed("alertingBApiKey", notifKey, "alertingBRoutingKey", notifRoute), Accept: success,
		Unsendable: []conformance.Change{conformance.NoAlertID, conformance.NoEvent}})
}
