package chatc

import (
	"context"
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// Limits, in characters: the service refuses cards larger than about 28 KB.
const (
	maxLine = 500
	maxText = 10000
)

// Notifier sends CHAT_C deliveries as MessageCards.
//
// The URL: the notification's chatCWebhookUrl, else the CHAT_C integration's. Client nil means
// a client from channels.NewHTTPClient(false, 10s): private addresses refused. Now is the
// clock a card says "since when" against (nil: the system's).
type Notifier struct {
	Client *http.Client
	Now    channels.Now
}

type card struct {
	Type            string    `json:"@type"`
	Context         string    `json:"@context"`
	Summary         string    `json:"summary"`
	ThemeColor      string    `json:"themeColor"`
	Title           string    `json:"title"`
	Sections        []section `json:"sections"`
	PotentialAction []action  `json:"potentialAction,omitempty"`
}

// action is a button that opens a link (an OpenUri action).
type action struct {
	Type    string `json:"@type"`
	Name    string `json:"name"`
	Targets []uri  `json:"targets"`
}

type uri struct {
	OS  string `json:"os"`
	URI string `json:"uri"`
}

type section struct {
	ActivityTitle string `json:"activityTitle"`
	Facts         []fact `json:"facts"`
	Text          string `json:"text"`
	Markdown      bool   `json:"markdown"`
}

type fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// themeColors are the card colours, by event.
var themeColors = map[channels.Event]string{channels.EventOpen: "D7000C", channels.EventUpdate: "D7000C", channels.EventClose: "2DC72D",
	channels.EventAcknowledge: "F2A900", channels.EventCancel: "808080"}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	target, err := webhookURL(d)
	if err != nil {
		return err
	}
	notice, ok := channels.NoticeOf(d, n.Now.Time())
	if !ok {
		return channels.NoEvent()
	}
	a := d.Alert
	title := herald.OneLine(notice.Headline + ": " + notice.What)
	var facts []fact
	all := notice.Facts(a)
	if !a.Created.IsZero() && d.Digest == nil {
		all = append(all, [2]string{"Created", a.Created.String()})
	}
	for _, f := range all {
		facts = append(facts, fact{f[0], channels.Truncate(herald.OneLine(f[1]), maxLine, "…")})
	}
	var actions []action
	for _, l := range notice.Links {
		actions = append(actions, action{Type: "OpenUri", Name: l.Label, Targets: []uri{{OS: "default", URI: l.URL}}})
	}
	req, err := channels.PostJSON(ctx, "CHAT_C", target, card{
		Type:       "MessageCard",
		Context:    "https://schema.org/extensions",
		Summary:    channels.Truncate(title, maxLine, "…"),
		ThemeColor: themeColors[d.Event],
		// The card's title is read as Markdown whatever the section says: escaped, so that an
		// alert's field cannot make a link or formatting of its own.
		Title: escapeMarkdown(channels.Truncate(title, maxLine, "…")),
		Sections: []section{{
			ActivityTitle: channels.Truncate(notice.What, maxLine, "…"),
			Facts:         facts,
			Text:          channels.Truncate(notice.Details(a), maxText, "…"),
			Markdown:      false,
		}},
		PotentialAction: actions,
	})
	if err != nil {
		return err
	}
	return channels.Exchange(n.Client, req, checkAnswer)
}

// checkAnswer reads, of a 200, the body that says whether the card was posted (other 2xx
// answers, as 202, say so by their status).
func checkAnswer(resp *http.Response, raw []byte) error {
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	answer := strings.TrimSpace(string(raw))
	switch {
	case answer == "1":
		return nil
	case strings.Contains(answer, "HTTP error 429"):
		// "Webhook message delivery failed with error: Microsoft Teams endpoint returned
		// HTTP error 429 ...": throttled behind a 200.
		return &channels.Failure{Status: resp.StatusCode, Retry: true, Reason: "CHAT_C answered 200 reporting its own 429 (throttled)"}
	}
	// Not a text to repeat: it may name the URL.
	return &channels.Failure{Status: resp.StatusCode, Reason: "CHAT_C answered 200 without accepting the card"}
}

// markdownSpecial are the characters that make Markdown links, markup and formatting
// within a line.
const markdownSpecial = "\\`*_[]()<>#|~"

// escapeMarkdown is s with every Markdown special character backslash-escaped: read as
// Markdown, it shows as s, with no link or formatting.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// webhookURL finds the URL of d: the notification's, else the CHAT_C integration's.
func webhookURL(d channels.Delivery) (string, error) {
	v, err := Kind.Values(d, "chatCWebhookUrl")
	if err != nil {
		return "", err
	}
	if !herald.ValidHTTPURL(v[0]) {
		return "", &channels.Failure{Reason: "CHAT_C webhook URL is not an absolute http or https URL"}
	}
	return v[0], nil
}

// Kind is CHAT_C: an incoming-webhook URL (user input: a private address is refused unless
// the operator allows it), from the notification or its project's CHAT_C integration.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "CHAT_C", Project: true, Global: true, Links: true, Queue: "deliveries-chat_c", Priority: 4,
		Fields: []herald.KindField{{Name: "chatCWebhookUrl", Required: true, Mask: herald.MaskURL, Integration: "chatCWebhookUrl", URL: true}},
		Integration: &herald.IntegrationType{Name: "CHAT_C", Fields: []herald.IntegrationField{
			{Name: "chatCWebhookUrl", Required: true, Mask: herald.MaskURL, URL: true}}}},
	New: func(_ channels.Settings, client *http.Client) channels.Notifier { return Notifier{Client: client} },
}
