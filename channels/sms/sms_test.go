package sms_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/sms"
)

const (
	account = "AC0123456789abcdef0123456789abcdef"
	token   = "tok-9f8e7d6c5b4a"
	sender  = "+15557654321"
)

var created = channelstest.Answer(http.StatusCreated, `{"sid":"SM0123","status":"queued"}`, "Content-Type", "application/json")

// now is when the tests' texts are read: 19 minutes after their alerts opened.
func now() time.Time { return channelstest.At("2026-11-21T19:00:00Z").Time }

func notifier(rc *channelstest.Receiver) sms.Notifier {
	return sms.Notifier{
		Now:        now,
		Client:     conformance.Client(),
		BaseURL:    rc.URL,
		AccountSID: account,
		AuthToken:  token,
		From:       sender,
	}
}

// delivery is a text of ev about a, in project prod of Acme, with the id of a's first notice.
func delivery(ev channels.Event, a herald.Alert) channels.Delivery {
	d := conformance.Delivery("SMS", ev, a, "mobileNumber", "+1 (555) 123-4567")
	d.ID, d.Project, d.Org = a.ID+"-0-1", "prod", "Acme"
	return d
}

// TestRequest: the request is the gateway's Messages create, for open, repeat, close and a
// metric alert, to the delivery's To when it has one.
func TestRequest(t *testing.T) {
	closed := channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:00:00Z")
	fanOut := delivery(channels.EventOpen, channelstest.HostAlert())
	fanOut.To = "+44 20 7946 0958"
	acked := channelstest.HostAlert()
	acked.AcknowledgedUntil, acked.AcknowledgingUsername = channelstest.At("2026-11-21T20:00:00Z"), "alice"
	const host = "Host down: db1.example.com:27017 (replica set rs0)"
	tests := []struct {
		name, to, body string
		d              channels.Delivery
	}{
		{"open", "+15551234567", "Herald Open: " + host + ", since 18:40 UTC, 19 min, project prod (organization Acme)",
			delivery(channels.EventOpen, channelstest.HostAlert())},
		{"repeat", "+15551234567", "Herald Open: " + host + ", since 18:40 UTC, 19 min, project prod (organization Acme)",
			delivery(channels.EventUpdate, channelstest.HostAlert())},
		{"acknowledged", "+15551234567", "Herald Acknowledged: " + host + ", acknowledged until 20:00 UTC by alice, project prod (organization Acme)",
			delivery(channels.EventAcknowledge, acked)},
		{"close", "+15551234567", "Herald Resolved: " + host + ", lasted 19 min, 18:40 UTC to 19:00 UTC, project prod (organization Acme)",
			delivery(channels.EventClose, closed)},
		{"metric", "+15551234567", "Herald Open: Metric outside its threshold: CONNECTIONS at 512 RAW on db1.example.com:27017 (replica set rs0), since 18:40 UTC, 19 min, project prod (organiza...",
			delivery(channels.EventOpen, channelstest.MetricAlert())}, // cut to one segment
		{"to wins", "+442079460958", "Herald Open: " + host + ", since 18:40 UTC, 19 min, project prod (organization Acme)", fanOut},
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

// TestLongText: the body is cut to one segment, 160 characters, and a line break in the alert's fields does
// not reach it.
func TestLongText(t *testing.T) {
	a := channelstest.HostAlert()
	a.HostnameAndPort = strings.Repeat("ä", 400) + "\nsecond line"
	got := sms.Text(delivery(channels.EventOpen, a), now())
	if n := utf8.RuneCountInString(got); n != sms.MaxBody || !strings.HasSuffix(got, "...") {
		t.Errorf("%d characters, ends %q: want %d ending in ...", n, got[len(got)-10:], sms.MaxBody)
	}
	if strings.ContainsAny(got, "\r\n") {
		t.Errorf("a line break in %q", got)
	}
}

// A text with action links ends with its reply code, whole, and fits one segment however long
// the alert's names; an acknowledged alert offers to withdraw; a resolution and a delivery
// without links (no action keys) have no code. The project is named by its name.
func TestReplyCode(t *testing.T) {
	const base = "https://herald.example.com/act/"
	open := herald.ActionLinks{View: base + "v", Acknowledge1h: base + "1", Acknowledge4h: base + "4"}
	long := channelstest.HostAlert()
	long.HostnameAndPort = strings.Repeat("db-{shard}-", 30) + "example.com:27017"
	cases := []struct {
		name   string
		ev     channels.Event
		alert  herald.Alert
		links  herald.ActionLinks
		suffix string // "": no code
	}{
		{"open", channels.EventOpen, channelstest.HostAlert(), open, " Reply 1 to ack 1h, 4 for 4h"},
		{"long names", channels.EventOpen, long, open, " Reply 1 to ack 1h, 4 for 4h"},
		{"acknowledged", channels.EventAcknowledge, channelstest.HostAlert(), herald.ActionLinks{View: base + "v", Unacknowledge: base + "0"}, " Reply 0 to unack"},
		{"resolved", channels.EventClose, channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:02:10Z"), herald.ActionLinks{View: base + "v"}, ""},
		{"no keys", channels.EventOpen, channelstest.HostAlert(), herald.ActionLinks{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := delivery(c.ev, c.alert)
			d.Links = c.links
			got := sms.Text(d, now())
			if sms.Segments(got) != 1 {
				t.Errorf("%q takes %d segments", got, sms.Segments(got))
			}
			if c.suffix != "" && !strings.HasSuffix(got, c.suffix) {
				t.Errorf("%q does not end with %q", got, c.suffix)
			}
			if c.suffix == "" && strings.Contains(got, "Reply") {
				t.Errorf("%q offers a reply", got)
			}
			if c.name != "long names" && !strings.Contains(got, "project prod") {
				t.Errorf("%q does not name the project", got)
			}
		})
	}
}

// A text sent with a reply code tells Sent its number, as the gateway took it, and its
// delivery; one without a code, or not sent, tells nobody.
func TestSentIsTold(t *testing.T) {
	links := herald.ActionLinks{View: "https://h/act/v", Acknowledge1h: "https://h/act/1", Acknowledge4h: "https://h/act/4"}
	for _, c := range []struct {
		name   string
		links  herald.ActionLinks
		answer http.HandlerFunc
		told   bool
	}{
		{"sent with a code", links, created, true},
		{"sent without links", herald.ActionLinks{}, created, false},
		{"refused", links, channelstest.Answer(http.StatusBadRequest, `{"code":21211}`, "Content-Type", "application/json"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, c.answer)
			var told []string
			n := notifier(rc)
			n.Sent = func(_ context.Context, to string, d channels.Delivery) { told = append(told, to+" "+d.Alert.ID) }
			d := delivery(channels.EventOpen, channelstest.HostAlert())
			d.Links = c.links
			_ = n.Notify(context.Background(), d)
			want := []string(nil)
			if c.told {
				want = []string{"+15551234567 " + d.Alert.ID}
			}
			if strings.Join(told, ",") != strings.Join(want, ",") {
				t.Errorf("told %q, want %q", told, want)
			}
		})
	}
}

// TestNothingSent: without the operator's account, token or sender number nothing is sent.
func TestNothingSent(t *testing.T) {
	rc := channelstest.NewReceiver(t, created)
	ok := delivery(channels.EventOpen, channelstest.HostAlert())
	tests := []struct {
		name string
		edit func(*sms.Notifier)
		d    channels.Delivery
	}{
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
			f := conformance.FailureOf(t, n.Notify(context.Background(), tt.d))
			if f.Retry || f.Rejected {
				t.Errorf("%+v, want permanent", f)
			}
		})
	}
	if reqs := rc.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests sent, want none", len(reqs))
	}
}

// The gateway checks the operator's account, not the notification's: a refusal is no
// rejected credential of the notification.
func TestConformance(t *testing.T) {
	settings := func(url string) channels.Settings {
		return channels.Settings{"HERALD_SMS_URL": url, "HERALD_SMS_ACCOUNT": account, "HERALD_SMS_TOKEN": token, "HERALD_SMS_FROM": sender}
	}
	notANumber := conformance.Change{Name: "not a phone number", Change: func(d *channels.Delivery) { d.To = "call me" }}
	conformance.Run(t, conformance.Case{Kind: sms.Kind, Settings: settings, Fields: conformance.Fixed("mobileNumber", "+1 (555) 123-4567"),
		Accept: created, OperatorCredentials: true, Secrets: []string{token},
		Unsendable: []conformance.Change{notANumber, conformance.NoEvent, conformance.UnknownEvent},
		Links:      conformance.NoLinks}) // its texts carry reply codes rather than links (TestReplyCode)
}
