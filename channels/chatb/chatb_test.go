package chatb_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/chatb"
)

const (
	ownToken = "xoxb-own-1111-secret"
	intToken = "xoxb-integration-2222-secret"
)

// answer answers as the service does: HTTP status and a JSON body.
func answer(status int, body string, header ...string) http.HandlerFunc {
	return channelstest.Answer(status, body, append([]string{"Content-Type", "application/json; charset=utf-8"}, header...)...)
}

const okAnswer = `{"ok":true,"channel":"C024BE91L","ts":"1763750455.000200","message":{"text":"x"}}`

func delivery(ev channels.Event, token, channel string) channels.Delivery {
	return channels.Delivery{
		ID:           "dlv-b-1",
		Event:        ev,
		Alert:        channelstest.MetricAlert(),
		Notification: herald.Notification{TypeName: "CHAT_B", Fields: map[string]string{"apiToken": token, "channelName": channel}},
	}
}

type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type element struct {
	Type     string   `json:"type"`
	ActionID string   `json:"action_id"`
	Text     *textObj `json:"text"`
	Style    string   `json:"style"`
	Value    string   `json:"value"`
	URL      string   `json:"url"`
}

type block struct {
	Type     string    `json:"type"`
	BlockID  string    `json:"block_id"`
	Text     *textObj  `json:"text"`
	Fields   []textObj `json:"fields"`
	Elements []element `json:"elements"`
}

type message struct {
	Channel string  `json:"channel"`
	Text    string  `json:"text"`
	Blocks  []block `json:"blocks"`
}

func decode(t *testing.T, raw []byte) message {
	t.Helper()
	var m message
	channelstest.DecodeJSON(t, raw, &m)
	return m
}

func TestRequest(t *testing.T) {
	closed := channelstest.Closed(channelstest.MetricAlert(), "2026-11-21T19:02:10Z")
	acked := channelstest.MetricAlert()
	acked.AcknowledgedUntil, acked.AcknowledgingUsername = channelstest.At("2026-11-21T20:00:00Z"), "alice"
	const what = "Metric outside its threshold: CONNECTIONS at 512 RAW on db1.example.com:27017 (replica set rs0)"
	const since = "since 18:40 UTC, 19 min"
	cases := []struct {
		event    channels.Event
		alert    herald.Alert
		headline string
		fields   []string // after event type and target
	}{
		{channels.EventOpen, channelstest.MetricAlert(), "Alert opened", []string{"Status: Open", "When: Open " + since}},
		{channels.EventUpdate, channelstest.MetricAlert(), "Alert still open", []string{"Status: Open", "When: Open " + since}},
		{channels.EventClose, closed, "Alert resolved", []string{"Status: Resolved", "When: Resolved, lasted 21 min, 18:40 UTC to 19:02 UTC"}},
		{channels.EventAcknowledge, acked, "Alert acknowledged", []string{"Status: Acknowledged", "When: Open " + since, "Acknowledged: until 20:00 UTC by alice"}},
		{channels.EventCancel, channelstest.MetricAlert(), "Alert cancelled", []string{"Status: Open", "When: Open " + since}},
	}
	now := func() time.Time { return channelstest.At("2026-11-21T19:00:00Z").Time }
	for _, c := range cases {
		t.Run(string(c.event), func(t *testing.T) {
			rc := channelstest.NewReceiver(t, answer(200, okAnswer))
			d := delivery(c.event, ownToken, "#ops")
			d.Alert, d.Project, d.Org = c.alert, "prod", "Acme"
			r := conformance.SendOne(t, chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL + "/", Now: now}, rc, d)
			if r.Method != http.MethodPost || r.Path != "/api/chat.postMessage" || len(r.Query) != 0 {
				t.Errorf("got %s %s?%s, want POST /api/chat.postMessage", r.Method, r.Path, r.Query.Encode())
			}
			for name, want := range map[string]string{
				"Authorization": "Bearer " + ownToken,
				"Content-Type":  "application/json; charset=utf-8",
			} {
				if got := r.Header.Get(name); got != want {
					t.Errorf("header %s = %q, want %q", name, got, want)
				}
			}
			m := decode(t, r.Body)
			if m.Channel != "#ops" {
				t.Errorf("channel %q, want #ops", m.Channel)
			}
			if want := c.headline + ": " + what + ", project prod (organization Acme)"; m.Text != want {
				t.Errorf("text %q, want %q", m.Text, want)
			}
			if len(m.Blocks) != 3 {
				t.Fatalf("%d blocks, want 3: %s", len(m.Blocks), r.Body)
			}
			if h := m.Blocks[0]; h.Type != "header" || h.Text == nil || h.Text.Type != "plain_text" || h.Text.Text != c.headline+": "+what {
				t.Errorf("header block %+v", h)
			}
			var fields []string
			for _, f := range m.Blocks[1].Fields {
				if f.Type != "plain_text" {
					t.Errorf("field %+v is not plain text", f)
				}
				fields = append(fields, f.Text)
			}
			want := append([]string{c.fields[0], "Event type: OUTSIDE_METRIC_THRESHOLD",
				"Target: db1.example.com:27017 (replica set rs0)", "Project: prod (organization Acme)"}, c.fields[1:]...)
			if m.Blocks[1].Type != "section" || strings.Join(fields, "|") != strings.Join(want, "|") {
				t.Errorf("fields block %s %q, want section %q", m.Blocks[1].Type, fields, want)
			}
			if s := m.Blocks[2]; s.Type != "section" || s.Text == nil || s.Text.Type != "plain_text" || s.Text.Text != channels.Summary(c.alert) {
				t.Errorf("summary block %+v, want the Summary", s)
			}
			if strings.Contains(string(r.Body), ownToken) {
				t.Error("body carries the token")
			}
		})
	}
}

