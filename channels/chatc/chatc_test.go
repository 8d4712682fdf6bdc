package chatc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/chatc"
)

// secretPath is the part of a webhook URL that is its credential.
const secretPath = "/webhookb2/4f1c-secret-9d2e@tenant/IncomingWebhook/77aa-secret-0b1c/owner"

func delivery(ev channels.Event, url string) channels.Delivery {
	return channels.Delivery{
		ID:           "dlv-c-1",
		Event:        ev,
		Alert:        channelstest.HostAlert(),
		Notification: herald.Notification{TypeName: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": url}},
	}
}

type fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type card struct {
	Type       string `json:"@type"`
	Context    string `json:"@context"`
	Summary    string `json:"summary"`
	ThemeColor string `json:"themeColor"`
	Title      string `json:"title"`
	Sections   []struct {
		ActivityTitle string `json:"activityTitle"`
		Facts         []fact `json:"facts"`
		Text          string `json:"text"`
		Markdown      *bool  `json:"markdown"`
	} `json:"sections"`
}

func decode(t *testing.T, raw []byte) card {
	t.Helper()
	var c card
	channelstest.DecodeJSON(t, raw, &c)
	if len(c.Sections) != 1 {
		t.Fatalf("%d sections, want 1: %s", len(c.Sections), raw)
	}
	return c
}

// now is the clock the tests' cards are read at.
func now() time.Time { return time.Date(2026, 11, 21, 18, 55, 0, 0, time.UTC) }

func TestRequest(t *testing.T) {
	closed := channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:02:10Z")
	cases := []struct {
		event    channels.Event
		alert    herald.Alert
		color    string
		headline string
		status   string
		when     string
	}{
		{channels.EventOpen, channelstest.HostAlert(), "D7000C", "Alert opened", "Open", "Open since 18:40 UTC, 14 min"},
		{channels.EventUpdate, channelstest.HostAlert(), "D7000C", "Alert still open", "Open", "Open since 18:40 UTC, 14 min"},
		{channels.EventClose, closed, "2DC72D", "Alert resolved", "Resolved", "Resolved, lasted 21 min, 18:40 UTC to 19:02 UTC"},
		{channels.EventAcknowledge, channelstest.HostAlert(), "F2A900", "Alert acknowledged", "Acknowledged", "Open since 18:40 UTC, 14 min"},
		{channels.EventCancel, channelstest.HostAlert(), "808080", "Alert cancelled", "Open", "Open since 18:40 UTC, 14 min"},
	}
	for _, c := range cases {
		t.Run(string(c.event), func(t *testing.T) {
			rc := channelstest.NewReceiver(t, channelstest.Answer(200, "1"))
			d := delivery(c.event, rc.URL+secretPath+"?tenant=t1")
			d.Alert = c.alert
			r := conformance.SendOne(t, chatc.Notifier{Client: conformance.Client(), Now: now}, rc, d)
			if r.Method != http.MethodPost || r.Path != secretPath || r.Query.Get("tenant") != "t1" {
				t.Errorf("got %s %s?%s, want POST to the webhook URL", r.Method, r.Path, r.Query.Encode())
			}
			if got := r.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
			m := decode(t, r.Body)
			what := "Host down: db1.example.com:27017 (replica set rs0)"
			subject := "db1.example.com:27017 (replica set rs0)"
			if m.Type != "MessageCard" || m.Context != "https://schema.org/extensions" {
				t.Errorf("@type %q @context %q", m.Type, m.Context)
			}
			title, summary := c.headline+`: Host down: db1.example.com:27017 \(replica set rs0\)`, c.headline+": "+what
			if m.ThemeColor != c.color || m.Title != title || m.Summary != summary {
				t.Errorf("themeColor %q title %q summary %q, want %s %q %q", m.ThemeColor, m.Title, m.Summary, c.color, title, summary)
			}
			s := m.Sections[0]
			if s.ActivityTitle != what {
				t.Errorf("activityTitle %q", s.ActivityTitle)
			}
			want := []fact{{"Status", c.status}, {"Event type", "HOST_DOWN"}, {"Target", subject},
				{"Project", c.alert.GroupID}, {"When", c.when}, {"Created", "2026-11-21T18:40:55Z"}}
			if len(s.Facts) != len(want) {
				t.Fatalf("facts %+v, want %+v", s.Facts, want)
			}
			for i := range want {
				if s.Facts[i] != want[i] {
					t.Errorf("fact %d = %+v, want %+v", i, s.Facts[i], want[i])
				}
			}
			if s.Text != channels.Summary(c.alert) {
				t.Errorf("text\n%s\nwant the Summary\n%s", s.Text, channels.Summary(c.alert))
			}
			if s.Markdown == nil || *s.Markdown {
				t.Errorf("markdown %v, want false", s.Markdown)
			}
			if strings.Contains(string(r.Body), "secret") {
				t.Error("body carries the URL")
			}
		})
	}
}

func TestTarget(t *testing.T) {
	cases := []struct {
		name        string
		ownPath     string // "": the notification has no URL
		integration func(url string) *herald.Integration
		wantPath    string // "": nothing may be sent
	}{
		{"integration's when the notification has none", "", func(u string) *herald.Integration {
			return &herald.Integration{Type: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": u + "/integration"}}
		}, "/integration"},
		{"notification's wins", "/own", func(u string) *herald.Integration {
			return &herald.Integration{Type: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": u + "/integration"}}
		}, "/own"},
		{"integration of another kind", "", func(u string) *herald.Integration {
			return &herald.Integration{Type: "WEBHOOK", Fields: map[string]string{"url": u + "/integration"}}
		}, ""},
		{"no URL anywhere", "", func(string) *herald.Integration { return nil }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, channelstest.Answer(200, "1"))
			d := delivery(channels.EventOpen, "")
			if c.ownPath != "" {
				d.Notification.SetField("chatCWebhookUrl", rc.URL+c.ownPath)
			}
			d.Integration = c.integration(rc.URL)
			err := (chatc.Notifier{Client: conformance.Client()}).Notify(context.Background(), d)
			if c.wantPath == "" {
				conformance.CheckUnsent(t, err, rc)
				return
			}
			if err != nil {
				t.Fatalf("Notify: %v", err)
			}
			if r := rc.Only(t); r.Path != c.wantPath {
				t.Errorf("posted to %s, want %s", r.Path, c.wantPath)
			}
		})
	}
}

func TestClassification(t *testing.T) {
	type want = conformance.Outcome // its Status is the answer's
	cases := []struct {
		name   string
		status int
		body   string
		header []string
		want   want
	}{
		{"200 1", 200, "1", nil, want{OK: true}},
		{"200 1 and a newline", 200, "1\r\n", nil, want{OK: true}},
		{"202 from a workflow", 202, "", nil, want{OK: true}},
		{"200 reporting a 429", 200, "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0", nil, want{Retry: true}},
		{"200 with another error", 200, "Webhook message delivery failed with error: " + secretPath, nil, want{}},
		{"200 empty", 200, "", nil, want{}},
		{"400 bad card", 400, "Summary or Text is required.", nil, want{}},
		{"404 removed webhook", 404, "", nil, want{}},
		{"410 gone", 410, "", nil, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, channelstest.Answer(c.status, c.body, c.header...))
			err := (chatc.Notifier{Client: conformance.Client()}).Notify(context.Background(), delivery(channels.EventOpen, rc.URL+secretPath))
			rc.Only(t)
			want := c.want
			if !want.OK {
				want.Status = c.status
			}
			if conformance.CheckOutcome(t, err, want) != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), rc.URL)) {
				t.Errorf("error %q names the URL", err)
			}
		})
	}
}

