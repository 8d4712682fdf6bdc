// Package conformance is the one suite every HTTP sender runs (Run): what a delivery's outcome
// means (delivered, retryable, rejected, permanent), hostile targets, private addresses,
// required fields, credentials from integrations, and no secret in any error; and the helpers
// the kinds' own tests share. It is for tests only; it sits below channelstest because the
// channels package's own tests use channelstest.
package conformance

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
)

// Case is one kind's sender as the conformance suite (Run) drives it: every HTTP kind runs
// the same table, so that what a delivery's outcome means is the same whatever the kind.
type Case struct {
	Kind channels.Kind
	// Settings are the sender's settings that point it at a service at addr (At); nil when
	// the notification names the target (Fields then puts addr in it).
	Settings func(addr string) channels.Settings
	// Fields are the fields of a notification whose deliveries go to a service at addr.
	Fields func(addr string) map[string]string
	// Accept answers a request the service takes (nil: 200 and no body).
	Accept http.HandlerFunc
	// OperatorCredentials: the service checks the operator's credentials (the settings'), not
	// the notification's. A refusal is then a permanent failure, never a rejected credential:
	// there is nothing in the notification to remove.
	OperatorCredentials bool
	// Secrets are what no error may hold besides the notification's secrets (its masked
	// fields, and a URL field's path): a setting's token, say.
	Secrets []string
	// Unsendable are deliveries the sender refuses before it sends anything, each a permanent
	// failure with a reason.
	Unsendable []Change
	// Links, for a kind read by people (herald.Kind.Links): which of the links a delivery
	// offers its notice carries. nil: every one.
	Links func(offered herald.ActionLinks) herald.ActionLinks
}

// NoLinks is Links for a kind whose notices carry none of the links they are offered.
func NoLinks(herald.ActionLinks) herald.ActionLinks { return herald.ActionLinks{} }

// Change makes a delivery one a sender refuses.
type Change struct {
	Name   string
	Change func(*channels.Delivery)
}

// Changes most senders refuse.
var (
	NoAlertID    = Change{"alert without an id", func(d *channels.Delivery) { d.Alert.ID = "" }}
	NoEvent      = Change{"no event", func(d *channels.Delivery) { d.Event = "" }}
	UnknownEvent = Change{"unknown event", func(d *channels.Delivery) { d.Event = "alert.bogus" }}
)

// At is the Settings of a sender whose service's address is each of env.
func At(env ...string) func(addr string) channels.Settings {
	return func(addr string) channels.Settings {
		s := channels.Settings{}
		for _, e := range env {
			s[e] = addr
		}
		return s
	}
}

// Fixed is Fields that do not depend on the service's address: name, value, ...
func Fixed(nameValues ...string) func(string) map[string]string {
	return func(string) map[string]string {
		out := map[string]string{}
		for i := 0; i+1 < len(nameValues); i += 2 {
			out[nameValues[i]] = nameValues[i+1]
		}
		return out
	}
}

// Run runs the conformance suite on c's sender: deliveries of every event; the service's
// answers (retryable, with or without Retry-After, permanent, a refused credential); hostile
// targets and a cancelled delivery; a private address refused by default; a notification
// missing a required field, and c's other unsendable deliveries; a credential from the
// project's integration; the action links of a kind read by people, and none in other kinds. No error may hold a secret, even one the service echoes, and a sender
// makes one attempt: retries are the dispatcher's.
func Run(t *testing.T, c Case) {
	t.Run("delivers every event", c.testEvents)
	t.Run("answers", c.testAnswers)
	t.Run("hostile targets", c.testHostile)
	t.Run("cancelled", c.testCancelled)
	t.Run("private address refused by default", c.testPrivate)
	t.Run("required fields", c.testRequired)
	t.Run("unsendable", c.testUnsendable)
	t.Run("credential from the integration", c.testIntegration)
	t.Run("carries its links", c.testLinks)
}

// notifier is c's sender made as a worker makes it, pointed at addr, with client (nil: its
// default one).
func (c Case) notifier(addr string, client *http.Client) channels.Notifier {
	var s channels.Settings
	if c.Settings != nil {
		s = c.Settings(addr)
	}
	return c.Kind.New(s, client)
}

// delivery is a notice of event ev of c's notification to a service at addr.
func (c Case) delivery(ev channels.Event, addr string) channels.Delivery {
	n := herald.Notification{TypeName: c.Kind.Name, Fields: c.Fields(addr)}
	return channels.Delivery{ID: "dlv-conformance-1", Event: ev, Alert: channelstest.HostAlert(), Notification: n}
}