func TestUserTextIsNotMarkup(t *testing.T) {
	rc := channelstest.NewReceiver(t, answer(200, okAnswer))
	d := delivery(channels.EventOpen, ownToken, "#ops")
	d.Alert.HostnameAndPort = "<!channel> & <https://evil.example|click>"
	m := decode(t, conformance.SendOne(t, chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}, rc, d).Body)
	if strings.ContainsAny(m.Text, "<>") || !strings.Contains(m.Text, "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;") {
		t.Errorf("text %q: user text not escaped", m.Text)
	}
}

func TestLongTextsFitTheLimits(t *testing.T) {
	rc := channelstest.NewReceiver(t, answer(200, okAnswer))
	d := delivery(channels.EventOpen, ownToken, "#ops")
	d.Alert.EventTypeName = strings.Repeat("E", 500)
	d.Alert.AcknowledgedUntil = channelstest.At("2026-11-22T06:00:00Z")
	d.Alert.AcknowledgementComment = strings.Repeat("ü", 5000)
	m := decode(t, conformance.SendOne(t, chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}, rc, d).Body)
	if n := len([]rune(m.Blocks[0].Text.Text)); n > 150 {
		t.Errorf("header of %d characters", n)
	}
	if n := len([]rune(m.Blocks[2].Text.Text)); n > 3000 {
		t.Errorf("section of %d characters", n)
	}
	for _, f := range m.Blocks[1].Fields {
		if n := len([]rune(f.Text)); n > 2000 {
			t.Errorf("field of %d characters", n)
		}
	}
}

