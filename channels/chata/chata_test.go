package chata_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/chata"
)

const (
	ownToken = "room-token-own-5b1e"
	intToken = "room-token-integration-9c2d"
)

// uris records the escaped request URIs a receiver got (channelstest records decoded paths).
type uris struct {
	mu   sync.Mutex
	list []string
}

func (u *uris) answer(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.list = append(u.list, r.RequestURI)
		u.mu.Unlock()
		w.WriteHeader(status)
	}
}

func (u *uris) get() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.list...)
}

func delivery(ev channels.Event, token, room string) channels.Delivery {
	return conformance.Delivery("CHAT_A", ev, channelstest.HostAlert(), "notificationToken", token, "roomName", room)
}

// body is what the service reads; unknown fields are an error.
type body struct {
	Message       *string `json:"message"`
	MessageFormat *string `json:"message_format"`
	Color         *string `json:"color"`
	Notify        *bool   `json:"notify"`
	From          *string `json:"from"`
}

func decode(t *testing.T, raw []byte) body {
	t.Helper()
	var b body
	channelstest.DecodeJSON(t, raw, &b)
	if b.Message == nil || b.MessageFormat == nil || b.Color == nil || b.Notify == nil || b.From == nil {
		t.Fatalf("body lacks a field: %s", raw)
	}
	return b
}