// The webhook's URL is the notification's, and a URL that is not an absolute http(s) one is
// not sent to.
func TestConformance(t *testing.T) {
	badURL := func(name, url string) conformance.Change {
		return conformance.Change{Name: name, Change: func(d *channels.Delivery) { d.Notification.SetField("chatCWebhookUrl", url) }}
	}
	conformance.Run(t, conformance.Case{Kind: chatc.Kind, Accept: channelstest.Answer(200, "1"),
		Fields: func(url string) map[string]string { return map[string]string{"chatCWebhookUrl": url + secretPath} },
		Unsendable: []conformance.Change{badURL("URL not http", "ftp://outlook.example.com"+secretPath), badURL("URL not absolute", secretPath),
			badURL("URL without host", "https://"+secretPath), conformance.NoEvent, conformance.UnknownEvent}})
}

// A card names the project, and carries each link the delivery offers as a button (an OpenUri
// action) and no other; an alert's field cannot make a link in the title, which the service
// reads as Markdown.
func TestCardCarriesLinksAsButtons(t *testing.T) {
	rc := channelstest.NewReceiver(t, channelstest.Answer(200, "1"))
	d := delivery(channels.EventAcknowledge, rc.URL+secretPath)
	d.Project, d.Org = "Orders", "Acme"
	d.Alert.HostnameAndPort = "[click me](https://evil.example/) **now**"
	d.Alert.AcknowledgedUntil, d.Alert.AcknowledgingUsername = channelstest.At("2026-11-21T19:55:00Z"), "alice@example.com"
	d.Links = herald.ActionLinks{View: "https://herald.example.com/act/v1.view?a=1&b=2", Unacknowledge: "https://herald.example.com/act/v1.unack"}
	if err := (chatc.Notifier{Client: conformance.Client(), Now: now}).Notify(context.Background(), d); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	var m struct {
		Title           string                   `json:"title"`
		Sections        []struct{ Facts []fact } `json:"sections"`
		PotentialAction []struct {
			Type    string                     `json:"@type"`
			Name    string                     `json:"name"`
			Targets []struct{ OS, URI string } `json:"targets"`
		} `json:"potentialAction"`
	}
	if err := json.Unmarshal(rc.Only(t).Body, &m); err != nil {
		t.Fatal(err)
	}
	if want := `Alert acknowledged: Host down: \[click me\]\(https://evil.example/\) \*\*now\*\* \(replica set rs0\)`; m.Title != want {
		t.Errorf("title %q, want %q", m.Title, want)
	}
	facts := map[string]string{}
	for _, f := range m.Sections[0].Facts {
		facts[f.Name] = f.Value
	}
	if facts["Project"] != "Orders (organization Acme)" || facts["Acknowledged"] != "until 19:55 UTC by alice@example.com" {
		t.Errorf("facts %v, want the project by name and the acknowledgement", facts)
	}
	want := [][2]string{{"Withdraw the acknowledgement", d.Links.Unacknowledge}, {"View the alert", d.Links.View}}
	if len(m.PotentialAction) != len(want) {
		t.Fatalf("actions %+v, want %v", m.PotentialAction, want)
	}
	for i, a := range m.PotentialAction {
		if a.Type != "OpenUri" || a.Name != want[i][0] || len(a.Targets) != 1 || a.Targets[0].OS != "default" || a.Targets[0].URI != want[i][1] {
			t.Errorf("action %d = %+v, want OpenUri %q to %s", i, a, want[i][0], want[i][1])
		}
	}
}
