package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/xml"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// The SMS gateway's inbound webhook: a reply to a text notice (channels/sms), as the gateway
// posts it (Twilio's form parameters, signed with the account's auth token, HERALD_SMS_TOKEN),
// acts on the alert of the last notice texted to the sender's number, and is answered in
// TwiML, which the gateway texts back.

// twilioSignature is the signature the gateway sends of a request to fullURL with params:
// base64 of HMAC-SHA1, under token, of fullURL followed by each parameter's name and value,
// by name (the values of one name sorted, each once, as the gateway's own libraries do).
func twilioSignature(token, fullURL string, params url.Values) string {
	var b strings.Builder
	b.WriteString(fullURL)
	for _, name := range slices.Sorted(maps.Keys(params)) {
		vals := slices.Clone(params[name])
		slices.Sort(vals)
		for _, v := range slices.Compact(vals) {
			b.WriteString(name)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// checkTwilioSignature reports whether signature is the gateway's for a request to fullURL
// with params.
func checkTwilioSignature(token, fullURL, signature string, params url.Values) bool {
	return signature != "" && hmac.Equal([]byte(signature), []byte(twilioSignature(token, fullURL, params)))
}

// smsMissing is what the SMS endpoint lacks to act, "" when nothing.
func (s *Server) smsMissing() string {
	switch {
	case s.cfg.SMSToken == "":
		return "HERALD_SMS_TOKEN is not set"
	case s.cfg.ExternalURL == "":
		return "HERALD_EXTERNAL_URL is not set (the gateway signs the URL it calls)"
	case s.cfg.ActionKeys.Empty():
		return "HERALD_ACTION_KEYS is not set"
	}
	return ""
}

// smsReplays is how long a reply's message id is remembered: the gateway retries a reply it
// got no answer to, and a retry must not act twice.
const smsReplays = 24 * time.Hour

// smsReplyCodes are what a reply of one digit does: acknowledge for that long, or withdraw (0).
var smsReplyCodes = map[string]time.Duration{"1": time.Hour, "4": 4 * time.Hour, "0": 0}

// POST /hooks/sms/inbound: a text message to Herald's number.
func (s *Server) smsInbound(w *statusRecorder, r *http.Request) {
	h, body, ok := s.beginHook(w, r, "sms", s.smsMissing)
	if !ok {
		return
	}
	params, err := url.ParseQuery(string(body))
	if err != nil {
		h.refuse(http.StatusBadRequest, codeInvalidCallback, "The request's body is not form-encoded.")
		return
	}
	full := s.cfg.ExternalURL + r.URL.Path
	if r.URL.RawQuery != "" {
		full += "?" + r.URL.RawQuery
	}
	sig := r.Header.Get("X-Twilio-Signature")
	if !checkTwilioSignature(s.cfg.SMSToken, full, sig, params) {
		h.refuse(http.StatusForbidden, codeInvalidSignature, "The request's X-Twilio-Signature does not match.")
		return
	}
	first, err := s.store.FirstCallback(r.Context(), h.service, firstOf(params.Get("MessageSid"), sig), smsReplays)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !first {
		h.refuse(http.StatusForbidden, codeReplayedRequest, "This message was received before.")
		return
	}
	reply, err := s.smsReply(r.Context(), h, params.Get("From"), strings.TrimSpace(params.Get("Body")))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeTwiML(w, reply)
}

// smsReply acts on a reply of body from number, and says what came of it.
func (s *Server) smsReply(ctx context.Context, h *hookCall, from, body string) (string, error) {
	now := s.cfg.Clock.Now()
	last, found, err := s.store.LastSMS(ctx, from)
	if err != nil {
		return "", err
	}
	if !found {
		return "Herald has texted no alert to this number lately: nothing was changed.", h.counted()
	}
	ack, known := smsReplyCodes[body]
	if !known {
		return "Unknown reply. Reply 1 to ack 1h, 4 for 4h, 0 to unack: nothing was changed.", h.counted()
	}
	a, err := s.noticeAlert(ctx, last.Global, last.GroupID, last.AlertID)
	switch {
	case herald.IsNotFound(err):
		return "That alert no longer exists: nothing was changed.", nil
	case err != nil:
		return "", err
	case !herald.Active(a.Status):
		return "Alert " + a.EventTypeName + " is " + a.Status + ": nothing was changed.", nil
	case ack == 0 && !a.Acknowledged(now):
		return "Alert " + a.EventTypeName + " is not acknowledged: nothing was changed.", nil
	}
	who, err := s.smsSender(ctx, last, from)
	if err != nil {
		return "", err
	}
	a, err = s.applyNoticeAck(ctx, noticeAck{global: last.Global, group: last.GroupID, alertID: last.AlertID, until: now.Add(ack),
		who: who, recipient: from, source: "SMS_REPLY", comment: "Acknowledged by a text message reply.", remote: h.remote, now: now})
	if e := herald.ErrorOf(err); e != nil && e.Code == herald.CodeAlertNotActive {
		return "Alert " + a.EventTypeName + " is no longer open: nothing was changed.", nil
	}
	if err != nil {
		return "", err
	}
	if a.Acknowledged(now) {
		return "Acknowledged " + a.EventTypeName + " until " + a.AcknowledgedUntil.UTC().Format("15:04 UTC Jan 2") + " by " + who + ".", nil
	}
	return "Acknowledgement of " + a.EventTypeName + " withdrawn by " + who + ".", nil
}

// smsSender is whom a reply from number acts as: the username of the project's user with that
// mobile number, else the number.
func (s *Server) smsSender(ctx context.Context, last store.SMSNotice, number string) (string, error) {
	if last.GroupID == "" {
		return number, nil
	}
	p, err := s.store.Project(ctx, last.GroupID)
	if herald.IsNotFound(err) {
		return number, nil
	}
	if err != nil {
		return "", err
	}
	users, err := s.store.UsersOf(ctx, p)
	if err != nil {
		return "", err
	}
	for _, u := range users {
		if u.MobileNumber != "" && digits(u.MobileNumber) == digits(number) {
			return u.Username, nil
		}
	}
	return number, nil
}

// digits are the digits of a phone number, as written or as the gateway names it.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// writeTwiML answers the gateway with one message to text back.
func writeTwiML(w http.ResponseWriter, message string) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response><Message>`)
	_ = xml.EscapeText(&b, []byte(message))
	b.WriteString(`</Message></Response>`)
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}
