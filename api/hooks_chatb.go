package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
)

// The chat-b interactivity endpoint: a click on a button of a CHAT_B message (channels/chatb)
// reaches it as the Slack protocol sends it, a form-encoded `payload` of JSON signed with the
// app's signing secret (HERALD_CHAT_B_SIGNING_SECRET).

// chatBSkew is how far a callback's timestamp may be from now; a callback's signature is
// remembered for twice as long, so that a replay within the window is refused.
const chatBSkew = 5 * time.Minute

// chatBHooksHost is the host the service's response_url names.
const chatBHooksHost = "hooks.slack.com"

// chatBActionsBlock is the block_id of a message's buttons (channels/chatb.ActionsBlock).
const chatBActionsBlock = "herald_actions"

// Errors of checkChatBSignature.
var (
	errChatBStale     = errors.New("the request's timestamp is missing or more than 5 minutes away")
	errChatBSignature = errors.New("the request's signature does not match")
)

// checkChatBSignature checks a callback as the service signs it: X-Slack-Signature is "v0="
// and the hex HMAC-SHA256, under secret, of "v0:{X-Slack-Request-Timestamp}:{body}", and the
// timestamp (unix seconds) is within chatBSkew of now.
func checkChatBSignature(secret []byte, timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || ts <= 0 {
		return errChatBStale
	}
	if d := now.Sub(time.Unix(ts, 0)); d > chatBSkew || d < -chatBSkew {
		return errChatBStale
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	want := "v0=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(signature), []byte(want)) {
		return errChatBSignature
	}
	return nil
}

// chatBPayload is what Herald reads of a block_actions payload.
type chatBPayload struct {
	Type string `json:"type"`
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
	} `json:"user"`
	ResponseURL string `json:"response_url"`
	Message     struct {
		Blocks []json.RawMessage `json:"blocks"`
	} `json:"message"`
	Actions []struct {
		ActionID string `json:"action_id"`
		BlockID  string `json:"block_id"`
		Value    string `json:"value"`
	} `json:"actions"`
}

// chatBMissing is what the chat-b endpoint lacks to act, "" when nothing.
func (s *Server) chatBMissing() string {
	switch {
	case s.cfg.ChatBSigningSecret == "":
		return "HERALD_CHAT_B_SIGNING_SECRET is not set"
	case s.cfg.ActionKeys.Empty():
		return "HERALD_ACTION_KEYS is not set"
	}
	return ""
}

// POST /hooks/chat-b/actions: a click on a CHAT_B message's button.
func (s *Server) chatBActions(w *statusRecorder, r *http.Request) {
	h, body, ok := s.beginHook(w, r, "chat-b", s.chatBMissing)
	if !ok {
		return
	}
	now := s.cfg.Clock.Now()
	sig := r.Header.Get("X-Slack-Signature")
	switch err := checkChatBSignature([]byte(s.cfg.ChatBSigningSecret), r.Header.Get("X-Slack-Request-Timestamp"), sig, body, now); {
	case errors.Is(err, errChatBStale):
		h.refuse(http.StatusUnauthorized, codeStaleRequest, "The request's timestamp is missing or more than 5 minutes away.")
		return
	case err != nil:
		h.refuse(http.StatusUnauthorized, codeInvalidSignature, "The request's X-Slack-Signature does not match.")
		return
	}
	first, err := s.store.FirstCallback(r.Context(), h.service, sig, 2*chatBSkew)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !first {
		h.refuse(http.StatusForbidden, codeReplayedRequest, "This request was received before.")
		return
	}
	form, err := url.ParseQuery(string(body))
	var p chatBPayload
	if err != nil || json.Unmarshal([]byte(form.Get("payload")), &p) != nil {
		h.refuse(http.StatusBadRequest, codeInvalidCallback, "The request has no payload of JSON.")
		return
	}
	if p.Type != "block_actions" || len(p.Actions) == 0 || p.Actions[0].Value == "" {
		w.WriteHeader(http.StatusOK) // another interaction (the view button opens its page itself)
		return
	}
	c, err := s.cfg.ActionKeys.Verify(p.Actions[0].Value, now)
	if err != nil {
		h.refuse(http.StatusForbidden, codeInvalidToken, "The button's token does not verify: "+err.Error())
		return
	}
	if c.Action != actlink.Acknowledge1h && c.Action != actlink.Acknowledge4h && c.Action != actlink.Unacknowledge {
		w.WriteHeader(http.StatusOK)
		return
	}
	if !s.chatBResponseURL(p.ResponseURL) {
		h.refuse(http.StatusBadRequest, codeInvalidCallback, "The request's response_url is not the chat service's.")
		return
	}
	who := actorName(firstOf(p.User.Username, p.User.Name, p.User.ID))
	outcome, a, err := s.chatBAct(r.Context(), c, who, h.remote, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK) // the service wants its answer within 3 seconds; the message is replaced after
	update := s.chatBUpdate(p, c, a, outcome, now)
	go s.postChatBUpdate(context.WithoutCancel(r.Context()), p.ResponseURL, update)
}

