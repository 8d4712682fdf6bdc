package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/store"
)

// The pages of notices' action links (docs/act.md). A link is /act/{token}:
// the token (package actlink) names one alert, one action and the recipient the notice went
// to, and is the only credential: no API key, no cookie, no Digest. A GET (a person, or a mail
// scanner opening every link of a mail) only shows the alert; the page's one button POSTs to
// the same URL, and only that acts, once. Every answer is an HTML page that loads nothing
// (inline style under a hash in the Content-Security-Policy, no script), kept out of frames,
// caches and Referer headers. A token that does not verify, or names an alert gone or of
// another project, is counted in the failed-authentication throttle. The token is never
// logged (loggedPath), nor recorded in events or metrics.

// ActPath is where the pages of action links are served, outside the API's base path.
const ActPath = "/act/"

// actRoute is the route of every /act/ request, as metrics and the log name it.
const actRoute = ActPath + "{token}"

// actRoutes are the endpoints of action links, as docs/api.md and openapi.json name them.
var actRoutes = []string{"GET " + actRoute, "POST " + actRoute}

// actBodyLimit bounds the body of a button's POST: the form has no field.
const actBodyLimit = 4 << 10

// actThrottleName is the name failed action links are counted under, with the client's
// address, in the failed-authentication throttle.
const actThrottleName = "action link"

// actNotices is how many of the alert's last notices the page lists.
const actNotices = 5

// actComment is the acknowledgement comment of an acknowledgement made from a notice.
const actComment = "Acknowledged from a notice's link."

// SourceNotice is the raw "source" of an event made by acting from a notice (the API's own
// events say "API").
const SourceNotice = "NOTICE"

//go:embed act/page.html
var actPageText string

//go:embed act/page.css
var actStyle string

var actPage = template.Must(template.New("act").Parse(actPageText))

// actPolicy allows the page nothing but its own style (by its hash) and a form posting back
// to this server.
var actPolicy = func() string {
	sum := sha256.Sum256([]byte(actStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}()

// loggedPath is the path of r as the log shows it: that of an action link without its token.
func loggedPath(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, ActPath) {
		return actRoute
	}
	if strings.HasPrefix(r.URL.Path, PingPath) {
		return pingRoute
	}
	return r.URL.Path
}

// actView is what the page shows.
type actView struct {
	Title   string
	Outcome string   // what happened, or why the link does not work
	Details []string // more about it
	Tone    string   // ok, error, or "" for information
	Alert   *alertView
	Digest  *digestView
	Button  string // the action's button; "" for none
	Style   template.CSS
}

// alertView is the alert as the page shows it.
type alertView struct {
	ID, What, Type, Target, Project, Status string
	Since, Resolved, Acknowledged, Comment  string
	Notices                                 []noticeView
}

// noticeView is one of the alert's delivery attempts.
type noticeView struct{ At, Kind, Outcome string }

// actFailure is why a link does not work: its status and what the page says.
type actFailure struct {
	status  int
	outcome string
	detail  string
}

// serveAct answers a request under ActPath.
func (s *Server) serveAct(w *statusRecorder, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", actPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	h["Cache-Control"] = noStore
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		h.Set("Allow", "GET, HEAD, POST")
		s.actFailed(w, r, actFailure{status: http.StatusMethodNotAllowed, outcome: "This page answers only GET and POST",
			detail: "Open the link in a browser."})
		return
	}
	var form []byte // a POST's body: a digest page's form says how long to acknowledge for
	if r.Method == http.MethodPost {
		if err := crossOrigin.Check(r); err != nil {
			s.actFailed(w, r, actFailure{status: http.StatusForbidden, outcome: "Refused: the request came from another site",
				detail: "Only the button of this page acts. Open the link from the notice and press the button there."})
			return
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, actBodyLimit))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				s.actFailed(w, r, actFailure{status: http.StatusRequestEntityTooLarge, outcome: "The request is too large",
					detail: "The page's buttons send at most one short field."})
				return
			}
			s.actFailed(w, r, actFailure{status: http.StatusBadRequest, outcome: "The request could not be read"})
			return
		}
		form = b
	}
	ctx, now, address := r.Context(), s.cfg.Clock.Now(), clientNetwork(remoteAddress(r))
	wait, err := s.store.AuthRefused(ctx, actThrottleName, address, s.cfg.AuthLimits)
	if err != nil {
		s.actUnavailable(w, r, err)
		return
	}
	if wait > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		s.actFailed(w, r, actFailure{status: http.StatusTooManyRequests, outcome: "Too many links that did not work",
			detail: fmt.Sprintf("This address tried too many links that did not work. Try again in %d seconds.", retryAfterSeconds(wait))})
		return
	}
	claims, fail := s.actClaims(strings.TrimPrefix(r.URL.Path, ActPath), now)
	if fail == nil && claims.Action == actlink.ViewDigest {
		s.serveDigest(w, r, claims, form, now, address)
		return
	}
	var a herald.Alert
	if fail == nil {
		if a, fail, err = s.actAlert(ctx, claims, now); err != nil {
			s.actUnavailable(w, r, err)
			return
		}
	}
	if fail != nil {
		s.actRefused(w, r, address, *fail)
		return
	}
	v := actView{}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		if status, a, err = s.act(ctx, r, claims, a, now, &v); err != nil {
			if herald.IsNotFound(err) {
				s.actFailed(w, r, actFailure{status: http.StatusNotFound, outcome: "This alert no longer exists", detail: "Nothing was changed."})
				return
			}
			s.actUnavailable(w, r, err)
			return
		}
	}
	if err := s.showAlert(ctx, claims, a, now, &v); err != nil {
		s.actUnavailable(w, r, err)
		return
	}
	s.writeActPage(w, r, status, v)
}

