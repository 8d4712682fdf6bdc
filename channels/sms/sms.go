package sms

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the gateway's public address.
const DefaultBaseURL = "https://api.twilio.com"

// MaxBody is the longest text sent, in GSM 7-bit characters: one segment, so that a notice
// arrives whole on every phone and costs one message.
const MaxBody = 160

// The reply codes a text ends with when it carries action links: what a reply of that one
// digit does (api/hooks_sms.go reads them).
const (
	replyAcknowledge = " Reply 1 to ack 1h, 4 for 4h"
	replyWithdraw    = " Reply 0 to unack"
)

// Notifier sends SMS deliveries through the gateway. Client nil means a client from
// channels.NewHTTPClient(false, 10s): private addresses refused.
type Notifier struct {
	Client     *http.Client
	BaseURL    string       // default https://api.twilio.com (HERALD_SMS_URL)
	AccountSID string       // HERALD_SMS_ACCOUNT
	AuthToken  string       // HERALD_SMS_TOKEN; never logged
	From       string       // sender number, HERALD_SMS_FROM
	Now        channels.Now // the time "since when" is said against; nil: the system clock
	// Sent, when set, is told of each text sent with a reply code: the number it went to and
	// its delivery, for a reply from that number to act on its alert (cmd/herald keeps it in
	// the store). A text that carries no code tells nobody.
	Sent func(ctx context.Context, to string, d channels.Delivery)
}

// number is a phone number as the gateway takes it: an optional + and digits.
var number = regexp.MustCompile(`^\+?[0-9]{6,16}$`)

// Notify texts d to d.To, else to the notification's mobileNumber. See the package doc.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	to, err := d.Recipient("mobileNumber")
	if err != nil {
		return err
	}
	to = normalize(to)
	if !number.MatchString(to) {
		return &channels.Failure{Reason: "the mobile number is not a phone number"}
	}
	if _, ok := channels.Headline(d.Event); !ok {
		return channels.NoEvent()
	}
	if n.AccountSID == "" || n.AuthToken == "" {
		return &channels.Failure{Reason: "no SMS gateway account configured (HERALD_SMS_ACCOUNT, HERALD_SMS_TOKEN)"}
	}
	if n.From == "" {
		return &channels.Failure{Reason: "no SMS sender number configured (HERALD_SMS_FROM)"}
	}
	base := n.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	endpoint := strings.TrimRight(base, "/") + "/2010-04-01/Accounts/" + url.PathEscape(n.AccountSID) + "/Messages.json"
	form := url.Values{"To": {to}, "From": {n.From}, "Body": {Text(d, n.Now.Time())}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return &channels.Failure{Reason: "the SMS gateway URL (HERALD_SMS_URL) is not a URL"}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Herald")
	req.SetBasicAuth(n.AccountSID, n.AuthToken)

	err = channels.Send(n.Client, req)
	if err == nil && n.Sent != nil && !d.Links.Empty() && d.Digest == nil {
		n.Sent(ctx, to, d)
	}
	var f *channels.Failure
	if errors.As(err, &f) && f.Rejected {
		// The gateway refused the account SID and auth token: those are the operator's
		// configuration, not a token a user put in a notification, so this is not Rejected
		// (which makes the dispatcher remove the notification's token and email the project
		// owners). Retrying cannot help until the operator fixes the configuration.
		return &channels.Failure{Status: f.Status,
			Reason: "the SMS gateway refused the account credentials (HERALD_SMS_ACCOUNT, HERALD_SMS_TOKEN): " + f.Reason}
	}
	return err
}

// Text is the message of a delivery (of a known event) read at now, in the words of every
// people's notice (channels.NoticeOf): "Herald Open: Host down: db1.example.com:27017, since
// 03:12 UTC, 14 min, project prod (organization Acme)", in one segment of GSM 7-bit characters
// (others are sent as '?'). With action links it ends with its reply code: "Reply 1 to ack 1h,
// 4 for 4h" for an open alert, "Reply 0 to unack" for an acknowledged one; the text before it
// is cut to leave it room.
func Text(d channels.Delivery, now time.Time) string {
	if d.Digest != nil {
		return digestText(d)
	}
	n, _ := channels.NoticeOf(d, now)
	parts := []string{"Herald " + n.Status + ": " + n.What}
	if n.Ack != "" {
		parts = append(parts, "acknowledged "+n.Ack)
	} else if n.Since != "" {
		parts = append(parts, n.Since)
	}
	if n.Where != "" {
		parts = append(parts, "project "+n.Where)
	}
	code := ""
	switch {
	case d.Links.Acknowledge1h != "":
		code = replyAcknowledge
	case d.Links.Unacknowledge != "":
		code = replyWithdraw
	}
	return cutGSM(toGSM(herald.OneLine(strings.Join(parts, ", "))), MaxBody-gsmLen(code), "...") + code
}

// digestWordsMin is the least room a digest's text leaves its words: a link longer than that
// allows is left out (its page is then reached from the email or chat digests).
const digestWordsMin = 30

// digestText is the text of a digest, in one segment: its counts, then the link to its page
// whole ("Herald: 41 alerts opened in project prod https://..."); the counts are cut to leave
// the link room.
func digestText(d channels.Delivery) string {
	words := toGSM(herald.OneLine("Herald: " + d.Digest.Headline(cmp.Or(herald.OneLine(d.Project), d.Alert.GroupID))))
	link := d.Digest.Link
	if link == "" || gsmLen(link) > MaxBody-1-digestWordsMin || toGSM(link) != link {
		return cutGSM(words, MaxBody, "...")
	}
	return cutGSM(words, MaxBody-1-gsmLen(link), "...") + " " + link
}

// normalize takes out what people write in phone numbers besides digits and a leading +.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '(', ')', '.', '-':
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}

// Kind is SMS: a text message to the notification's mobileNumber, and the means by which
// GROUP, ORG and USER notifications text people. It is sent once the operator sets a gateway
// account up (HERALD_SMS_ACCOUNT).
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "SMS", Project: true, Global: true, Links: true, Actor: "mobileNumber", Queue: "deliveries-sms", Priority: 5,
		Fields: []herald.KindField{{Name: "mobileNumber", Required: true, Check: herald.CheckPhoneNumber}}},
	Settings: []channels.Setting{
		{Flag: "sms-url", Env: "HERALD_SMS_URL", Address: true, Help: "SMS gateway address (default: the public one); unset account: no SMS"},
		{Flag: "sms-account", Env: herald.SettingSMS, Exact: true, Help: "SMS gateway account (the token: HERALD_SMS_TOKEN, environment only)"},
		{Flag: "sms-from", Env: "HERALD_SMS_FROM", Exact: true, Help: "sender number of text messages"},
		{Env: "HERALD_SMS_TOKEN", Secret: true},
	},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		if s[herald.SettingSMS] == "" {
			return nil
		}
		return Notifier{Client: client, BaseURL: s["HERALD_SMS_URL"], AccountSID: s[herald.SettingSMS],
			AuthToken: s["HERALD_SMS_TOKEN"], From: s["HERALD_SMS_FROM"]}
	},
}