// chatBAct acts on the alert c names as who, and says what came of it for the message.
func (s *Server) chatBAct(ctx context.Context, c actlink.Claims, who, remote string, now time.Time) (string, herald.Alert, error) {
	a, err := s.noticeAlert(ctx, c.Global, c.Group, c.Alert)
	switch {
	case herald.IsNotFound(err):
		return "This alert no longer exists.", a, nil
	case err != nil:
		return "", a, err
	case !herald.Active(a.Status) || !actlink.Live(c, a.Resolved.Time, now):
		return "This alert is " + a.Status + ": nothing was changed.", a, nil
	case c.Action == actlink.Unacknowledge && !a.Acknowledged(now):
		return "This alert is not acknowledged: nothing was changed.", a, nil
	}
	a, err = s.applyNoticeAck(ctx, noticeAck{global: c.Global, group: c.Group, alertID: c.Alert, until: now.Add(c.Action.Acknowledges()),
		who: who, recipient: c.Recipient, source: "CHAT_BUTTON", comment: "Acknowledged from a chat button.", remote: remote, now: now})
	if e := herald.ErrorOf(err); e != nil && e.Code == herald.CodeAlertNotActive {
		return "This alert is no longer open: nothing was changed.", a, nil
	}
	if err != nil {
		return "", a, err
	}
	if a.Acknowledged(now) {
		return "Acknowledged by " + a.AcknowledgingUsername + " until " + a.AcknowledgedUntil.UTC().Format("2006-01-02 15:04 UTC") + ".", a, nil
	}
	return "Not acknowledged: acknowledgement withdrawn by " + who + ".", a, nil
}

// firstOf is the first of vs that is not empty.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// chatBResponseURL reports whether a payload's response_url may be posted to: an https URL of
// the service's hooks host, or of the service address the operator set (HERALD_CHAT_B_URL).
// Any other would let a signed payload make Herald post anywhere.
func (s *Server) chatBResponseURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Host == "" || u.Fragment != "" {
		return false
	}
	if u.Scheme == "https" && u.Host == chatBHooksHost {
		return true
	}
	if s.cfg.ChatBURL == "" {
		return false
	}
	b, err := url.Parse(s.cfg.ChatBURL)
	return err == nil && b.Host != "" && u.Scheme == b.Scheme && u.Host == b.Host
}

// chatBMessage is what replaces a clicked message: its blocks but its buttons, a section
// saying what came of the click, and the buttons the alert now offers.
type chatBMessage struct {
	ReplaceOriginal bool   `json:"replace_original"`
	Text            string `json:"text"`
	Blocks          []any  `json:"blocks"`
}

// chatBUpdate is the message that replaces p's after acting: p's blocks without its buttons,
// the outcome, and buttons for what the alert now offers (signed for the same recipient), with
// the view button p had.
func (s *Server) chatBUpdate(p chatBPayload, c actlink.Claims, a herald.Alert, outcome string, now time.Time) chatBMessage {
	m := chatBMessage{ReplaceOriginal: true, Text: outcome}
	var view json.RawMessage
	for _, b := range p.Message.Blocks {
		var head struct {
			BlockID  string            `json:"block_id"`
			Elements []json.RawMessage `json:"elements"`
		}
		if json.Unmarshal(b, &head) == nil && head.BlockID == chatBActionsBlock {
			for _, e := range head.Elements {
				var el struct {
					ActionID string `json:"action_id"`
				}
				if json.Unmarshal(e, &el) == nil && el.ActionID == "view" {
					view = e
				}
			}
			continue
		}
		m.Blocks = append(m.Blocks, b)
	}
	m.Blocks = append(m.Blocks, map[string]any{"type": "section", "text": map[string]string{"type": "plain_text", "text": outcome}})
	var els []any
	if a.ID != "" {
		for _, act := range actlink.Actions(a, false, now) {
			bt, ok := chatBButtons[act]
			if !ok {
				continue
			}
			tok, err := s.cfg.ActionKeys.Sign(actlink.Claims{Global: c.Global, Group: c.Group, Alert: c.Alert, Action: act,
				Recipient: c.Recipient, Expires: actlink.Expiry(now, a.Resolved.Time)})
			if err != nil {
				continue
			}
			el := map[string]any{"type": "button", "action_id": act.String(), "text": map[string]string{"type": "plain_text", "text": bt.label}, "value": tok}
			if bt.style != "" {
				el["style"] = bt.style
			}
			els = append(els, el)
		}
	}
	if view != nil {
		els = append(els, view)
	}
	if len(els) > 0 {
		m.Blocks = append(m.Blocks, map[string]any{"type": "actions", "block_id": chatBActionsBlock, "elements": els})
	}
	return m
}

// chatBButtons are the labels and styles of the buttons that act, as channels/chatb makes them.
var chatBButtons = map[actlink.Action]struct{ label, style string }{
	actlink.Acknowledge1h: {"Acknowledge for 1 hour", "primary"},
	actlink.Acknowledge4h: {"Acknowledge for 4 hours", ""},
	actlink.Unacknowledge: {"Withdraw the acknowledgement", "danger"},
}

// postChatBUpdate replaces the clicked message through its response_url, with the guarded
// outbound client. It runs after the click was answered: a failure is logged.
func (s *Server) postChatBUpdate(ctx context.Context, responseURL string, m chatBMessage) {
	if s.cfg.HookClient == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(b))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := s.cfg.HookClient.Do(req)
	if err != nil {
		var ue *url.Error // the URL is the message's own secret: not logged
		if errors.As(err, &ue) {
			err = ue.Err
		}
		s.log.Warn("the clicked chat message was not updated", zap.String("service", "chat-b"), zap.Error(err))
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.log.Warn("the clicked chat message was not updated", zap.String("service", "chat-b"), zap.Int("status", resp.StatusCode))
	}
}