// notify sends d to the service at addr, through a client that reaches 127.0.0.1, in ctx.
func (c Case) notify(ctx context.Context, addr string, timeout time.Duration, d channels.Delivery) error {
	return c.notifier(addr, channels.NewHTTPClient(true, timeout)).Notify(ctx, d)
}

// send sends an open notice to the service at addr.
func (c Case) send(addr string, timeout time.Duration) error {
	return c.notify(context.Background(), addr, timeout, c.delivery(channels.EventOpen, addr))
}

// secrets are what no error of a delivery to addr may hold.
func (c Case) secrets(addr string) []string {
	out := append([]string(nil), c.Secrets...)
	fields := c.Fields(addr)
	for _, f := range c.Kind.Fields {
		v := fields[f.Name]
		if f.Mask == nil || v == "" {
			continue
		}
		out = append(out, v)
		if u, err := url.Parse(v); err == nil && len(u.EscapedPath()) > 1 {
			out = append(out, u.EscapedPath())
		}
	}
	return out
}

// failure is err as a *channels.Failure, checked to hold none of c's secrets; it fails t if
// err is not one.
func (c Case) failure(t *testing.T, addr string, err error) *channels.Failure {
	t.Helper()
	var f *channels.Failure
	if !errors.As(err, &f) || f.Reason == "" {
		t.Fatalf("got %v, want a *channels.Failure with a reason", err)
	}
	for _, s := range c.secrets(addr) {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q holds a secret (%s)", err, s)
		}
	}
	return f
}

func (c Case) accept(w http.ResponseWriter, r *http.Request) {
	if c.Accept != nil {
		c.Accept(w, r)
	}
}

func (c Case) testEvents(t *testing.T) {
	rc := channelstest.NewReceiver(t, c.accept)
	n := c.notifier(rc.URL, channels.NewHTTPClient(true, 5*time.Second))
	events := []channels.Event{channels.EventOpen, channels.EventUpdate, channels.EventAcknowledge, channels.EventClose, channels.EventCancel}
	for i, ev := range events {
		if err := n.Notify(context.Background(), c.delivery(ev, rc.URL)); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		if got := len(rc.Requests()); got != i+1 {
			t.Fatalf("%s: the service got %d requests in all, want %d", ev, got, i+1)
		}
	}
	for _, r := range rc.Requests() {
		if r.Method != http.MethodPost {
			t.Errorf("%s %s, want a POST", r.Method, r.Path)
		}
	}
}

// The service's answers mean the same for every kind: 408, 429 and 5xx are retried (429 and
// 503 after their Retry-After), 401 and 403 are a refused credential, the rest permanent.
func (c Case) testAnswers(t *testing.T) {
	refused := Outcome{Rejected: !c.OperatorCredentials}
	for _, tc := range []struct {
		status     int
		retryAfter string
		want       Outcome
	}{
		{500, "", Outcome{Retry: true}},
		{502, "", Outcome{Retry: true}},
		{503, "", Outcome{Retry: true}},
		{408, "", Outcome{Retry: true}},
		{429, "", Outcome{Retry: true}},
		{429, "30", Outcome{Retry: true, After: 30 * time.Second}},
		{503, "5", Outcome{Retry: true, After: 5 * time.Second}},
		{400, "", Outcome{}},
		{404, "", Outcome{}},
		{302, "", Outcome{}}, // not followed
		{401, "", refused},
		{403, "", refused},
	} {
		name := http.StatusText(tc.status)
		if tc.retryAfter != "" {
			name += ", Retry-After " + tc.retryAfter
		}
		t.Run(name, func(t *testing.T) {
			var addr string
			rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				// The service echoes what it was given, as some do in their errors.
				echo := strings.Join(c.secrets(addr), " ")
				w.Header().Set("X-Echo", echo)
				w.Header().Set("Location", "/elsewhere")
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, `{"error":"`+echo+`"}`)
			})
			addr = rc.URL
			f := c.failure(t, addr, c.send(addr, 5*time.Second))
			rc.Only(t)
			want := tc.want
			want.Status = tc.status
			if got := (Outcome{Status: f.Status, Retry: f.Retry, Rejected: f.Rejected, After: f.RetryAfter}); got != want {
				t.Errorf("got %+v, want %+v", f, want)
			}
		})
	}
}

