package chata

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the public API address (HERALD_CHAT_A_URL overrides it).
const DefaultBaseURL = "https://api.hipchat.com"

// maxMessage is the longest message, in characters, the service takes.
const maxMessage = 10000

// Notifier sends CHAT_A deliveries as room notifications.
//
// The token and the room: the notification's notificationToken and roomName, else the CHAT_A
// integration's. The integration's token is only sent to the integration's room (a
// notification naming another room without a token of its own is not sent), since a room
// notification token belongs to one room, and a 401 for a room it was not made for would read
// as the integration's token being refused.
//
// Client nil means a client from channels.NewHTTPClient(false, 10s); BaseURL "" means
// DefaultBaseURL. Now is the clock a message says "since when" against (nil: the system's).
type Notifier struct {
	Client  *http.Client
	BaseURL string
	Now     channels.Now
}

// message is the body of a room notification.
type message struct {
	Message       string `json:"message"`
	MessageFormat string `json:"message_format"`
	Color         string `json:"color"`
	Notify        bool   `json:"notify"`
	From          string `json:"from"`
}

// colors are the room notification colours, by event.
var colors = map[channels.Event]string{channels.EventOpen: "red", channels.EventUpdate: "red", channels.EventClose: "green",
	channels.EventAcknowledge: "yellow", channels.EventCancel: "gray"}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	token, room, f := target(d)
	if f != nil {
		return f
	}
	notice, ok := channels.NoticeOf(d, n.Now.Time())
	if !ok {
		return channels.NoEvent()
	}
	base, err := channels.AbsoluteBaseURL("CHAT_A", n.BaseURL, DefaultBaseURL)
	if err != nil {
		return err
	}
	req, err := channels.PostJSON(ctx, "CHAT_A", base+"/v2/room/"+url.PathEscape(room)+"/notification", message{
		Message:       text(notice, d.Alert),
		MessageFormat: "html",
		Color:         colors[d.Event],
		Notify:        true,
		From:          "Herald",
	}, "Authorization", "Bearer "+token)
	if err != nil {
		return err
	}
	return channels.Send(n.Client, req)
}

// maxLine bounds each line of a message's words, in characters, escaped.
const maxLine = 1000

// text is the HTML message of a notice: its words (the first line bold), its links, then the
// alert's Summary, every text escaped so that no field of an alert can add markup, a link or a
// mention (the html format does not expand @mentions). It fits maxMessage: the Summary is cut
// where it must, never inside an entity or a tag.
func text(n channels.Notice, a herald.Alert) string {
	var b strings.Builder
	for i, l := range n.Lines() {
		l = cut(html.EscapeString(l), maxLine)
		if i == 0 {
			b.WriteString("<b>" + l + "</b>")
			continue
		}
		b.WriteString("<br>" + l)
	}
	for i, l := range n.Links {
		sep := " | "
		if i == 0 {
			sep = "<br>"
		}
		b.WriteString(sep + `<a href="` + html.EscapeString(l.URL) + `">` + html.EscapeString(l.Label) + "</a>")
	}
	b.WriteString("<br><br>")
	summary := strings.ReplaceAll(html.EscapeString(n.Details(a)), "\n", "<br>")
	return b.String() + cut(summary, maxMessage-utf8.RuneCountInString(b.String()))
}

// cut is s, HTML, in at most n characters: when it is longer, cut (before an entity or a tag
// the cut would split) and ended with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	s = string([]rune(s)[:n-1])
	if i := strings.LastIndexByte(s, '&'); i > strings.LastIndexByte(s, ';') {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '<'); i > strings.LastIndexByte(s, '>') {
		s = s[:i]
	}
	return s + "…"
}

// target finds the token and room of d: the notification's own, else the CHAT_A integration's.
func target(d channels.Delivery) (token, room string, f *channels.Failure) {
	token, room = d.Notification.Field("notificationToken"), Kind.Field(d, "roomName")
	if token == "" && room == Kind.IntegrationField(d, "roomName") { // the token is its room's
		token = Kind.IntegrationField(d, "notificationToken")
	}
	switch {
	case room == "":
		return "", "", &channels.Failure{Reason: "no room: neither the notification nor a CHAT_A integration sets a roomName"}
	case token == "":
		return "", "", &channels.Failure{Reason: "no notification token for the room: neither the notification nor the CHAT_A integration of that room sets one"}
	}
	return token, room, nil
}

// Kind is CHAT_A (CHATA in global configurations): a room and its notification token, from
// the notification or its project's CHAT_A integration.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "CHAT_A", GlobalName: "CHATA", Project: true, Global: true, Links: true, Actor: "roomName", Queue: "deliveries-chat_a", Priority: 4,
		Fields: []herald.KindField{
			{Name: "notificationToken", Required: true, Mask: herald.MaskTail, Integration: "notificationToken", Credential: true},
			{Name: "roomName", Required: true, Integration: "roomName"},
		},
		Integration: &herald.IntegrationType{Name: "CHAT_A", Fields: []herald.IntegrationField{
			{Name: "notificationToken", Required: true, Mask: herald.MaskTail}, {Name: "roomName", Required: true}}}},
	Settings: []channels.Setting{{Flag: "chat-a-url", Env: "HERALD_CHAT_A_URL", Address: true, Help: "CHAT_A service address"}},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_CHAT_A_URL"]}
	},
}
