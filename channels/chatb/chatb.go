package chatb

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the public Web API address (HERALD_CHAT_B_URL overrides it).
const DefaultBaseURL = "https://slack.com"

// Limits of the service, in characters.
const (
	maxHeader  = 150  // a header block's text
	maxSection = 3000 // a section block's text
	maxField   = 2000 // one field of a section block
	maxText    = 3000 // the fallback text (the service takes 40000; one line needs far less)
)

// Notifier sends CHAT_B deliveries with chat.postMessage.
//
// The token and the channel: the notification's apiToken and channelName, else the CHAT_B
// integration's (each on its own: a token is the workspace's, the channel may be the
// notification's).
//
// Client nil means a client from channels.NewHTTPClient(false, 10s); BaseURL "" means
// DefaultBaseURL.
type Notifier struct {
	Client  *http.Client
	BaseURL string
	Now     channels.Now // the time "since when" is said against; nil: the system clock
}

type message struct {
	Channel string  `json:"channel"`
	Text    string  `json:"text"`
	Blocks  []block `json:"blocks"`
}

type block struct {
	Type     string     `json:"type"`
	BlockID  string     `json:"block_id,omitempty"`
	Text     *textObj   `json:"text,omitempty"`
	Fields   []*textObj `json:"fields,omitempty"`
	Elements []button   `json:"elements,omitempty"`
}

// button is a button element of an actions block: one that acts carries its link's token as
// its value (the interactivity endpoint verifies it); view opens the link's page.
type button struct {
	Type     string   `json:"type"`
	ActionID string   `json:"action_id"`
	Text     *textObj `json:"text"`
	Style    string   `json:"style,omitempty"`
	Value    string   `json:"value,omitempty"`
	URL      string   `json:"url,omitempty"`
}

// ActionsBlock is the block_id of a message's buttons.
const ActionsBlock = "herald_actions"

// buttons are the actions block of links: acknowledge for 1 or 4 hours, or withdraw, as the
// links offer, and view, labelled view; nil when there are none (no action keys).
func buttons(l herald.ActionLinks, view string) *block {
	var els []button
	add := func(link, id, label, style string) {
		if link != "" {
			els = append(els, button{Type: "button", ActionID: id, Text: plain(label, 75), Style: style, Value: linkToken(link)})
		}
	}
	add(l.Acknowledge1h, "acknowledge1h", "Acknowledge for 1 hour", "primary")
	add(l.Acknowledge4h, "acknowledge4h", "Acknowledge for 4 hours", "")
	add(l.Unacknowledge, "unacknowledge", "Withdraw the acknowledgement", "danger")
	if l.View != "" {
		els = append(els, button{Type: "button", ActionID: "view", Text: plain(view, 75), URL: l.View})
	}
	if len(els) == 0 {
		return nil
	}
	return &block{Type: "actions", BlockID: ActionsBlock, Elements: els}
}

// linkToken is the token of an action link, its last path segment.
func linkToken(link string) string { return link[strings.LastIndexByte(link, '/')+1:] }

type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func plain(s string, max int) *textObj {
	return &textObj{Type: "plain_text", Text: channels.Truncate(s, max, "…")}
}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	v, err := Kind.Values(d, "apiToken", "channelName")
	if err != nil {
		return err
	}
	token, channel := v[0], v[1]
	notice, ok := channels.NoticeOf(d, n.Now.Time())
	if !ok {
		return channels.NoEvent()
	}
	a := d.Alert
	title := herald.OneLine(notice.Headline + ": " + notice.What)
	var fields []*textObj
	for _, f := range notice.Facts(a) {
		fields = append(fields, plain(f[0]+": "+f[1], maxField))
	}
	fallback := title
	if notice.Where != "" && d.Digest == nil { // a digest's headline names its project

		fallback += ", project " + notice.Where
	}
	base, err := channels.AbsoluteBaseURL("CHAT_B", n.BaseURL, DefaultBaseURL)
	if err != nil {
		return err
	}
	blocks := []block{
		{Type: "header", Text: plain(title, maxHeader)},
		{Type: "section", Fields: fields},
		{Type: "section", Text: plain(notice.Details(a), maxSection)},
	}
	links, view := d.Links, "View the alert"
	if d.Digest != nil { // its one link is its page's
		links, view = herald.ActionLinks{View: d.Digest.Link}, channels.DigestLinkLabel
	}
	if b := buttons(links, view); b != nil {
		blocks = append(blocks, *b)
	}
	req, err := channels.PostJSON(ctx, "CHAT_B", base+"/api/chat.postMessage", message{
		Channel: channel,
		Text:    escape(channels.Truncate(fallback, maxText, "…")),
		Blocks:  blocks,
	}, "Authorization", "Bearer "+token, "Content-Type", "application/json; charset=utf-8")
	if err != nil {
		return err
	}
	return channels.Exchange(n.Client, req, checkAnswer)
}

