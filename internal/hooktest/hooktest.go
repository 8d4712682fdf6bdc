// Package hooktest signs requests as the services that carry notices sign their callbacks to
// Herald (api/hooks_chatb.go, api/hooks_sms.go), for tests: written from the services'
// documentation, apart from the code that checks them.
package hooktest

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// ChatHeader is what the chat service sends with body at at: X-Slack-Request-Timestamp and
// X-Slack-Signature, "v0=" and the hex HMAC-SHA256 of "v0:{timestamp}:{body}" under secret.
func ChatHeader(secret string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return http.Header{"X-Slack-Request-Timestamp": {ts}, "X-Slack-Signature": {"v0=" + hex.EncodeToString(mac.Sum(nil))}}
}

// SMSHeader is what the SMS gateway sends with a POST of form to fullURL: X-Twilio-Signature,
// the base64 HMAC-SHA1 under token of fullURL followed by each parameter's name and value,
// sorted by name (one value each).
func SMSHeader(token, fullURL string, form url.Values) http.Header {
	s := fullURL
	for _, k := range slices.Sorted(maps.Keys(form)) {
		s += k + form.Get(k)
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(s))
	return http.Header{"X-Twilio-Signature": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}}
}

// ChatMessage is what a test reads of a chat message Herald posts or updates: its blocks and,
// for an update, whether it replaces the message and its text.
type ChatMessage struct {
	ReplaceOriginal bool        `json:"replace_original"`
	Text            string      `json:"text"`
	Blocks          []ChatBlock `json:"blocks"`
}

// ChatBlock is one block of a chat message; Elements are an actions block's buttons.
type ChatBlock struct {
	Type     string `json:"type"`
	BlockID  string `json:"block_id"`
	Elements []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		URL      string `json:"url"`
	} `json:"elements"`
}