// A target that answers badly, or not at all, costs a delivery a retryable failure within the
// client's timeout: retried, never lost, never holding a worker, and never sent twice.
func (c Case) testHostile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(conn net.Conn) // on the request's connection, once it is read; nil: nothing listens
	}{
		{"nothing listens", nil},
		{"closes without answering", func(conn net.Conn) { conn.Close() }},
		{"answers garbage", func(conn net.Conn) { _, _ = io.WriteString(conn, "SMTP? 220 hello\r\n\r\n") }},
		{"closes halfway through the headers", func(conn net.Conn) {
			_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Len")
			conn.Close()
		}},
		{"never answers", func(net.Conn) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				t.Cleanup(func() { conn.Close() })
				tc.answer(conn)
			})
			if tc.answer == nil {
				rc.Close()
			}
			start := time.Now()
			f := c.failure(t, rc.URL, c.send(rc.URL, 300*time.Millisecond))
			if !f.Retry || f.Rejected || f.Status != 0 {
				t.Errorf("got %+v, want a retryable failure without a status", f)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the failure took %s with a 300 ms timeout", d)
			}
			if n := len(rc.Requests()); n > 1 {
				t.Errorf("the target got %d requests: a POST is not sent twice", n)
			}
		})
	}
}

// A delivery whose context ends (the worker stops) is retried, and sends nothing.
func (c Case) testCancelled(t *testing.T) {
	rc := channelstest.NewReceiver(t, c.accept)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := c.failure(t, rc.URL, c.notify(ctx, rc.URL, 5*time.Second, c.delivery(channels.EventOpen, rc.URL)))
	if !f.Retry || f.Rejected || len(rc.Requests()) != 0 {
		t.Errorf("got %+v and %d requests, want a retryable failure and none", f, len(rc.Requests()))
	}
}

// Targets are user input or addresses a worker is configured with: a sender made without a
// client of its own refuses a private address, before any packet is sent.
func (c Case) testPrivate(t *testing.T) {
	rc := channelstest.NewReceiver(t, c.accept)
	err := c.notifier(rc.URL, nil).Notify(context.Background(), c.delivery(channels.EventOpen, rc.URL))
	if f := c.failure(t, rc.URL, err); f.Retry || f.Rejected || f.Reason != channels.ReasonTargetNotAllowed || len(rc.Requests()) != 0 {
		t.Errorf("got %+v and %d requests, want the address refused and none", f, len(rc.Requests()))
	}
}

// A notification without a field its kind requires (and no integration to supply it) sends
// nothing and fails for good, saying why.
func (c Case) testRequired(t *testing.T) {
	for _, f := range c.Kind.Fields {
		if f.Required {
			c.wantNothingSent(t, f.Name, func(d *channels.Delivery) { d.Notification.SetField(f.Name, "") })
		}
	}
}

func (c Case) testUnsendable(t *testing.T) {
	for _, ch := range c.Unsendable {
		c.wantNothingSent(t, ch.Name, ch.Change)
	}
}

// wantNothingSent runs subtest name: an open notice changed by change is a permanent failure,
// and nothing is sent.
func (c Case) wantNothingSent(t *testing.T, name string, change func(*channels.Delivery)) {
	t.Run(name, func(t *testing.T) {
		rc := channelstest.NewReceiver(t, c.accept)
		d := c.delivery(channels.EventOpen, rc.URL)
		change(&d)
		f := c.failure(t, rc.URL, c.notify(context.Background(), rc.URL, 5*time.Second, d))
		if f.Retry || f.Rejected || f.Status != 0 || len(rc.Requests()) != 0 {
			t.Errorf("got %+v and %d requests, want a permanent failure and none", f, len(rc.Requests()))
		}
	})
}