// checkAnswer classifies the service's own {"ok": ..., "error": ...} of a 2xx answer.
func checkAnswer(resp *http.Response, raw []byte) error {
	ok, code, understood := parseAnswer(raw)
	switch {
	case !understood:
		// Not the service's answer (a proxy's page?): whether the message was posted is
		// unknown, and a retry could post it twice.
		return &channels.Failure{Status: resp.StatusCode, Reason: "CHAT_B answer not understood"}
	case ok:
		return nil
	}
	f := &channels.Failure{Status: resp.StatusCode, Reason: "CHAT_B answered error " + safeCode(code)}
	switch code {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission", "missing_scope":
		f.Rejected = true
	case "ratelimited":
		// The delay, from the Retry-After header, as a 429 would carry it.
		if rf, _ := channels.Classify(&http.Response{StatusCode: http.StatusTooManyRequests, Header: resp.Header}, nil).(*channels.Failure); rf != nil {
			f.RetryAfter = rf.RetryAfter
		}
		f.Retry = true
	case "fatal_error", "internal_error", "service_unavailable", "request_timeout":
		f.Retry = true
	}
	return f
}

// parseAnswer reads ok and error from the service's answer. The service writes "ok" first, so
// an answer cut at maxAnswer still says whether the message was posted.
func parseAnswer(raw []byte) (ok bool, code string, understood bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false, "", false
	}
	sawOK := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		switch key {
		case "ok":
			if dec.Decode(&ok) != nil {
				return false, "", false
			}
			sawOK = true
		case "error":
			if dec.Decode(&code) != nil {
				code = ""
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ok, code, sawOK
			}
		}
		if sawOK && (ok || code != "") {
			return ok, code, true
		}
	}
	return ok, code, sawOK
}

// safeCode is an error code fit for a Reason: the code when it is one (lower-case letters,
// digits and _, at most 64), else a placeholder, so that an answer echoing anything else (a
// token, markup) never reaches a Reason.
func safeCode(code string) string {
	if code == "" {
		return "(none)"
	}
	if len(code) > 64 || strings.TrimLeft(code, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "(unrecognized code)"
	}
	return code
}

// escape makes text literal in the service's markup: no mentions, links or channel names.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Kind is CHAT_B: a workspace token and a channel, each from the notification or else its
// project's CHAT_B integration. Each change of the integration must give its teamName
// (GivenAgain), so a stored integration that lacks one gets it.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "CHAT_B", Project: true, Global: true, Links: true, Actor: "channelName", Queue: "deliveries-chat_b", Priority: 4,
		Fields: []herald.KindField{
			{Name: "apiToken", Required: true, Mask: herald.MaskTail, Integration: "apiToken", Credential: true},
			{Name: "channelName", Required: true, Integration: "channelName"},
		},
		Integration: &herald.IntegrationType{Name: "CHAT_B", Fields: []herald.IntegrationField{
			{Name: "apiToken", Required: true, Mask: herald.MaskTail},
			{Name: "teamName", GivenAgain: true},
			{Name: "channelName", Shown: true},
		}}},
	Settings: []channels.Setting{{Flag: "chat-b-url", Env: "HERALD_CHAT_B_URL", Address: true, Help: "CHAT_B service address"}},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_CHAT_B_URL"]}
	},
}
