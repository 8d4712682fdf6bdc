package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
)

// The page of a digest's link (docs/act.md): a token of action ViewDigest names a digest of
// its project (Claims.Alert is the digest's id) and whom it reached. A GET lists the digest's
// alerts as they are now, a page at a time (?page=N); the page's buttons POST for=1h or
// for=4h, and only that acts: it acknowledges every alert of the digest still open and not
// acknowledged, each through the single page's path (applyNoticeAckIn), in the recipient's
// name. The digest's record bounds what the token reaches: its entries, and of those only
// the alerts of the token's project.

// Bounds of a digest's page and of acknowledging all its alerts.
const (
	// actDigestPageSize is how many of the digest's alerts one page lists, read in one batch.
	actDigestPageSize = 200
	// actDigestBatch is how many alerts acknowledging all reads from the store at once.
	actDigestBatch = 500
	// actDigestWorkers is how many acknowledgements acknowledging all makes at once.
	actDigestWorkers = 8
	// maxDigestPageDigits bounds the digits of a page number.
	maxDigestPageDigits = 9
)

// actDigestBudget is how long acknowledging all may start new acknowledgements: a press
// answers within it and one acknowledgement more, well within the API server's write
// timeout. The alerts not reached are counted and said; pressing again goes on (an alert
// acknowledged already is left as it is). A variable for tests.
var actDigestBudget = 20 * time.Second

// digestView is a digest as its page shows it: one page of its alerts.
type digestView struct {
	Heading, Project, Recipient, Sent string
	Total, First, Last, Page, Pages   int
	Rows                              []digestRow
	Prev, Next                        string // links to the pages around, "" for none
	Buttons                           bool   // whether it offers to acknowledge all
}

// digestRow is one entry of a digest: an alert's opening or resolution, and the alert as it
// is now (nil when it is gone).
type digestRow struct {
	Ended bool
	Alert *alertView
}

// digestRef names one alert of a digest.
type digestRef struct {
	global bool
	id     string
}

// serveDigest answers a request with verified claims c of a digest's link; form is a POST's
// body.
func (s *Server) serveDigest(w *statusRecorder, r *http.Request, c actlink.Claims, form []byte, now time.Time, address string) {
	ctx := r.Context()
	d, fail, err := s.actDigest(ctx, c)
	if err != nil {
		s.actUnavailable(w, r, err)
		return
	}
	if fail != nil {
		s.actRefused(w, r, address, *fail)
		return
	}
	// The link works: a wrong page number or field is a mistake, not a guess at a token.
	page, fail := digestPageNumber(r.URL.Query(), len(d.Entries))
	if fail != nil {
		s.actFailed(w, r, *fail)
		return
	}
	v := actView{}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		action, fail := digestAckAction(form)
		if fail != nil {
			s.actFailed(w, r, *fail)
			return
		}
		res, err := s.ackDigest(ctx, r, c, d, action, now)
		if err != nil && res.acked == 0 {
			s.actUnavailable(w, r, err)
			return
		}
		if err != nil {
			status = http.StatusServiceUnavailable
			w.Header().Set("Retry-After", unavailableRetryAfter)
		}
		res.say(&v, now.Add(action.Acknowledges()), err != nil)
	}
	if err := s.showDigest(ctx, d, page, now, &v); err != nil {
		s.actUnavailable(w, r, err)
		return
	}
	s.writeActPage(w, r, status, v)
}

// actDigest reads the digest of verified claims c: fail says why the link does not work.
func (s *Server) actDigest(ctx context.Context, c actlink.Claims) (herald.Digest, *actFailure, error) {
	gone := &actFailure{status: http.StatusNotFound, outcome: "This digest no longer exists",
		detail: "Its page is kept as long as its link works. Nothing was changed."}
	if c.Global || c.Group == "" {
		return herald.Digest{}, gone, nil
	}
	d, err := s.store.Digest(ctx, c.Group, c.Alert)
	switch {
	case herald.IsNotFound(err):
		return d, gone, nil
	case err != nil:
		return d, nil, err
	case d.GroupID != c.Group || d.ID != c.Alert:
		return d, gone, nil
	}
	return d, nil, nil
}

// digestPageNumber is the page ?page= asks for (1 without it), of a digest of entries.
func digestPageNumber(q url.Values, entries int) (int, *actFailure) {
	pages := max(1, (entries+actDigestPageSize-1)/actDigestPageSize)
	vs := q["page"]
	if len(vs) == 0 {
		return 1, nil
	}
	bad := &actFailure{status: http.StatusBadRequest, outcome: "This page number is not valid",
		detail: "Pages are numbered from 1 to " + strconv.Itoa(pages) + ". Nothing was changed."}
	if len(vs) > 1 || vs[0] == "" || strings.Trim(vs[0], "0123456789") != "" {
		return 0, bad
	}
	n, err := strconv.Atoi(vs[0])
	switch {
	case len(vs[0]) > maxDigestPageDigits || err != nil || n > pages:
		return 0, &actFailure{status: http.StatusNotFound, outcome: "This digest has no such page",
			detail: "It has " + plural(pages, "page") + ". Nothing was changed."}
	case n < 1:
		return 0, bad
	}
	return n, nil
}

