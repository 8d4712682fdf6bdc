package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// Heartbeats (docs/api.md#heartbeats): the resource under the project, and the ping endpoint
// under PingPath, which takes no API key (the token in its path is the secret). The token is
// kept only as its SHA-256 hash: the ping URL is shown whole when the heartbeat is created and
// when its token is re-issued, and masked on every other read.

// PingPath is where heartbeats are pinged: PingPath + token [+ "/start" | "/fail" | "/<exit code>"].
const PingPath = "/heartbeats/"

// pingRoute is the route of every ping, as metrics and the log name it (never the token).
const pingRoute = PingPath + "{token}"

// pingRoutes are the ping endpoints, as docs/api.md and openapi.json name them.
var pingRoutes = []string{
	"GET " + pingRoute, "HEAD " + pingRoute, "POST " + pingRoute,
	"GET " + pingRoute + "/{action}", "HEAD " + pingRoute + "/{action}", "POST " + pingRoute + "/{action}",
}

// pingThrottleName is the name unknown tokens are counted under in the auth throttle.
const pingThrottleName = "heartbeat ping"

func heartbeatPath(h herald.Heartbeat) string {
	return "/groups/" + h.GroupID + "/heartbeats/" + h.ID
}

// heartbeatEvent is an audit event about heartbeat h of project p.
func (c *call) heartbeatEvent(typ string, p herald.Project, h herald.Heartbeat) herald.Event {
	ev := c.event(typ, p.Scope())
	ev.HeartbeatID = h.ID
	return ev
}

// minute is HERALD_MINUTE as the API was told it.
func (s *Server) minute() time.Duration {
	if s.cfg.Minute > 0 {
		return s.cfg.Minute
	}
	return time.Minute
}

// pingBase is the scheme and host of ping URLs.
func (c *call) pingBase() string {
	return strings.TrimSuffix(c.url(""), BasePath)
}

// heartbeatView is h as the API shows it at now: its status, and its ping URL (masked
// unless token is given).
func (c *call) heartbeatView(h herald.Heartbeat, token string) herald.Heartbeat {
	h.Status = h.StatusAt(c.now, c.s.minute(), dispatch.HeartbeatCron(h))
	if token == "" {
		token = "****" + h.TokenTail
	}
	h.PingURL = c.pingBase() + PingPath + token
	return h.Public()
}

// newPingToken gives h a fresh token (32 random bytes, base64url), keeping only its hash and
// its last characters, and returns it.
func newPingToken(h *herald.Heartbeat) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token := base64.RawURLEncoding.EncodeToString(b)
	h.TokenHash, h.TokenTail = hashPingToken(token), token[len(token)-4:]
	return token
}

func hashPingToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// heartbeat checks the caller may make a request of kind a in the {groupId} project and reads
// its {heartbeatId} heartbeat.
func (c *call) heartbeat(a herald.Access) (herald.Project, herald.Heartbeat, error) {
	return projectItem(c, a, "heartbeatId", c.s.store.Heartbeat)
}

// GET /groups/{groupId}/heartbeats: the project's heartbeats, oldest first.
func (s *Server) listHeartbeats(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Heartbeat, int, error) {
		hs, n, err := s.store.Heartbeats(c.ctx, p.ID, pg)
		for i := range hs {
			hs[i] = c.heartbeatView(hs[i], "")
		}
		return hs, n, err
	}, heartbeatPath)
}

// POST /groups/{groupId}/heartbeats: 201, with the ping URL in full (the only read that has it
// besides re-issuing the token).
func (s *Server) createHeartbeat(c *call) (reply, error) {
	p, in, err := projectRequest[herald.HeartbeatInput](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	h := herald.Heartbeat{ID: herald.NewID(c.now), GroupID: p.ID, Created: herald.At(c.now), Updated: herald.At(c.now),
		Status: herald.HeartbeatNew}
	if err := in.Apply(&h, true, dispatch.ParseCron); err != nil {
		return reply{}, err
	}
	since, err := s.store.Now(c.ctx)
	if err != nil {
		return reply{}, err
	}
	h.Since = since
	token := newPingToken(&h)
	if err := s.store.CreateHeartbeat(c.ctx, h, dispatch.HeartbeatDeadline(h, s.minute()),
		c.heartbeatEvent(herald.EventHeartbeatAdded, p, h)); err != nil {
		return reply{}, err
	}
	return c.one(http.StatusCreated, c.heartbeatView(h, token), heartbeatPath(h)), nil
}

// GET /groups/{groupId}/heartbeats/{heartbeatId}
func (s *Server) getHeartbeat(c *call) (reply, error) {
	_, h, err := c.heartbeat(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, c.heartbeatView(h, ""), heartbeatPath(h)), nil
}

// changeHeartbeat applies change to the {heartbeatId} heartbeat of the {groupId} project (the
// caller needs WriteMonitoring), recording HEARTBEAT_CHANGED_AUDIT and setting its deadline, and
// answers it, its ping URL in full when reissue gives it a new token.
func (c *call) changeHeartbeat(change func(h *herald.Heartbeat, now time.Time) ([]herald.Observation, error), reissue bool) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	return c.changeHeartbeatOf(p, change, reissue)
}