// The token and the channel each come from the notification, else from the CHAT_B
// integration (the suite checks the token alone).
func TestChannelChoice(t *testing.T) {
	integration := &herald.Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": intToken, "channelName": "#int", "teamName": "acme"}}
	for _, c := range []struct {
		name                 string
		ownToken, ownChannel string
		integration          *herald.Integration
		wantToken, wantChan  string // wantChan "": nothing may be sent
	}{
		{"own channel with the integration's token", "", "#own", integration, intToken, "#own"},
		{"own token with the integration's channel", ownToken, "", integration, ownToken, "#int"},
		{"integration without a channel", "", "#own", &herald.Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": intToken}}, intToken, "#own"},
		{"no channel anywhere", ownToken, "", &herald.Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": intToken}}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, answer(200, okAnswer))
			d := delivery(channels.EventOpen, c.ownToken, c.ownChannel)
			d.Integration = c.integration
			err := (chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}).Notify(context.Background(), d)
			if c.wantChan == "" {
				conformance.CheckUnsent(t, err, rc)
				return
			}
			if err != nil {
				t.Fatalf("Notify: %v", err)
			}
			r := rc.Only(t)
			if got, m := r.Header.Get("Authorization"), decode(t, r.Body); got != "Bearer "+c.wantToken || m.Channel != c.wantChan {
				t.Errorf("Authorization %q to %q, want Bearer %s to %q", got, m.Channel, c.wantToken, c.wantChan)
			}
		})
	}
}

func TestClassification(t *testing.T) {
	type want = conformance.Outcome
	fail := func(code string) string { return `{"ok":false,"error":"` + code + `"}` }
	cases := []struct {
		name   string
		status int
		body   string
		header []string
		want   want
	}{
		{"ok", 200, okAnswer, nil, want{OK: true}},
		{"ok with a warning", 200, `{"ok":true,"warning":"missing_charset","response_metadata":{"warnings":["missing_charset"]}}`, nil, want{OK: true}},
		{"invalid_auth", 200, fail("invalid_auth"), nil, want{Status: 200, Rejected: true, Reason: "invalid_auth"}},
		{"not_authed", 200, fail("not_authed"), nil, want{Status: 200, Rejected: true}},
		{"account_inactive", 200, fail("account_inactive"), nil, want{Status: 200, Rejected: true}},
		{"token_revoked", 200, fail("token_revoked"), nil, want{Status: 200, Rejected: true}},
		{"token_expired", 200, fail("token_expired"), nil, want{Status: 200, Rejected: true}},
		{"no_permission", 200, fail("no_permission"), nil, want{Status: 200, Rejected: true}},
		{"missing_scope", 200, `{"ok":false,"error":"missing_scope","needed":"chat:write","provided":"users:read"}`, nil, want{Status: 200, Rejected: true}},
		{"error before ok", 200, `{"error":"invalid_auth","ok":false}`, nil, want{Status: 200, Rejected: true}},
		{"ratelimited as 429", 429, fail("ratelimited"), []string{"Retry-After", "30"}, want{Status: 429, Retry: true, After: 30 * time.Second}},
		{"ratelimited as 200", 200, fail("ratelimited"), []string{"Retry-After", "12"}, want{Status: 200, Retry: true, After: 12 * time.Second}},
		{"ratelimited without Retry-After", 200, fail("ratelimited"), nil, want{Status: 200, Retry: true}},
		{"fatal_error", 200, fail("fatal_error"), nil, want{Status: 200, Retry: true}},
		{"internal_error", 200, fail("internal_error"), nil, want{Status: 200, Retry: true}},
		{"service_unavailable", 200, fail("service_unavailable"), nil, want{Status: 200, Retry: true}},
		{"request_timeout", 200, fail("request_timeout"), nil, want{Status: 200, Retry: true}},
		{"channel_not_found", 200, fail("channel_not_found"), nil, want{Status: 200, Reason: "channel_not_found"}},
		{"not_in_channel", 200, fail("not_in_channel"), nil, want{Status: 200}},
		{"is_archived", 200, fail("is_archived"), nil, want{Status: 200}},
		{"msg_too_long", 200, fail("msg_too_long"), nil, want{Status: 200}},
		{"ok false without an error", 200, `{"ok":false}`, nil, want{Status: 200}},
		{"error code echoing a token is not repeated", 200, fail("bad " + ownToken + " <b>"), nil, want{Status: 200, Reason: "(unrecognized code)"}},
		{"not JSON", 200, `ok`, nil, want{Status: 200, Reason: "not understood"}},
		{"JSON without ok", 200, `{"channel":"C1"}`, nil, want{Status: 200, Reason: "not understood"}},
		{"HTTP 400", 400, fail("invalid_arguments"), nil, want{Status: 400}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, answer(c.status, c.body, c.header...))
			err := (chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}).Notify(context.Background(), delivery(channels.EventOpen, ownToken, "#ops"))
			rc.Only(t)
			f := conformance.CheckOutcome(t, err, c.want)
			if f != nil && (strings.Contains(err.Error(), "xoxb") || strings.ContainsAny(f.Reason, "<>")) {
				t.Errorf("error %q carries the token or markup", err)
			}
		})
	}
}