// digestAckAction is the acknowledgement a digest page's POST asks for: its one field, for,
// is 1h or 4h.
func digestAckAction(form []byte) (actlink.Action, *actFailure) {
	q, err := url.ParseQuery(string(form))
	if err == nil && len(q["for"]) == 1 {
		switch q.Get("for") {
		case "1h":
			return actlink.Acknowledge1h, nil
		case "4h":
			return actlink.Acknowledge4h, nil
		}
	}
	return 0, &actFailure{status: http.StatusBadRequest, outcome: "Choose how long to acknowledge for",
		detail: "The page's buttons acknowledge for 1 hour or for 4 hours. Nothing was changed."}
}

// digestAlerts reads the alerts of entries as they are now, in two round trips at most: a
// global alert opened for another project than groupID is left out, as is one gone.
func (s *Server) digestAlerts(ctx context.Context, groupID string, entries []herald.DigestEntry) (map[digestRef]herald.Alert, error) {
	var ids, globalIDs []string
	for _, e := range entries {
		if e.Global {
			globalIDs = append(globalIDs, e.AlertID)
		} else {
			ids = append(ids, e.AlertID)
		}
	}
	found := make(map[digestRef]herald.Alert, len(entries))
	for _, read := range []struct {
		global bool
		ids    []string
	}{{false, ids}, {true, globalIDs}} {
		if len(read.ids) == 0 {
			continue
		}
		var as []herald.Alert
		var err error
		if read.global {
			as, err = s.store.GlobalAlertsByID(ctx, read.ids)
		} else {
			as, err = s.store.AlertsByID(ctx, groupID, read.ids)
		}
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if a.GroupID == groupID {
				found[digestRef{read.global, a.ID}] = a
			}
		}
	}
	return found, nil
}

// showDigest fills v with page of digest d, its alerts as they are at now.
func (s *Server) showDigest(ctx context.Context, d herald.Digest, page int, now time.Time, v *actView) error {
	first := (page - 1) * actDigestPageSize
	entries := d.Entries[min(first, len(d.Entries)):min(first+actDigestPageSize, len(d.Entries))]
	found, err := s.digestAlerts(ctx, d.GroupID, entries)
	if err != nil {
		return err
	}
	dv := &digestView{Recipient: d.Recipient, Sent: showTime(d.Created.Time) + " (" + ago(now.Sub(d.Created.Time)) + ")",
		Total: len(d.Entries), First: first + 1, Last: first + len(entries), Page: page,
		Pages: max(1, (len(d.Entries)+actDigestPageSize-1)/actDigestPageSize)}
	if d.Kind != "" {
		dv.Recipient += " by " + d.Kind
	}
	if dv.Project, err = s.projectName(ctx, d.GroupID); err != nil {
		return err
	}
	var opened, resolved int
	for _, e := range d.Entries {
		if e.Ended {
			resolved++
		} else {
			opened++
		}
	}
	var said []string
	if opened > 0 {
		said = append(said, plural(opened, "alert")+" opened")
	}
	if resolved > 0 {
		said = append(said, plural(resolved, "alert")+" resolved")
	}
	dv.Heading = strings.Join(said, ", ")
	if dv.Heading == "" {
		dv.Heading = "No alerts"
	}
	dv.Buttons = opened > 0
	for _, e := range entries {
		row := digestRow{Ended: e.Ended}
		if a, ok := found[digestRef{e.Global, e.AlertID}]; ok {
			row.Alert = newAlertView(a, now)
		}
		dv.Rows = append(dv.Rows, row)
	}
	if page > 1 {
		dv.Prev = "?page=" + strconv.Itoa(page-1)
	}
	if page < dv.Pages {
		dv.Next = "?page=" + strconv.Itoa(page+1)
	}
	v.Digest, v.Title = dv, dv.Heading
	return nil
}

// digestAck is what acknowledging all of a digest did: each of its alerts is counted once.
type digestAck struct {
	acked, kept, closed, gone int
	left                      int // not reached: out of time, or the store failed
}

