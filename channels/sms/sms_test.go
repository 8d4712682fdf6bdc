package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/sms"
)

const (
	account = "AC0123456789abcdef0123456789abcdef"
	token   = "tok-9f8e7d6c5b4a"
	sender  = "+15557654321"
)

func notifier(rc *channelstest.Receiver) sms.Notifier {
	return sms.Notifier{
		Client:     channels.NewHTTPClient(true, 5*time.Second),
		BaseURL:    rc.URL,
		AccountSID: account,
		AuthToken:  token,
		From:       sender,
	}
}

func created(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(`{"sid":"SM0123","status":"queued"}`))
}

func delivery(ev channels.Event, a herald.Alert) channels.Delivery {
	return channels.Delivery{
		ID:           a.ID + "-0-1",
		Event:        ev,
		Alert:        a,
		Notification: herald.Notification{TypeName: "SMS", Fields: map[string]string{"mobileNumber": "+1 (555) 123-4567"}},
	}
}

func failureOf(t *testing.T, err error) *channels.Failure {
	t.Helper()
	var f *channels.Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *channels.Failure", err, err)
	}
	return f
}

// TestRequest: the request is the gateway's Messages create, for open, repeat, close and a
// metric alert, to the delivery's To when it has one.
func TestRequest(t *testing.T) {
	closed := channelstest.HostAlert()
	closed.Status = herald.StatusClosed
	closed.Resolved = channelstest.At("2026-11-21T19:00:00Z")
	fanOut := delivery(channels.EventOpen, channelstest.HostAlert())
	fanOut.To = "+44 20 7946 0958"
	tests := []struct {
		name, to, body string
		d              channels.Delivery
	}{
		{"open", "+15551234567", "Herald: OPEN HOST_DOWN db1.example.com:27017 (project 5f0c1d2e3f4a5b6c7d8e9f00)",
			delivery(channels.EventOpen, channelstest.HostAlert())},
		{"repeat", "+15551234567", "Herald: OPEN HOST_DOWN db1.example.com:27017 (project 5f0c1d2e3f4a5b6c7d8e9f00)",
			delivery(channels.EventUpdate, channelstest.HostAlert())},
		{"close", "+15551234567", "Herald: CLOSED HOST_DOWN db1.example.com:27017 (project 5f0c1d2e3f4a5b6c7d8e9f00)",
			delivery(channels.EventClose, closed)},
		{"metric", "+15551234567", "Herald: OPEN OUTSIDE_METRIC_THRESHOLD db1.example.com:27017 CONNECTIONS 512 RAW (project 5f0c1d2e3f4a5b6c7d8e9f00)",
			delivery(channels.EventOpen, channelstest.MetricAlert())},
		{"to wins", "+442079460958", "Herald: OPEN HOST_DOWN db1.example.com:27017 (project 5f0c1d2e3f4a5b6c7d8e9f00)", fanOut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, created)
			if err := notifier(rc).Notify(context.Background(), tt.d); err != nil {
				t.Fatal(err)
			}
			r := rc.Only(t)
			if r.Method != http.MethodPost || r.Path != "/2010-04-01/Accounts/"+account+"/Messages.json" {
				t.Errorf("%s %s", r.Method, r.Path)
			}
			req := &http.Request{Header: r.Header}
			if u, p, ok := req.BasicAuth(); !ok || u != account || p != token {
				t.Errorf("basic auth %q:%q (%v)", u, p, ok)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type %q", ct)
			}
			form, err := url.ParseQuery(string(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			want := url.Values{"To": {tt.to}, "From": {sender}, "Body": {tt.body}}
			for k, v := range want {
				if got := form[k]; len(got) != 1 || got[0] != v[0] {
					t.Errorf("%s = %q, want %q", k, got, v[0])
				}
			}
			if len(form) != len(want) {
				t.Errorf("form %v has other fields", form)
			}
		})
	}
}

// TestLongText: the body is cut to 320 characters, and a line break in the alert's fields does
// not reach it.
func TestLongText(t *testing.T) {
	a := channelstest.HostAlert()
	a.HostnameAndPort = strings.Repeat("ä", 400) + "\nsecond line"
	got := sms.Text(delivery(channels.EventOpen, a))
	if n := utf8.RuneCountInString(got); n != sms.MaxBody || !strings.HasSuffix(got, "...") {
		t.Errorf("%d characters, ends %q: want %d ending in ...", n, got[len(got)-10:], sms.MaxBody)
	}
	if strings.ContainsAny(got, "\r\n") {
		t.Errorf("a line break in %q", got)
	}
}

// TestClassification: 201 is delivered; 429 and 5xx are retried (with Retry-After); 400 is
// permanent; 401 and 403 are permanent and not Rejected, and name no secret.
func TestClassification(t *testing.T) {
	tests := []struct {
		name       string
		answer     http.HandlerFunc
		ok, retry  bool
		status     int
		retryAfter time.Duration
	}{
		{"201", created, true, false, 0, 0},
		{"429", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}, false, true, 429, 7 * time.Second},
		{"500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, false, true, 500, 0},
		{"503", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }, false, true, 503, 0},
		{"400", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"code":21211,"message":"The 'To' number is not a valid phone number."}`))
		}, false, false, 400, 0},
		{"401", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(401) }, false, false, 401, 0},
		{"403", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(403) }, false, false, 403, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, tt.answer)
			err := notifier(rc).Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert()))
			rc.Only(t)
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			f := failureOf(t, err)
			if f.Retry != tt.retry || f.Status != tt.status || f.RetryAfter != tt.retryAfter || f.Rejected {
				t.Errorf("%+v, want status %d retry %v after %s, not Rejected", f, tt.status, tt.retry, tt.retryAfter)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("the error names the token: %v", err)
			}
		})
	}
}

// TestNothingSent: without a number, credentials or sender nothing is sent.
func TestNothingSent(t *testing.T) {
	rc := channelstest.NewReceiver(t, created)
	noNumber := delivery(channels.EventOpen, channelstest.HostAlert())
	noNumber.Notification.SetField("mobileNumber", "")
	badNumber := delivery(channels.EventOpen, channelstest.HostAlert())
	badNumber.To = "call me"
	ok := delivery(channels.EventOpen, channelstest.HostAlert())
	tests := []struct {
		name string
		edit func(*sms.Notifier)
		d    channels.Delivery
	}{
		{"no number", nil, noNumber},
		{"not a number", nil, badNumber},
		{"no account", func(n *sms.Notifier) { n.AccountSID = "" }, ok},
		{"no token", func(n *sms.Notifier) { n.AuthToken = "" }, ok},
		{"no sender", func(n *sms.Notifier) { n.From = "" }, ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := notifier(rc)
			if tt.edit != nil {
				tt.edit(&n)
			}
			f := failureOf(t, n.Notify(context.Background(), tt.d))
			if f.Retry || f.Rejected {
				t.Errorf("%+v, want permanent", f)
			}
		})
	}
	if reqs := rc.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests sent, want none", len(reqs))
	}
}

// TestDefaultClientRefusesLoopback: without a Client the sender uses the shared client, which
// refuses loopback addresses.
func TestDefaultClientRefusesLoopback(t *testing.T) {
	rc := channelstest.NewReceiver(t, created)
	n := notifier(rc)
	n.Client = nil
	f := failureOf(t, n.Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert())))
	if f.Retry || len(rc.Requests()) != 0 {
		t.Errorf("%+v, %d requests: want a permanent refusal and none", f, len(rc.Requests()))
	}
}
