package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
)

// HooksPath is where the services that carry notices call back: outside BasePath, and
// authenticated by each service's own signature rather than an API key.
const HooksPath = "/hooks/"

// hook is one endpoint a service calls back, and its handler.
type hook struct {
	pattern string
	serve   func(w *statusRecorder, r *http.Request)
}

// hooks are the service callbacks Herald serves (docs/api.md#service-callbacks).
func (s *Server) hooks() []hook {
	return []hook{
		{"POST /hooks/chat-b/actions", s.chatBActions},
		{"POST /hooks/sms/inbound", s.smsInbound},
	}
}

// serveHook answers a request under HooksPath: its hook, 405 for another method of a hook's
// path, 404 for any other path.
func (s *Server) serveHook(w *statusRecorder, r *http.Request) {
	found := false
	for _, h := range s.hooks() {
		method, path, _ := strings.Cut(h.pattern, " ")
		if path != r.URL.Path {
			continue
		}
		if method == r.Method {
			h.serve(w, r)
			return
		}
		found = true
	}
	if found {
		s.methodNotAllowed(w, r)
		return
	}
	s.writeError(w, r, herald.Errorf(herald.KindNotFound, herald.CodeResourceNotFound, []any{r.URL.Path}, "There is no resource at %s.", r.URL.Path))
}

// The error codes of a refused callback.
const (
	codeHookNotConfigured = "HOOK_NOT_CONFIGURED"
	codeInvalidSignature  = "INVALID_SIGNATURE"
	codeStaleRequest      = "STALE_REQUEST"
	codeReplayedRequest   = "REPLAYED_REQUEST"
	codeInvalidToken      = "INVALID_ACTION_TOKEN"
	codeInvalidCallback   = "INVALID_CALLBACK"
)

// maxHookBody bounds a callback's body: a chat service's holds the message it is about.
const maxHookBody = 1 << 20

// hookCall is one callback being answered: the service, for the throttle and the log, and the
// caller's address.
type hookCall struct {
	s       *Server
	w       *statusRecorder
	r       *http.Request
	service string // "chat-b", "sms"
	remote  string
}

func (s *Server) newHookCall(w *statusRecorder, r *http.Request, service string) *hookCall {
	return &hookCall{s: s, w: w, r: r, service: service, remote: remoteAddress(r)}
}

// beginHook starts a callback of service: answered already (ok false) when Herald lacks the
// setting missing names, the caller is throttled, or the body cannot be read.
func (s *Server) beginHook(w *statusRecorder, r *http.Request, service string, missing func() string) (h *hookCall, body []byte, ok bool) {
	h = s.newHookCall(w, r, service)
	if setting := missing(); setting != "" {
		h.notConfigured(setting)
		return h, nil, false
	}
	if h.throttled() {
		return h, nil, false
	}
	body, ok = h.body()
	return h, body, ok
}

// throttleName is what a service's refused callbacks are counted under, with the address.
func (h *hookCall) throttleName() string { return "hook:" + h.service }

// throttled answers 429 when the caller's address failed too often, and reports whether it did.
func (h *hookCall) throttled() bool {
	return h.s.refusedByThrottle(h.w, h.r, h.throttleName(), clientNetwork(h.remote))
}

// counted counts a failure of the caller's address in the authentication throttle: a refused
// callback, or an SMS reply that named nothing to act on (a guesser of numbers or codes is slowed).
func (h *hookCall) counted() error {
	return h.s.store.AuthFailed(h.r.Context(), h.throttleName(), clientNetwork(h.remote), h.s.cfg.AuthLimits)
}

// notConfigured answers a callback whose service Herald has no secret for: 404, as a path
// nothing serves, saying what to set (the role's start log says it too).
func (h *hookCall) notConfigured(setting string) {
	h.s.writeProblem(h.w, h.r, http.StatusNotFound, &herald.Error{Code: codeHookNotConfigured, Parameters: []any{setting},
		Detail: "This Herald does not take " + h.service + " callbacks: " + setting + " is not set."})
}