// actRefused answers a link that does not work (fail says why), counting it against address
// in the failed-authentication throttle.
func (s *Server) actRefused(w *statusRecorder, r *http.Request, address string, fail actFailure) {
	if err := s.store.AuthFailed(r.Context(), actThrottleName, address, s.cfg.AuthLimits); err != nil {
		s.actUnavailable(w, r, err)
		return
	}
	s.log.Info("action link refused", zap.String("remote", remoteAddress(r)), zap.String("method", r.Method),
		zap.Int("status", fail.status), zap.String("why", fail.outcome))
	s.actFailed(w, r, fail)
}

// actClaims verifies token at now: fail says why it does not work.
func (s *Server) actClaims(token string, now time.Time) (actlink.Claims, *actFailure) {
	if s.cfg.ActionKeys.Empty() {
		return actlink.Claims{}, &actFailure{status: http.StatusNotFound, outcome: "This Herald does not take action links",
			detail: "Its operator has not set HERALD_ACTION_KEYS. Nothing was changed."}
	}
	c, err := s.cfg.ActionKeys.Verify(token, now)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, actlink.ErrUnknownKey), errors.Is(err, actlink.ErrForged):
		return c, &actFailure{status: http.StatusForbidden, outcome: "This link is not valid",
			detail: "It was changed, forged, or signed with a key this Herald no longer has. Nothing was changed."}
	case errors.Is(err, actlink.ErrExpired):
		return c, &actFailure{status: http.StatusGone, outcome: "This link has expired",
			detail: "Links work for 14 days, and for 24 hours after their alert closed. Nothing was changed."}
	}
	return c, &actFailure{status: http.StatusBadRequest, outcome: "This link is not complete", // ErrMalformed
		detail: "It may have been cut short when it was copied: open it from the notice itself. Nothing was changed."}
}

// actAlert reads the alert of verified claims c: fail says why the link does not work (err:
// the store could not be read).
func (s *Server) actAlert(ctx context.Context, c actlink.Claims, now time.Time) (herald.Alert, *actFailure, error) {
	gone := &actFailure{status: http.StatusNotFound, outcome: "This alert no longer exists", detail: "Nothing was changed."}
	var a herald.Alert
	var err error
	switch {
	case c.Global:
		a, err = s.store.GlobalAlert(ctx, c.Alert)
		if err == nil && a.GroupID != c.Group {
			return a, gone, nil
		}
	case c.Group == "":
		return a, gone, nil
	default:
		a, err = s.store.Alert(ctx, c.Group, c.Alert)
	}
	if herald.IsNotFound(err) {
		return a, gone, nil
	}
	if err != nil {
		return a, nil, err
	}
	if !actlink.Live(c, a.Resolved.Time, now) {
		return a, &actFailure{status: http.StatusGone, outcome: "This link has expired",
			detail: "Its alert closed more than 24 hours ago. Nothing was changed."}, nil
	}
	return a, nil, nil
}

// act does what a button's POST asks of alert a, once, and says in v what happened: the
// answer's status and the alert as it is now.
func (s *Server) act(ctx context.Context, r *http.Request, c actlink.Claims, a herald.Alert, now time.Time, v *actView) (int, herald.Alert, error) {
	closed := func() (int, herald.Alert, error) {
		v.Outcome, v.Tone = "The alert has closed", "error"
		v.Details = []string{"A closed alert cannot be acknowledged. Nothing was changed."}
		return http.StatusConflict, a, nil
	}
	if c.Action == actlink.View {
		v.Outcome, v.Details = "This link only shows the alert", []string{"It has no button. Nothing was changed."}
		return http.StatusBadRequest, a, nil
	}
	if !herald.Active(a.Status) {
		return closed()
	}
	n := noticeAck{global: c.Global, group: c.Group, alertID: a.ID, who: c.Recipient, recipient: c.Recipient,
		source: SourceNotice, action: c.Action.String(), comment: actComment, remote: remoteAddress(r), now: now}
	var kept bool
	acknowledges := c.Action.Acknowledges()
	switch {
	case acknowledges > 0:
		n.until, n.kept = now.Add(acknowledges), &kept
	case !a.Acknowledged(now):
		v.Outcome, v.Details = "The alert is not acknowledged", []string{"There is no acknowledgement to withdraw. Nothing was changed."}
		return http.StatusOK, a, nil
	default: // Unacknowledge.
		n.until = now
	}
	after, err := s.applyNoticeAck(ctx, n)
	if e := herald.ErrorOf(err); e != nil && e.Code == herald.CodeAlertNotActive {
		return closed()
	}
	if err != nil {
		return 0, a, err
	}
	v.Tone = "ok"
	switch {
	case acknowledges == 0:
		v.Outcome, v.Details = "Acknowledgement withdrawn", []string{"Its notifications resume."}
	case kept:
		v.Outcome = "Already acknowledged until " + showTime(after.AcknowledgedUntil.Time) + " by " + after.AcknowledgingUsername
		v.Details = []string{"Nothing was changed."}
	default:
		v.Outcome = "Acknowledged until " + showTime(after.AcknowledgedUntil.Time) + " by " + after.AcknowledgingUsername
		v.Details = []string{"Its notifications stop until then, as for an acknowledgement made through the API."}
	}
	return http.StatusOK, after, nil
}

