package alertingb_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/alertingb"
	"github.com/heraldhq/herald/channels/channelstest"
)

const (
	notifKey   = "vo-notif-3b9e77d1-0001"
	integKey   = "vo-integ-3b9e77d1-0002"
	notifRoute = "db-team"
	integRoute = "ops-default"
	endpoint   = "/integrations/generic/20131114/alert/"
)

func testClient() *http.Client { return channels.NewHTTPClient(true, 5*time.Second) }

func success(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"result":"success","entity_id":"65a1b2c3d4e5f60718293a4c"}`))
}

func delivery(ev channels.Event, a herald.Alert, key, route string, integ *herald.Integration) channels.Delivery {
	return channels.Delivery{
		ID:           "dlv-0001",
		Event:        ev,
		Alert:        a,
		Notification: herald.Notification{TypeName: "ALERTING_B", Fields: map[string]string{"alertingBApiKey": key, "alertingBRoutingKey": route}},
		Integration:  integ,
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b)
	}
	return m
}

func TestCritical(t *testing.T) {
	rc := channelstest.NewReceiver(t, success)
	n := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}
	a := channelstest.HostAlert()
	if err := n.Notify(context.Background(), delivery(channels.EventOpen, a, notifKey, notifRoute, nil)); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	r := rc.Only(t)
	if want := endpoint + notifKey + "/" + notifRoute; r.Method != http.MethodPost || r.Path != want || len(r.Query) != 0 {
		t.Errorf("request %s %s?%v, want POST %s", r.Method, r.Path, r.Query, want)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q, want none: the key is in the path", got)
	}
	m := decode(t, r.Body)
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
	n := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL + "/"}
	integ := &herald.Integration{Type: "ALERTING_B", Fields: map[string]string{"apiKey": integKey, "routingKey": integRoute}}
	open := channelstest.MetricAlert()
	open.HostnameAndPort, open.HostID = "", ""
	closed := open
	closed.Status = herald.StatusClosed
	closed.Resolved = channelstest.At("2026-11-21T19:00:00Z")
	for _, d := range []channels.Delivery{
		delivery(channels.EventOpen, open, "", "", integ),
		delivery(channels.EventClose, closed, "", "", integ),
	} {
		if err := n.Notify(context.Background(), d); err != nil {
			t.Fatalf("Notify %s: %v", d.Event, err)
		}
	}
	reqs := rc.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2", len(reqs))
	}
	crit, rec := decode(t, reqs[0].Body), decode(t, reqs[1].Body)
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
		n := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}
		if err := n.Notify(context.Background(), delivery(ev, channelstest.HostAlert(), notifKey, notifRoute, nil)); err != nil {
			t.Fatalf("Notify %s: %v", ev, err)
		}
		if got := decode(t, rc.Only(t).Body)["message_type"]; got != want {
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
	n := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}
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
			n := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}
			if err := n.Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert(), tc.key, tc.route, tc.integ)); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			if got := rc.Only(t).Path; got != endpoint+tc.want {
				t.Errorf("path %s, want %s", got, endpoint+tc.want)
			}
		})
	}
}

func TestNothingSent(t *testing.T) {
	noID := channelstest.HostAlert()
	noID.ID = ""
	for _, tc := range []struct {
		name string
		d    channels.Delivery
	}{
		{"no key", delivery(channels.EventOpen, channelstest.HostAlert(), "", notifRoute, nil)},
		{"no routing key", delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, "", nil)},
		{"integration without routing key", delivery(channels.EventOpen, channelstest.HostAlert(), "", "", &herald.Integration{Type: "ALERTING_B", Fields: map[string]string{"apiKey": integKey}})},
		{"integration of another kind", delivery(channels.EventOpen, channelstest.HostAlert(), "", "", &herald.Integration{Type: "ALERTING_A", Fields: map[string]string{"apiKey": integKey, "routingKey": integRoute}})},
		{"alert without id", delivery(channels.EventOpen, noID, notifKey, notifRoute, nil)},
		{"no event", delivery("", channelstest.HostAlert(), notifKey, notifRoute, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, success)
			err := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}.Notify(context.Background(), tc.d)
			var f *channels.Failure
			if !errors.As(err, &f) || f.Retry || f.Rejected {
				t.Fatalf("Notify = %v, want a permanent *Failure", err)
			}
			if strings.Contains(err.Error(), notifKey) || strings.Contains(err.Error(), integKey) {
				t.Errorf("error %q contains a key", err)
			}
			if n := len(rc.Requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}

func TestClassification(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
		body       string
		ok         bool
		retry      bool
		after      time.Duration
		rejected   bool
	}{
		{name: "success", status: 200, body: `{"result":"success","entity_id":"x"}`, ok: true},
		{name: "200 without a result", status: 200, ok: true},
		{name: "200 failure", status: 200, body: `{"result":"failure","message":"Missing fields: message_type"}`},
		{name: "200 failure echoing the key", status: 200, body: `{"result":"failure","message":"No such key ` + notifKey + `"}`},
		{name: "400", status: 400, body: `{"result":"failure","message":"bad"}`},
		{name: "401", status: 401, rejected: true},
		{name: "403", status: 403, rejected: true},
		{name: "404", status: 404},
		{name: "429", status: 429, retryAfter: "5", retry: true, after: 5 * time.Second},
		{name: "500", status: 500, retry: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			err := alertingb.Notifier{Client: testClient(), BaseURL: rc.URL}.Notify(context.Background(),
				delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, notifRoute, nil))
			rc.Only(t)
			if tc.ok {
				if err != nil {
					t.Fatalf("Notify = %v, want nil", err)
				}
				return
			}
			var f *channels.Failure
			if !errors.As(err, &f) {
				t.Fatalf("Notify = %v, want a *Failure", err)
			}
			if f.Status != tc.status || f.Retry != tc.retry || f.RetryAfter != tc.after || f.Rejected != tc.rejected {
				t.Errorf("%+v, want status %d, retry %v after %v, rejected %v", f, tc.status, tc.retry, tc.after, tc.rejected)
			}
			if strings.Contains(err.Error(), notifKey) || strings.Contains(err.Error(), rc.URL) {
				t.Errorf("error %q contains the key or the URL", err)
			}
		})
	}
}

// No answer: the transport's error names the URL, and so the key; the Failure must not.
func TestNoAnswerHidesKey(t *testing.T) {
	rc := channelstest.NewReceiver(t, success)
	base := rc.URL
	rc.Close()
	for _, ctx := range []context.Context{context.Background(), cancelled()} {
		err := alertingb.Notifier{Client: testClient(), BaseURL: base}.Notify(ctx,
			delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, notifRoute, nil))
		var f *channels.Failure
		if !errors.As(err, &f) || !f.Retry {
			t.Fatalf("Notify = %v, want a retryable *Failure", err)
		}
		if s := err.Error(); strings.Contains(s, notifKey) || strings.Contains(s, "/integrations/") {
			t.Errorf("error %q names the URL", s)
		}
	}
	// A base URL that cannot be parsed.
	err := alertingb.Notifier{Client: testClient(), BaseURL: "http://bad host\x7f"}.Notify(context.Background(),
		delivery(channels.EventOpen, channelstest.HostAlert(), notifKey, notifRoute, nil))
	if err == nil || strings.Contains(err.Error(), notifKey) {
		t.Errorf("Notify with a bad base URL = %v, want an error without the key", err)
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