// The credential a notification leaves out comes from the project's integration of its kind
// (and only of its kind); one it gives wins over the integration's.
func (c Case) testIntegration(t *testing.T) {
	var cred herald.KindField
	for _, f := range c.Kind.Fields {
		if f.Credential && f.Integration != "" {
			cred = f
		}
	}
	if cred.Name == "" {
		t.Skip("the kind takes no credential from an integration")
	}
	const fromIntegration = "integration-credential-8b1d"
	// integration is an integration of type typ holding what notification n does, but its
	// own credential.
	integration := func(n herald.Notification, typ string) *herald.Integration {
		in := &herald.Integration{Type: typ}
		for _, f := range c.Kind.Fields {
			if f.Integration != "" {
				in.SetField(f.Integration, n.Field(f.Name))
			}
		}
		in.SetField(cred.Integration, fromIntegration)
		return in
	}
	// carried is what the service got that it could read a credential from.
	carried := func(r channelstest.Request) string {
		all := r.Path + "?" + r.Query.Encode() + string(r.Body)
		for _, vs := range r.Header {
			all += " " + strings.Join(vs, " ")
		}
		return all
	}
	for _, tc := range []struct {
		name      string
		own       bool // the notification has its own
		want, not string
	}{
		{"the integration's when the notification has none", false, fromIntegration, ""},
		{"the notification's wins", true, c.Fields("")[cred.Name], fromIntegration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, c.accept)
			d := c.delivery(channels.EventOpen, rc.URL)
			d.Integration = integration(d.Notification, c.Kind.IntegrationName())
			if !tc.own {
				d.Notification.SetField(cred.Name, "")
			}
			if err := c.notify(context.Background(), rc.URL, 5*time.Second, d); err != nil {
				t.Fatal(err)
			}
			if got := carried(rc.Only(t)); !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
				t.Errorf("the request does not carry %s alone", tc.want)
			}
		})
	}
	c.wantNothingSent(t, "never another kind's integration", func(d *channels.Delivery) {
		d.Integration = integration(d.Notification, "ANOTHER_KIND")
		d.Notification.SetField(cred.Name, "")
	})
}

// linkToken matches the tokens of the links testLinks offers, however a body escapes them.
var linkToken = regexp.MustCompile(`v1\.[a-z0-9]+-7c1d`)

// LinkCase is a notice a person reads, with the links a dispatcher offers with it.
type LinkCase struct {
	Name  string
	Event channels.Event
	Alert herald.Alert
	Links herald.ActionLinks
}

// LinkCases are an open alert's notice (view and both acknowledgements offered), an
// acknowledged one's (view and withdrawal) and a resolution's (view). Each link's token
// matches `v1\.[a-z0-9]+-7c1d`; the view link has a query with an ampersand.
func LinkCases() []LinkCase {
	const base = "https://herald.example.com/act/"
	view := base + "v1.view-7c1d?k=1&s=2"
	acked := channelstest.HostAlert()
	acked.AcknowledgedUntil, acked.AcknowledgingUsername = channelstest.At("2999-01-01T00:00:00Z"), "alice@example.com"
	return []LinkCase{
		{"open", channels.EventOpen, channelstest.HostAlert(), herald.ActionLinks{View: view,
			Acknowledge1h: base + "v1.ack1h-7c1d", Acknowledge4h: base + "v1.ack4h-7c1d"}},
		{"acknowledged", channels.EventAcknowledge, acked, herald.ActionLinks{View: view, Unacknowledge: base + "v1.unack-7c1d"}},
		{"resolved", channels.EventClose, channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:02:10Z"), herald.ActionLinks{View: view}},
	}
}

// A notice of a kind read by people carries each link its delivery offers (as Links says) and
// no other. A kind that is not read by people carries none.
func (c Case) testLinks(t *testing.T) {
	for _, tc := range LinkCases() {
		t.Run(tc.Name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, c.accept)
			d := c.delivery(tc.Event, rc.URL)
			d.Alert, d.Links = tc.Alert, tc.Links
			if err := c.notify(context.Background(), rc.URL, 5*time.Second, d); err != nil {
				t.Fatal(err)
			}
			want := herald.ActionLinks{}
			switch {
			case !c.Kind.Links:
			case c.Links != nil:
				want = c.Links(tc.Links)
			default:
				want = tc.Links
			}
			r := rc.Only(t)
			got := map[string]bool{}
			for _, tok := range linkToken.FindAllString(r.Path+"?"+r.Query.Encode()+" "+string(r.Body), -1) {
				got[tok] = true
			}
			for _, l := range []string{want.View, want.Acknowledge1h, want.Acknowledge4h, want.Unacknowledge} {
				if tok := linkToken.FindString(l); tok != "" && !got[tok] {
					t.Errorf("the notice does not carry the link %s:\n%s", l, r.Body)
				}
				delete(got, linkToken.FindString(l))
			}
			for tok := range got {
				t.Errorf("the notice carries a link it should not (%s):\n%s", tok, r.Body)
			}
		})
	}
}