func (c *call) changeHeartbeatOf(p herald.Project, change func(h *herald.Heartbeat, now time.Time) ([]herald.Observation, error), reissue bool) (reply, error) {
	now, err := c.s.store.Now(c.ctx)
	if err != nil {
		return reply{}, err
	}
	shown, queued := "", false
	h, err := c.s.store.UpdateHeartbeat(c.ctx, p.ID, c.param("heartbeatId"), func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		obs, err := change(h, now)
		if err != nil {
			return store.HeartbeatWrite{}, err
		}
		queued = len(obs) > 0
		if reissue {
			shown = newPingToken(h)
		}
		h.Updated = herald.At(c.now)
		return store.HeartbeatWrite{Events: []herald.Event{c.heartbeatEvent(herald.EventHeartbeatChanged, p, *h)},
			Observations: obs, Due: dispatch.HeartbeatDeadline(*h, c.s.minute())}, nil
	})
	if err != nil {
		return reply{}, err
	}
	if queued {
		c.s.engine.Queued(c.ctx, p.ID) // the observations are stored: reconcile starts their session otherwise
	}
	return c.one(http.StatusOK, c.heartbeatView(h, shown), heartbeatPath(h)), nil
}

// PATCH /groups/{groupId}/heartbeats/{heartbeatId}: the given fields only; its deadline counts
// again with the new period or schedule from its last ping.
func (s *Server) updateHeartbeat(c *call) (reply, error) {
	p, in, err := projectRequest[herald.HeartbeatInput](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	return c.changeHeartbeatOf(p, func(h *herald.Heartbeat, now time.Time) ([]herald.Observation, error) {
		old := *h
		if err := in.Apply(h, false, dispatch.ParseCron); err != nil {
			return nil, err
		}
		if h.Name == old.Name {
			return nil, nil
		}
		// The open alerts are about the old name: they close, and a heartbeat still silent
		// is missed again under its new name at its deadline.
		h.Missed, h.Failed = false, false
		return old.CloseAlerts(now), nil
	}, false)
}

// POST /groups/{groupId}/heartbeats/{heartbeatId}/pause: no longer watched; its open alerts
// close.
func (s *Server) pauseHeartbeat(c *call) (reply, error) {
	return c.changeHeartbeat(func(h *herald.Heartbeat, now time.Time) ([]herald.Observation, error) {
		return h.Pause(now), nil
	}, false)
}

// POST /groups/{groupId}/heartbeats/{heartbeatId}/resume: watched again from now, as NEW.
func (s *Server) resumeHeartbeat(c *call) (reply, error) {
	return c.changeHeartbeat(func(h *herald.Heartbeat, now time.Time) ([]herald.Observation, error) {
		h.Resume(now)
		return nil, nil
	}, false)
}

// POST /groups/{groupId}/heartbeats/{heartbeatId}/token: a new token (the old one stops
// working), shown in full in this answer only.
func (s *Server) reissueHeartbeatToken(c *call) (reply, error) {
	return c.changeHeartbeat(func(*herald.Heartbeat, time.Time) ([]herald.Observation, error) { return nil, nil },
		true)
}

// DELETE /groups/{groupId}/heartbeats/{heartbeatId}: its open alerts close.
func (s *Server) deleteHeartbeat(c *call) (reply, error) {
	p, h, err := c.heartbeat(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	now, err := s.store.Now(c.ctx)
	if err != nil {
		return reply{}, err
	}
	obs := h.Pause(now)
	if err := s.store.DeleteHeartbeat(c.ctx, p.ID, h.ID, obs, c.heartbeatEvent(herald.EventHeartbeatDeleted, p, h)); err != nil {
		return reply{}, err
	}
	if len(obs) > 0 {
		s.engine.Queued(c.ctx, p.ID) // the observations are stored: reconcile starts their session otherwise
	}
	return noContent(), nil
}

// servePing answers a ping: 200 "OK" once it is stored (with the observation it makes, in the
// same transaction), 404 for an unknown token (counted in the auth throttle), 503 with
// Retry-After while Redis cannot be reached.
func (s *Server) servePing(w *statusRecorder, r *http.Request) {
	h := w.Header()
	h["Cache-Control"] = noStore
	h.Set("X-Content-Type-Options", "nosniff")
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		h.Set("Allow", "GET, HEAD, POST")
		s.methodNotAllowed(w, r)
		return
	}
	token, action, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, PingPath), "/")
	kind, ok := pingKind(action)
	if !ok || token == "" || len(token) > 128 {
		s.writeError(w, r, herald.Errorf(herald.KindNotFound, herald.CodeResourceNotFound, []any{pingRoute}, "There is no heartbeat at this address."))
		return
	}
	rids := r.URL.Query()["rid"]
	if len(rids) > 1 || len(rids) == 1 && rids[0] != "" && !herald.ValidRunID(rids[0]) {
		s.writeError(w, r, herald.InvalidAttribute("rid", "rid is one run id of 1 to %d letters, digits, '.', '_', ':' or '-'.", herald.MaxRunID))
		return
	}
	rid := ""
	if len(rids) == 1 {
		rid = rids[0]
	}
	ctx, address := r.Context(), clientNetwork(remoteAddress(r))
	if s.refusedByThrottle(w, r, pingThrottleName, address) {
		return
	}
	var body string
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(io.LimitReader(r.Body, herald.MaxPingBody))
		if err != nil {
			s.writeError(w, r, herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body could not be read."))
			return
		}
		body = strings.ToValidUTF8(string(b), "\uFFFD")
	}
	hash := hashPingToken(token)
	ref, found, err := s.store.HeartbeatByToken(ctx, hash)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	queued := false
	if found {
		queued, err = s.pingHeartbeat(ctx, ref, kind, rid, body, func(hb herald.Heartbeat) bool {
			return hmac.Equal([]byte(hb.TokenHash), []byte(hash)) // else re-issued meanwhile
		})
		if errors.Is(err, errUnknownToken) || herald.IsNotFound(err) {
			found, err = false, nil
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !found {
		if err := s.store.AuthFailed(ctx, pingThrottleName, address, s.cfg.AuthLimits); err != nil {
			s.log.Warn("counting an unknown heartbeat token failed", zap.Error(err))
		}
		s.writeError(w, r, herald.Errorf(herald.KindNotFound, herald.CodeResourceNotFound, []any{pingRoute}, "There is no heartbeat at this address."))
		return
	}
	if queued {
		s.engine.Queued(ctx, ref.GroupID) // the observation is stored: reconcile starts its session otherwise
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", "3")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, "OK\n")
	}
}

var errUnknownToken = errors.New("api: unknown heartbeat token")

// pingHeartbeat records a ping of kind (of run rid, with body) of heartbeat ref, stamped by
// Redis' clock, with the observations it makes and its next deadline, if it is still the one
// ok says; queued says whether it made observations.
func (s *Server) pingHeartbeat(ctx context.Context, ref store.HeartbeatRef, kind herald.PingKind, rid, body string, ok func(herald.Heartbeat) bool) (queued bool, err error) {
	_, err = s.store.UpdateHeartbeat(ctx, ref.GroupID, ref.ID, func(hb *herald.Heartbeat) (store.HeartbeatWrite, error) {
		if !ok(*hb) {
			return store.HeartbeatWrite{}, errUnknownToken
		}
		now, err := s.store.Now(ctx)
		if err != nil {
			return store.HeartbeatWrite{}, err
		}
		obs := hb.PingRun(kind, rid, body, now)
		queued = len(obs) > 0
		return store.HeartbeatWrite{Observations: obs, Due: dispatch.HeartbeatDeadline(*hb, s.minute())}, nil
	})
	return queued, err
}

// watchdog takes out of obs (alerts posted to the Alertmanager front door of project groupID)
// those that match a heartbeat's labelMatchers: each firing one pings the heartbeats it
// matches, and none opens an alert of its own (watchdog mode).
func (s *Server) watchdog(ctx context.Context, groupID string, obs []herald.Observation) ([]herald.Observation, error) {
	hs, err := s.store.WatchdogHeartbeats(ctx, groupID)
	if err != nil {
		return nil, err
	}
	kept, queued := obs[:0:0], false
	for _, o := range obs {
		matched := false
		for _, h := range hs {
			if len(h.LabelMatchers) == 0 || !herald.MatchAll(h.LabelMatchers, o.Labels) {
				continue
			}
			matched = true
			if o.Active == nil || !*o.Active {
				continue // a resolved watchdog alert is no sign of life
			}
			q, err := s.pingHeartbeat(ctx, store.HeartbeatRef{GroupID: groupID, ID: h.ID}, herald.PingSuccess, "", "",
				func(herald.Heartbeat) bool { return true })
			if err != nil && !herald.IsNotFound(err) {
				return nil, err
			}
			queued = queued || q
		}
		if !matched {
			kept = append(kept, o)
		}
	}
	if queued {
		s.engine.Queued(ctx, groupID) // the observations are stored: reconcile starts their session otherwise
	}
	return kept, nil
}

// pingKind is what the path after the token reports: nothing a success, "start" a start,
// "fail" a failure, an exit code 0 a success and 1 to 255 a failure.
func pingKind(action string) (herald.PingKind, bool) {
	switch action {
	case "":
		return herald.PingSuccess, true
	case "start":
		return herald.PingStart, true
	case "fail":
		return herald.PingFailure, true
	}
	n, err := strconv.Atoi(action)
	if err != nil || n < 0 || n > 255 || strconv.Itoa(n) != action {
		return 0, false
	}
	if n == 0 {
		return herald.PingSuccess, true
	}
	return herald.PingFailure, true
}