// refuse answers a callback that did not authenticate (or named nothing it may act on) with
// status and a short error body, logs why (never the request's secrets), and counts it
// against the caller's address in the authentication throttle. Nothing was changed.
func (h *hookCall) refuse(status int, code, detail string) {
	h.s.log.Warn("callback refused", zap.String("service", h.service), zap.String("remote", h.remote),
		zap.Int("status", status), zap.String("errorCode", code), zap.String("why", detail))
	if err := h.counted(); err != nil {
		h.s.writeError(h.w, h.r, err)
		return
	}
	h.s.writeProblem(h.w, h.r, status, &herald.Error{Code: code, Detail: detail})
}

// body reads the request's body, at most maxHookBody; ok is false when it answered already.
func (h *hookCall) body() ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(h.w, h.r.Body, maxHookBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.s.writeProblem(h.w, h.r, http.StatusRequestEntityTooLarge, &herald.Error{Code: herald.CodeRequestTooLarge,
			Detail: "The callback's body is larger than 1 MiB."})
		return nil, false
	case err != nil:
		h.s.writeProblem(h.w, h.r, http.StatusBadRequest, &herald.Error{Code: codeInvalidCallback, Detail: "The callback's body could not be read."})
		return nil, false
	}
	return b, true
}

// noticeAck is an acknowledgement (or its withdrawal, until not after now) made from a notice
// by who, through source (NOTICE, CHAT_BUTTON, SMS_REPLY), of the alert a verified link or a
// texted notice names.
type noticeAck struct {
	global         bool
	group, alertID string
	until          time.Time
	who            string // the chat user or the number (or the user of that number)
	recipient      string // whom the notice went to: the channel, the number
	source         string
	action         string // an action link's action, for the event ("" for none)
	digest         string // the digest whose page acted, for the event ("" for none)
	comment        string // the acknowledgement's comment: where it came from
	remote         string
	now            time.Time
	kept           *bool // as ackChange's kept
}

// applyNoticeAck makes the acknowledgement through applyAck, the one path the API's own takes, with an
// audit event saying it came from a notice, through which service, and by whom.
func (s *Server) applyNoticeAck(ctx context.Context, n noticeAck) (herald.Alert, error) {
	scope := herald.Scope{}
	if !n.global {
		p, err := s.store.Project(ctx, n.group)
		if err != nil {
			return herald.Alert{}, err
		}
		scope = p.Scope()
	}
	return s.applyNoticeAckIn(ctx, scope, n)
}

// applyNoticeAckIn is applyNoticeAck with the alert's scope read already: its project's, or
// none for a global alert.
func (s *Server) applyNoticeAckIn(ctx context.Context, scope herald.Scope, n noticeAck) (herald.Alert, error) {
	return s.applyAck(ctx, ackChange{global: n.global, scope: scope, id: n.alertID, until: herald.At(n.until),
		comment: n.comment, who: n.who, now: n.now, kept: n.kept, event: func(typ string) herald.Event {
			ev := herald.NewEvent(typ, herald.Principal{RemoteAddress: n.remote}, scope, n.now)
			ev.Username = n.who
			ev.Raw["source"] = n.source
			ev.Raw["by"] = n.who
			ev.Raw["recipient"] = n.recipient
			if n.action != "" {
				ev.Raw["action"] = n.action
			}
			if n.digest != "" {
				ev.Raw["digest"] = n.digest
			}
			return ev
		}})
}

// noticeAlert reads the alert a notice named.
func (s *Server) noticeAlert(ctx context.Context, global bool, group, id string) (herald.Alert, error) {
	if global {
		return s.store.GlobalAlert(ctx, id)
	}
	return s.store.Alert(ctx, group, id)
}

// actorName is a name a service gave for whoever acted, fit for acknowledgingUsername: one
// line of at most 64 characters.
func actorName(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}

// describeHooks logs, at start, which callbacks this API takes and why it refuses the others.
func (s *Server) describeHooks() {
	for _, c := range []struct{ service, missing string }{
		{"chat-b", s.chatBMissing()}, {"sms", s.smsMissing()},
	} {
		if c.missing == "" {
			s.log.Info("service callbacks taken", zap.String("service", c.service))
			continue
		}
		s.log.Info("service callbacks refused (404): "+c.missing, zap.String("service", c.service))
	}
}