// ackDigest acknowledges, as c's recipient and for action's time, every alert of digest d
// still open and not acknowledged at now. Its alerts are read actDigestBatch at a time;
// the acknowledgements are made actDigestWorkers at a time, none started after
// actDigestBudget. err: the store failed (what was done before is counted).
func (s *Server) ackDigest(ctx context.Context, r *http.Request, c actlink.Claims, d herald.Digest, action actlink.Action, now time.Time) (digestAck, error) {
	deadline := time.Now().Add(actDigestBudget)
	var res digestAck
	seen := make(map[digestRef]bool, len(d.Entries))
	var alerts []herald.DigestEntry // each alert once, in the digest's order
	for _, e := range d.Entries {
		if ref := (digestRef{e.Global, e.AlertID}); !seen[ref] {
			seen[ref] = true
			alerts = append(alerts, herald.DigestEntry{AlertID: e.AlertID, Global: e.Global})
		}
	}
	var todo []digestRef
	for i := 0; i < len(alerts); i += actDigestBatch {
		batch := alerts[i:min(i+actDigestBatch, len(alerts))]
		found, err := s.digestAlerts(ctx, d.GroupID, batch)
		if err != nil {
			return res, err
		}
		for _, e := range batch {
			ref := digestRef{e.Global, e.AlertID}
			a, ok := found[ref]
			switch {
			case !ok:
				res.gone++
			case !herald.Active(a.Status):
				res.closed++
			case a.Acknowledged(now):
				res.kept++
			default:
				todo = append(todo, ref)
			}
		}
	}
	if len(todo) == 0 {
		return res, nil
	}
	p, err := s.store.Project(ctx, d.GroupID)
	if herald.IsNotFound(err) {
		res.gone += len(todo)
		return res, nil
	}
	if err != nil {
		return res, err
	}
	var (
		mu       sync.Mutex
		next     int
		firstErr error
		wg       sync.WaitGroup
	)
	// take hands out the next alert to acknowledge; ok is false when there is none, or when
	// the time is over or the store failed (the rest is then counted as left).
	take := func() (digestRef, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next < len(todo) && (firstErr != nil || ctx.Err() != nil || time.Now().After(deadline)) {
			res.left += len(todo) - next
			next = len(todo)
		}
		if next >= len(todo) {
			return digestRef{}, false
		}
		next++
		return todo[next-1], true
	}
	for range min(actDigestWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ref, ok := take()
				if !ok {
					return
				}
				scope := p.Scope()
				if ref.global {
					scope = herald.Scope{}
				}
				var kept bool
				_, err := s.applyNoticeAckIn(ctx, scope, noticeAck{global: ref.global, group: d.GroupID, alertID: ref.id,
					until: now.Add(action.Acknowledges()), who: c.Recipient, recipient: c.Recipient, source: SourceNotice,
					action: action.String(), digest: d.ID, comment: actComment, remote: remoteAddress(r), now: now, kept: &kept})
				e := herald.ErrorOf(err)
				mu.Lock()
				switch {
				case err == nil && kept:
					res.kept++
				case err == nil:
					res.acked++
				case e != nil && e.Code == herald.CodeAlertNotActive:
					res.closed++
				case herald.IsNotFound(err):
					res.gone++
				default:
					res.left++
					if firstErr == nil {
						firstErr = err
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.log.Info("digest acknowledged", zap.String("groupId", d.GroupID), zap.String("digestId", d.ID), zap.String("by", c.Recipient),
		zap.Int("acknowledged", res.acked), zap.Int("closed", res.closed), zap.Int("alreadyAcknowledged", res.kept),
		zap.Int("gone", res.gone), zap.Int("notReached", res.left))
	return res, firstErr
}

// say tells in v what acknowledging all did; until is the acknowledgements' end, failed
// whether the store failed before the end.
func (res digestAck) say(v *actView, until time.Time, failed bool) {
	switch {
	case res.acked > 0:
		v.Outcome, v.Tone = "Acknowledged "+plural(res.acked, "alert")+" until "+showTime(until), "ok"
	case res.left > 0:
		v.Outcome = "No alert was acknowledged"
	default:
		v.Outcome = "No alert needed acknowledging"
	}
	var more []string
	if res.closed > 0 {
		more = append(more, strconv.Itoa(res.closed)+" had closed")
	}
	if res.kept > 0 {
		more = append(more, counted(res.kept, "was already acknowledged", "were already acknowledged"))
	}
	if res.gone > 0 {
		more = append(more, counted(res.gone, "no longer exists", "no longer exist"))
	}
	if len(more) > 0 {
		v.Outcome += "; " + strings.Join(more, "; ")
	}
	switch {
	case res.left > 0 && failed:
		v.Tone = "error"
		v.Details = append(v.Details, counted(res.left, "alert was", "alerts were")+" not reached: Herald cannot answer now. Press the button again in a moment.")
	case res.left > 0:
		v.Tone = "error"
		v.Details = append(v.Details, counted(res.left, "alert was", "alerts were")+" not reached in time. Press the button again to acknowledge them.")
	case res.acked > 0:
		v.Details = append(v.Details, "Their notifications stop until then, as for acknowledgements made through the API.")
	default:
		v.Details = append(v.Details, "Nothing was changed.")
	}
}

// counted is n and what is said of one, or of many.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