// newAlertView is alert a as a page shows it at now, without its project and notices.
func newAlertView(a herald.Alert, now time.Time) *alertView {
	av := &alertView{ID: a.ID, What: herald.What(a), Type: a.EventTypeName, Target: herald.Target(a), Status: a.Status,
		Since: showTime(a.Created.Time) + " (" + ago(now.Sub(a.Created.Time)) + ")"}
	if !a.Resolved.IsZero() {
		av.Resolved = showTime(a.Resolved.Time)
	}
	if a.Acknowledged(now) {
		av.Acknowledged = "until " + showTime(a.AcknowledgedUntil.Time) + " by " + a.AcknowledgingUsername
		av.Comment = a.AcknowledgementComment
	}
	return av
}

// showAlert fills v with alert a and the button of c's action, if it can act on a at now.
func (s *Server) showAlert(ctx context.Context, c actlink.Claims, a herald.Alert, now time.Time, v *actView) error {
	av := newAlertView(a, now)
	if a.GroupID != "" {
		var err error
		if av.Project, err = s.projectName(ctx, a.GroupID); err != nil {
			return err
		}
		attempts, _, err := s.store.Attempts(ctx, a.GroupID, a.ID, store.Page{Limit: actNotices})
		if err != nil {
			return err
		}
		for _, at := range attempts {
			kind := at.Kind
			if at.Via != "" {
				kind += " by " + at.Via
			}
			av.Notices = append(av.Notices, noticeView{At: showTime(at.At.Time), Kind: kind, Outcome: at.Outcome})
		}
	}
	v.Alert, v.Title = av, av.What
	if herald.Active(a.Status) {
		switch {
		case c.Action.Acknowledges() > 0 && !a.Acknowledged(now):
			v.Button = "Acknowledge for " + map[time.Duration]string{time.Hour: "1 hour", 4 * time.Hour: "4 hours"}[c.Action.Acknowledges()]
		case c.Action == actlink.Unacknowledge && a.Acknowledged(now):
			v.Button = "Withdraw the acknowledgement"
		}
	}
	return nil
}

// projectName is the name of project groupID, "" when it is gone.
func (s *Server) projectName(ctx context.Context, groupID string) (string, error) {
	p, err := s.store.Project(ctx, groupID)
	if herald.IsNotFound(err) {
		return "", nil
	}
	return p.Name, err
}

// actFailed answers a link that does not work, or a request the page refuses.
func (s *Server) actFailed(w http.ResponseWriter, r *http.Request, f actFailure) {
	v := actView{Title: f.outcome, Outcome: f.outcome, Tone: "error"}
	if f.detail != "" {
		v.Details = []string{f.detail}
	}
	s.writeActPage(w, r, f.status, v)
}

// actUnavailable answers a request the store could not serve (the token is not logged).
func (s *Server) actUnavailable(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Warn("action link not served", zap.String("method", r.Method), zap.String("path", actRoute), zap.Error(err))
	w.Header().Set("Retry-After", unavailableRetryAfter)
	s.actFailed(w, r, actFailure{status: http.StatusServiceUnavailable, outcome: "Herald cannot answer now",
		detail: "Try again in a moment. Nothing was changed."})
}

// writeActPage renders v with status (no body for HEAD).
func (s *Server) writeActPage(w http.ResponseWriter, r *http.Request, status int, v actView) {
	v.Style = template.CSS(actStyle)
	if v.Title == "" {
		v.Title = v.Outcome
	}
	var b bytes.Buffer
	if err := actPage.Execute(&b, v); err != nil {
		s.log.Error("action page", zap.Error(err))
		status, b = http.StatusInternalServerError, *bytes.NewBufferString("Unexpected error.")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}

// showTime is t as the page shows it.
func showTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// ago says how long d is, roughly, as a person reads it.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " " + plural(int(d%time.Hour/time.Minute), "minute") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