func TestLongAnswer(t *testing.T) {
	pad := strings.Repeat("x", 100<<10)
	cases := []struct {
		name string
		body string
		ok   bool
	}{
		{"ok first, cut at 64 KiB", `{"ok":true,"message":{"text":"` + pad + `"}}`, true},
		{"ok beyond 64 KiB is not read", `{"message":{"text":"` + pad + `"},"ok":true}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, answer(200, c.body))
			err := (chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}).Notify(context.Background(), delivery(channels.EventOpen, ownToken, "#ops"))
			if c.ok != (err == nil) {
				t.Errorf("got %v, want delivered %v", err, c.ok)
			}
			var f *channels.Failure
			if err != nil && (!errors.As(err, &f) || f.Retry) {
				t.Errorf("got %v, want a permanent failure", err)
			}
		})
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Case{Kind: chatb.Kind, Settings: conformance.At("HERALD_CHAT_B_URL"),
		Fields: conformance.Fixed("apiToken", ownToken, "channelName", "#ops"), Accept: answer(200, okAnswer),
		Unsendable: []conformance.Change{conformance.NoEvent, conformance.UnknownEvent}})
}

// A message carries buttons for the links its delivery has: acknowledge 1 h and 4 h (each
// with its link's token as its value) and view (a URL button) for an open alert, withdraw and
// view for an acknowledged one, view alone for a resolution; none without links. The project
// is named by its name and its organization's.
func TestButtons(t *testing.T) {
	const base = "https://herald.example.com/act/"
	cases := []struct {
		name  string
		links herald.ActionLinks
		want  []string // action_id=value-or-url
	}{
		{"open", herald.ActionLinks{View: base + "tv", Acknowledge1h: base + "t1", Acknowledge4h: base + "t4"},
			[]string{"acknowledge1h=t1", "acknowledge4h=t4", "view=" + base + "tv"}},
		{"acknowledged", herald.ActionLinks{View: base + "tv", Unacknowledge: base + "t0"},
			[]string{"unacknowledge=t0", "view=" + base + "tv"}},
		{"resolved", herald.ActionLinks{View: base + "tv"}, []string{"view=" + base + "tv"}},
		{"no keys", herald.ActionLinks{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, answer(200, okAnswer))
			d := delivery(channels.EventOpen, ownToken, "#ops")
			d.Links, d.Project, d.Org = c.links, "prod", "Acme"
			m := decode(t, conformance.SendOne(t, chatb.Notifier{Client: conformance.Client(), BaseURL: rc.URL}, rc, d).Body)
			if f := m.Blocks[1].Fields; len(f) < 4 || f[3].Text != "Project: prod (organization Acme)" {
				t.Errorf("fields %+v, want the project named prod (organization Acme)", f)
			}
			if c.want == nil {
				if len(m.Blocks) != 3 {
					t.Errorf("%d blocks without links, want 3", len(m.Blocks))
				}
				return
			}
			if len(m.Blocks) != 4 || m.Blocks[3].Type != "actions" || m.Blocks[3].BlockID != chatb.ActionsBlock {
				t.Fatalf("blocks %+v, want an actions block last", m.Blocks)
			}
			var got []string
			for _, e := range m.Blocks[3].Elements {
				if e.Type != "button" || e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" {
					t.Errorf("element %+v is not a labelled button", e)
				}
				got = append(got, e.ActionID+"="+e.Value+e.URL)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("buttons %q, want %q", got, c.want)
			}
		})
	}
}