// Client is an HTTP client of the senders' kind that reaches 127.0.0.1, as tests need.
func Client() *http.Client { return channels.NewHTTPClient(true, 5*time.Second) }

// FailureOf is err as a *channels.Failure; it fails t if err is not one.
func FailureOf(t testing.TB, err error) *channels.Failure {
	t.Helper()
	var f *channels.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v (%T), want a *channels.Failure", err, err)
	}
	return f
}

// Delivery is a delivery of event ev about alert a, of a notification of typeName with the
// fields given (name, value, ...).
func Delivery(typeName string, ev channels.Event, a herald.Alert, fields ...string) channels.Delivery {
	n := herald.Notification{TypeName: typeName}
	for i := 0; i+1 < len(fields); i += 2 {
		n.SetField(fields[i], fields[i+1])
	}
	return channels.Delivery{ID: "dlv-0001", Event: ev, Alert: a, Notification: n}
}

// Notice is an event of a delivery, the alert as it is then, and the headline the chat kinds
// give that event.
type Notice struct {
	Event    channels.Event
	Alert    herald.Alert
	Headline string
}

// Notices are a notice of every event about alert a, the close one about a closed at
// 2026-11-21T19:02:10Z. The headlines are spelled out here, not read from package channels,
// so that a changed headline fails the tests that use them.
func Notices(a herald.Alert) []Notice {
	return []Notice{
		{channels.EventOpen, a, "Alert opened"},
		{channels.EventUpdate, a, "Alert still open"},
		{channels.EventClose, channelstest.Closed(a, "2026-11-21T19:02:10Z"), "Alert resolved"},
		{channels.EventAcknowledge, a, "Alert acknowledged"},
		{channels.EventCancel, a, "Alert cancelled"},
	}
}

// Outcome is what a delivery should come to: delivered (OK), or a *channels.Failure with
// these Status, Retry, Rejected and RetryAfter whose Reason says Reason (when set).
type Outcome struct {
	OK              bool
	Status          int
	Retry, Rejected bool
	After           time.Duration
	Reason          string
}

// CheckOutcome fails t unless err is what want says, and returns the failure (nil when
// delivered).
func CheckOutcome(t testing.TB, err error, want Outcome) *channels.Failure {
	t.Helper()
	if want.OK {
		if err != nil {
			t.Fatalf("got %v, want delivered", err)
		}
		return nil
	}
	f := FailureOf(t, err)
	if f.Status != want.Status || f.Retry != want.Retry || f.Rejected != want.Rejected || f.RetryAfter != want.After {
		t.Errorf("got %+v, want status %d retry %v rejected %v after %s", f, want.Status, want.Retry, want.Rejected, want.After)
	}
	if !strings.Contains(f.Reason, want.Reason) {
		t.Errorf("reason %q does not say %q", f.Reason, want.Reason)
	}
	return f
}

// SendOne sends d with n, to be delivered, and returns the one request rc got for it.
func SendOne(t testing.TB, n channels.Notifier, rc *channelstest.Receiver, d channels.Delivery) channelstest.Request {
	t.Helper()
	return SendAll(t, n, rc, d)[0]
}

// CheckUnsent fails t unless err is a permanent failure with a reason (no status, not retried,
// no credential refused) and rc got no request: what a delivery with no target or no
// credential comes to. It returns the failure.
func CheckUnsent(t testing.TB, err error, rc *channelstest.Receiver) *channels.Failure {
	t.Helper()
	f := CheckOutcome(t, err, Outcome{})
	if f.Reason == "" {
		t.Errorf("failure %+v gives no reason", f)
	}
	if n := len(rc.Requests()); n != 0 {
		t.Errorf("receiver got %d requests, want none", n)
	}
	return f
}

// SendAll sends ds with n, in order, each to be delivered, and returns the requests rc got:
// one a delivery, or t fails.
func SendAll(t testing.TB, n channels.Notifier, rc *channelstest.Receiver, ds ...channels.Delivery) []channelstest.Request {
	t.Helper()
	for _, d := range ds {
		if err := n.Notify(context.Background(), d); err != nil {
			t.Fatalf("Notify %s: %v", d.Event, err)
		}
	}
	reqs := rc.Requests()
	if len(reqs) != len(ds) {
		t.Fatalf("got %d requests, want %d", len(reqs), len(ds))
	}
	return reqs
}