func TestRequest(t *testing.T) {
	colors := map[channels.Event]string{channels.EventOpen: "red", channels.EventUpdate: "red", channels.EventClose: "green",
		channels.EventAcknowledge: "yellow", channels.EventCancel: "gray"}
	for _, c := range conformance.Notices(channelstest.HostAlert()) {
		t.Run(string(c.Event), func(t *testing.T) {
			color := colors[c.Event]
			var u uris
			rc := channelstest.NewReceiver(t, u.answer(http.StatusNoContent))
			d := delivery(c.Event, ownToken, "Ops Alerts/EU")
			d.Alert = c.Alert
			r := conformance.SendOne(t, chata.Notifier{Client: conformance.Client(), BaseURL: rc.URL + "/"}, rc, d)
			if r.Method != http.MethodPost {
				t.Errorf("method %s, want POST", r.Method)
			}
			if got, want := u.get()[0], "/v2/room/Ops%20Alerts%2FEU/notification"; got != want {
				t.Errorf("request URI %s, want %s", got, want)
			}
			if len(r.Query) != 0 {
				t.Errorf("query %v: the token belongs in the header", r.Query)
			}
			for name, want := range map[string]string{
				"Authorization": "Bearer " + ownToken,
				"Content-Type":  "application/json",
			} {
				if got := r.Header.Get(name); got != want {
					t.Errorf("header %s = %q, want %q", name, got, want)
				}
			}
			b := decode(t, r.Body)
			if want := "<b>" + c.Headline + ": Host down: db1.example.com:27017 (replica set rs0)</b><br>Project: 5f0c1d2e3f4a5b6c7d8e9f00<br>"; !strings.HasPrefix(*b.Message, want) {
				t.Errorf("message\n%s\ndoes not start\n%s", *b.Message, want)
			}
			if !strings.Contains(*b.Message, "Alert ID: "+c.Alert.ID) {
				t.Errorf("message does not name the alert id: %s", *b.Message)
			}
			if *b.MessageFormat != "html" || *b.Color != color || !*b.Notify || *b.From != "Herald" {
				t.Errorf("got format %q color %q notify %v from %q, want html %s true Herald", *b.MessageFormat, *b.Color, *b.Notify, *b.From, color)
			}
			if strings.Contains(string(r.Body), ownToken) {
				t.Error("body carries the token")
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	integration := &herald.Integration{Type: "CHAT_A", Fields: map[string]string{"notificationToken": intToken, "roomName": "int-room"}}
	cases := []struct {
		name                string
		ownToken, ownRoom   string
		integration         *herald.Integration
		wantToken, wantRoom string // wantRoom "": nothing may be sent
	}{
		{"integration's when the notification has none", "", "", integration, intToken, "int-room"},
		{"notification's win", ownToken, "own-room", integration, ownToken, "own-room"},
		{"own token with the integration's room", ownToken, "", integration, ownToken, "int-room"},
		{"own room naming the integration's takes its token", "", "int-room", integration, intToken, "int-room"},
		{"the integration's token is not sent to another room", "", "own-room", integration, "", ""},
		{"integration of another kind", "", "", &herald.Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": intToken, "channelName": "c"}}, "", ""},
		{"no token anywhere", "", "own-room", nil, "", ""},
		{"no room anywhere", ownToken, "", nil, "", ""},
		{"integration without a token", "", "", &herald.Integration{Type: "CHAT_A", Fields: map[string]string{"roomName": "int-room"}}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
			d := delivery(channels.EventOpen, c.ownToken, c.ownRoom)
			d.Integration = c.integration
			err := (chata.Notifier{Client: conformance.Client(), BaseURL: rc.URL}).Notify(context.Background(), d)
			if c.wantRoom == "" {
				conformance.CheckUnsent(t, err, rc)
				if strings.Contains(err.Error(), ownToken) || strings.Contains(err.Error(), intToken) {
					t.Errorf("error %q carries a token", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Notify: %v", err)
			}
			r := rc.Only(t)
			if want := "/v2/room/" + c.wantRoom + "/notification"; r.Path != want {
				t.Errorf("path %s, want %s", r.Path, want)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer "+c.wantToken {
				t.Errorf("Authorization %q, want Bearer %s", got, c.wantToken)
			}
		})
	}
}

func TestLongMessageTruncated(t *testing.T) {
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	d := delivery(channels.EventOpen, ownToken, "r")
	d.Alert.AcknowledgedUntil = channelstest.At("2026-11-22T06:00:00Z")
	d.Alert.AcknowledgementComment = strings.Repeat("é", 12000)
	m := *decode(t, conformance.SendOne(t, chata.Notifier{Client: conformance.Client(), BaseURL: rc.URL}, rc, d).Body).Message
	if n := utf8.RuneCountInString(m); n > 10000 || n < 9990 || !utf8.ValidString(m) || !strings.HasSuffix(m, "…") {
		t.Errorf("message of %d characters (valid UTF-8 %v), want at most 10000 ending with …", n, utf8.ValidString(m))
	}
}

func TestBadBaseURL(t *testing.T) {
	err := (chata.Notifier{Client: conformance.Client(), BaseURL: "api.example.com"}).Notify(context.Background(), delivery(channels.EventOpen, ownToken, "r"))
	var f *channels.Failure
	if !errors.As(err, &f) || f.Retry {
		t.Fatalf("got %v, want a permanent failure", err)
	}
}

func TestConformance(t *testing.T) {
	noContent := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }
	conformance.Run(t, conformance.Case{Kind: chata.Kind, Settings: conformance.At("HERALD_CHAT_A_URL"),
		Fields: conformance.Fixed("notificationToken", ownToken, "roomName", "ops"), Accept: noContent,
		Unsendable: []conformance.Change{conformance.NoEvent, conformance.UnknownEvent}})
}

// A message names the project, says since when, and carries each link the delivery offers as
// a link of the html format, and no other: an alert's fields are escaped, so they can add no
// link, markup or mention of their own.
func TestMessageCarriesLinksAndEscapesTheAlert(t *testing.T) {
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	d := delivery(channels.EventOpen, ownToken, "r")
	d.Project, d.Org = "Orders & Co", "Acme"
	d.Alert.HostnameAndPort = `<a href="https://evil.example/">db1</a> <script>x</script>`
	d.Links = herald.ActionLinks{View: "https://herald.example.com/act/v1.view?a=1&b=2", Acknowledge1h: "https://herald.example.com/act/v1.ack1h",
		Acknowledge4h: "https://herald.example.com/act/v1.ack4h"}
	now := func() time.Time { return time.Date(2026, 11, 21, 18, 55, 0, 0, time.UTC) }
	m := *decode(t, conformance.SendOne(t, chata.Notifier{Client: conformance.Client(), BaseURL: rc.URL, Now: now}, rc, d).Body).Message
	for _, want := range []string{
		"<b>Alert opened: Host down: &lt;a href=&#34;https://evil.example/&#34;&gt;db1&lt;/a&gt; &lt;script&gt;x&lt;/script&gt; (replica set rs0)</b>",
		"<br>Project: Orders &amp; Co (organization Acme)<br>Open since 18:40 UTC, 14 min<br>",
		`<a href="https://herald.example.com/act/v1.ack1h">Acknowledge for 1 hour</a> | <a href="https://herald.example.com/act/v1.ack4h">Acknowledge for 4 hours</a> | <a href="https://herald.example.com/act/v1.view?a=1&amp;b=2">View the alert</a>`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("message\n%s\ndoes not hold\n%s", m, want)
		}
	}
	if n := strings.Count(m, "<a "); n != 3 {
		t.Errorf("message has %d links, want the 3 offered:\n%s", n, m)
	}
	if strings.Contains(m, "<script") || strings.Contains(m, "Withdraw") {
		t.Errorf("message holds markup or a link not offered:\n%s", m)
	}
}
