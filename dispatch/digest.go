package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Digests. A target of a kind people read (an address, a number, a chat channel) takes at most
// DigestAfter messages in any DigestWindow; while it is under that, each notice goes alone, as
// any. A notice beyond that waits in the target's line (store.DigestStep), recorded PACED
// with its alert only, one record a notice (store.Attempt.Waiting: a storm's would fill the
// project's log);
// when the window allows a message again, the first waiting notice whose retry task runs
// claims every notice waiting, itself with them, and queues the digest's task: one message
// telling of them all, with the link to its page. The others' tasks find themselves claimed
// and end. Machines' kinds (webhooks, paging, alerting, metrics) are never digested.
//
// Nothing is lost: the claim is one store script; only a task that names its line may claim,
// so that its retry, should its worker die, looks there first and queues the digest's task
// again (once: its task id is the digest's). The digest's task builds the message from the
// claim each time it runs, with the same id, and is retried and dead-lettered as any
// delivery. Each notice it tells of is recorded DIGESTED with its id once its fate is known.
// Once sent, its claim goes (store.DigestDone): queued again by a claimer's retry after asynq
// let go of the finished task, it finds nothing to send.
//
// Order: a digest goes through the reach record as each of its notices would (supersede.go):
// an opening whose alert ended is left out, superseded, and then its resolution is withheld;
// a resolution waits while an opening to its target is being sent; each opening it tells of
// marks its target tried, so that a later resolution goes.

// Digest settings.
const (
	SettingDigestAfter  = "HERALD_DIGEST_AFTER"
	SettingDigestWindow = "HERALD_DIGEST_WINDOW"
	DefaultDigestAfter  = 3 // messages a target takes one by one in a window
	DefaultDigestWindow = 5 // the window, in Herald minutes (HERALD_MINUTE)
	digestAfterMax      = 1000
	digestWindowMax     = 24 * 60
)

// ParseDigestAfter reads HERALD_DIGEST_AFTER: a whole number from 0 (no digests) to 1000.
func ParseDigestAfter(text string) (int, error) {
	return wholeIn(text, 0, digestAfterMax, "0 turns digests off")
}

// ParseDigestWindow reads HERALD_DIGEST_WINDOW: a whole number of minutes (of HERALD_MINUTE's
// length) from 1 to 1440.
func ParseDigestWindow(text string) (int, error) {
	return wholeIn(text, 1, digestWindowMax, "minutes of HERALD_MINUTE's length")
}

func wholeIn(text string, lo, hi int, note string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is not a whole number from %d to %d (%s)", text, lo, hi, note)
	}
	return n, nil
}

// digested are the kinds people read: their notices to one target go out together in a storm.
// A person reached by a GROUP, ORG, USER or ADMIN notification is reached by EMAIL or SMS.
var digested = map[string]bool{"EMAIL": true, "SMS": true, "CHAT_A": true, "CHAT_B": true, "CHAT_C": true}

// digestPolicy is the engine's: off unless DigestAfter is set.
func (e *Engine) digestPolicy() store.DigestPolicy {
	return store.DigestPolicy{After: e.DigestAfter, Window: time.Duration(e.DigestWindow) * e.Minute}
}

// inDigest is a notice a digest tells of (or will): its own task sends nothing.
const inDigest outcome = -1

// inLine passes delivery r of notice n (retry: a retry task's run) through its target's digest
// line. held: the line holds it, and res, records and err are try's; otherwise it goes alone.
// A retry task's run waits in-process for a window less than paceWaitMax away.
func (e *Engine) inLine(ctx context.Context, n notice, r *recipient, retry bool) (res outcome, records []store.Attempt, err error, held bool) {
	p := e.digestPolicy()
	if p.Off() || !digested[r.kind] {
		return 0, nil, nil, false
	}
	target := targetKey(*r)
	if target == "" {
		return 0, nil, nil, false
	}
	r.line = store.DigestLine(target, n.GroupID)
	one := n
	one.UserID, one.Via, one.Line, one.DeadLetter, one.Digest = r.userID, r.via, r.line, "", ""
	// Only a task that names the line claims: should its worker die, its retry finds the claim.
	claim := retry && n.Line == r.line
	for {
		now := e.Clock.Now()
		turn, err := e.store.DigestStep(ctx, r.line, r.delivery.ID, string(one.encode()), p, claim, actlink.MaxAge, now)
		if err != nil {
			return retryLater, nil, storeFailed(err), true
		}
		switch turn.Verdict {
		case store.DigestAlone:
			if turn.Stopped {
				e.logLine("a target is no longer digested: its notices go one by one again", n, r)
			}
			return 0, nil, nil, false
		case store.DigestClaim, store.DigestClaimed:
			if turn.Digest == store.DigestID(r.delivery.ID) { // this delivery claimed it
				if err := e.queueDigest(ctx, one, r.kind, turn.Digest); err != nil {
					return retryLater, nil, storeFailed(err), true
				}
			}
			return inDigest, nil, nil, true
		}
		if turn.Started {
			e.logLine("a target is being digested: its notices wait to go out together", n, r)
		}
		wait := max(turn.Until.Sub(now), 0)
		if !claim || wait > paceWaitMax {
			rec := store.Attempt{At: herald.At(now), AlertID: n.AlertID, Global: n.Global, DeliveryID: r.delivery.ID, Kind: r.kind, Via: r.via,
				Outcome: store.OutcomePaced, Reason: "waiting to go out in a digest with its target's other notices, from " + turn.Until.UTC().Format(time.RFC3339Nano),
				Waiting: true}
			return paced, []store.Attempt{rec}, &pacedError{wait: wait}, true
		}
		timer := time.NewTimer(wait + paceSlack)
		select {
		case <-ctx.Done():
			timer.Stop()
			return retryLater, nil, ctx.Err(), true
		case <-e.stopping:
			timer.Stop()
			return paced, nil, &pacedError{wait: wait}, true
		case <-timer.C:
		}
	}
}

// logLine logs a change of r's target's digest mode, naming the target by its hash only.
func (e *Engine) logLine(msg string, n notice, r *recipient) {
	e.Log.Info(msg, zap.String("groupId", n.GroupID), zap.String("typeName", r.kind), zap.String("target", store.DigestLineTag(r.line)))
}

// queueDigest queues the task of digest id, claimed by notice one (of kind's queue): once.
func (e *Engine) queueDigest(ctx context.Context, one notice, kind, id string) error {
	d := one
	d.DeliveryID, d.Digest, d.DeadLetter = id, id, ""
	return e.dispatcher.enqueueDelivery(ctx, d, kind, e.DeliveryRetries, time.Now(), "digest:"+id)
}

// leaveLine takes notice n, superseded, out of its line, unless a digest claimed it first
// (held: the digest tells of it or leaves it out, and records which). Its claimer's retry
// queues the digest's task again.
func (e *Engine) leaveLine(ctx context.Context, n notice) (held bool, err error) {
	id := n.personalID()
	d, err := e.store.DigestWithdraw(ctx, n.Line, id)
	if err != nil || d == "" {
		return false, err
	}
	if d == store.DigestID(id) {
		return true, e.queueDigest(ctx, n, store.DigestLineKind(n.Line), d)
	}
	return true, nil
}

// digestEntry is one notice a digest's claim holds, as it is now.
type digestEntry struct {
	n       notice
	alert   herald.Alert
	rule    *herald.AlertRule
	rank    herald.Time // its configuration's creation: the configurations' order
	why     string      // superseded: why it is left out
	began   store.Try   // an opening's reach record, once begun
	opening bool
}

func (d *digestEntry) target() string {
	return reachTarget(d.n, recipient{userID: d.n.UserID, via: d.n.Via})
}

// digestTask sends digest n.Digest: every notice its claim holds that still holds, as one
// message (one notice alone as itself), to the target of the notice that claimed them.
func (e *Engine) digestTask(ctx context.Context, n notice) error {
	claim, err := e.store.DigestClaim(ctx, n.Line, n.Digest)
	if err != nil {
		return storeFailed(err)
	}
	if len(claim) == 0 {
		e.Log.Info("a digest's claim is gone (it was sent, or its time is over): nothing to send", zap.String("groupId", n.GroupID), zap.String("digest", n.Digest))
		return nil
	}
	nc, err := e.loadNoticeContext(ctx, n)
	if herald.IsNotFound(err) {
		return nil // the project is gone
	}
	if err != nil {
		return storeFailed(err)
	}
	entries, err := e.digestEntries(ctx, claim, nc)
	if err != nil {
		return storeFailed(err)
	}
	if err := e.abandonDigestTries(ctx, n, entries); err != nil {
		return storeFailed(err)
	}
	now := e.Clock.Now()
	// Resolutions first: one whose opening is being sent waits, before anything is begun.
	closing := pick(entries, func(d *digestEntry) bool { return d.why == "" && !d.opening })
	vs, _, err := e.store.BeginCloses(ctx, reaches(closing), now)
	if err != nil {
		return storeFailed(err)
	}
	if slices.Contains(vs, store.CloseWait) {
		return errWaitingForOpening
	}
	for i, v := range vs {
		if v == store.CloseNeverOpened {
			closing[i].why = herald.SupersededNeverOpened
		}
	}
	head := slices.IndexFunc(entries, func(d digestEntry) bool { return d.why == "" })
	if head < 0 {
		return e.digestDone(ctx, n, e.digestRecords(n, entries, "", ""))
	}
	r, err := e.digestRecipient(entries[head], nc, n.Digest)
	if err != nil {
		return storeFailed(err)
	}
	if ok, wait, rec, err := e.pace(ctx, n, &r, true); !ok {
		if err != nil {
			return err
		}
		if rerr := e.recordAttempts(ctx, n.GroupID, []tried{{n, rec}}); rerr != nil {
			return storeFailed(rerr)
		}
		return &pacedError{wait: wait}
	}
	// Openings: each marks its target tried, or is left out when its alert ended.
	opening := pick(entries, func(d *digestEntry) bool { return d.why == "" && d.opening })
	began, errs, err := e.store.BeginNotices(ctx, reaches(opening), n.Digest, now.Add(sendingMax))
	for i, d := range opening {
		d.began = began[i]
		if errs[i] == nil && !d.began.OK {
			d.why = herald.SupersededClosed
		}
	}
	if err != nil {
		e.endDigestTries(ctx, n, entries, false)
		e.paceTried(ctx, &r, nil)
		return storeFailed(err)
	}
	told := pick(entries, func(d *digestEntry) bool { return d.why == "" })
	recN := n // the notice the message's own attempts are recorded under
	switch {
	case len(told) == 0:
		e.paceTried(ctx, &r, nil)
		return e.digestDone(ctx, n, e.digestRecords(n, entries, "", ""))
	case len(told) == 1: // a digest of one notice is that notice
		one, err := e.digestRecipient(*told[0], nc, n.Digest)
		if err != nil {
			e.endDigestTries(ctx, n, entries, false)
			e.paceTried(ctx, &r, nil)
			return storeFailed(err)
		}
		one.pace, r, recN = r.pace, one, told[0].n
	default:
		if err := e.digestMessage(ctx, n, &r, told, now); err != nil {
			e.endDigestTries(ctx, n, entries, false)
			e.paceTried(ctx, &r, nil)
			return storeFailed(err)
		}
	}
	res, records, err := e.attempt(ctx, recN, &r)
	e.paceTried(ctx, &r, err)
	e.endDigestTries(ctx, n, entries, mayHaveReached(res, err))
	last, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	final := res == givenUp || (res == retryLater && last >= maxRetry-storeSpare)
	if final {
		markDeadLetter(records)
	}
	ts := appendTried(nil, recN, records)
	if res == delivered || res == rejected || final { // the digest's fate is known: so is each notice's
		digestID := ""
		if len(told) > 1 {
			digestID = n.Digest
		}
		ts = append(ts, e.digestRecords(n, entries, digestID, r.kind)...)
	}
	if rerr := e.recordAttempts(ctx, n.GroupID, ts); rerr != nil {
		return storeFailed(rerr)
	}
	switch {
	case res == delivered:
		notified := map[store.Scope]map[string]time.Time{}
		for _, d := range told {
			if notified[d.n.scope()] == nil {
				notified[d.n.scope()] = map[string]time.Time{}
			}
			notified[d.n.scope()][d.n.AlertID] = e.Clock.Now()
		}
		for sc, at := range notified {
			if err := e.store.MarkNotified(ctx, sc, at); err != nil {
				return storeFailed(err)
			}
		}
		return storeFailed(e.store.DigestDone(ctx, n.Line, n.Digest))
	case res == rejected:
		if err := e.refused(ctx, recN, r, nc.project); err != nil {
			return storeFailed(err)
		}
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	case final:
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	if wait, inLine := lineWait(&r, res, err); inLine {
		return &pacedError{wait: wait, failure: err}
	}
	return err
}

// digestDone records ts, what became of a digest's notices, and drops its claim: the digest's
// task, queued again, sends nothing.
func (e *Engine) digestDone(ctx context.Context, n notice, ts []tried) error {
	if err := e.recordAttempts(ctx, n.GroupID, ts); err != nil {
		return storeFailed(err)
	}
	return storeFailed(e.store.DigestDone(ctx, n.Line, n.Digest))
}

// digestEntries are the notices of claim, as they are now, the most important first: by their
// configurations' order, then their alerts' age. One that no longer holds says why.
func (e *Engine) digestEntries(ctx context.Context, claim map[string]string, nc noticeContext) ([]digestEntry, error) {
	type rule struct {
		rule *herald.AlertRule
		rank herald.Time
	}
	rules := map[string]rule{}
	ruleOf := func(m notice) (rule, error) {
		k := strconv.FormatBool(m.Global) + m.ConfigID
		if r, ok := rules[k]; ok {
			return r, nil
		}
		var r rule
		var err error
		if m.Global {
			var c herald.GlobalAlertConfig
			if c, err = e.store.GlobalAlertConfig(ctx, m.ConfigID); err == nil {
				r = rule{&c.AlertRule, c.Created}
			}
		} else {
			var c herald.AlertConfig
			if c, err = e.store.AlertConfig(ctx, m.GroupID, m.ConfigID); err == nil {
				r = rule{&c.AlertRule, c.Created}
			}
		}
		if err != nil && !herald.IsNotFound(err) {
			return r, err
		}
		rules[k] = r
		return r, nil
	}
	out := make([]digestEntry, 0, len(claim))
	for _, raw := range claim {
		var m notice
		if err := decodeJSON([]byte(raw), &m); err != nil || m.AlertID == "" {
			continue // not a notice: nothing to tell
		}
		ru, err := ruleOf(m)
		if err != nil {
			return nil, err
		}
		out = append(out, digestEntry{n: m, opening: !m.about().Closing, rule: ru.rule, rank: ru.rank})
	}
	found, err := e.digestAlerts(ctx, out)
	if err != nil {
		return nil, err
	}
	now := e.Clock.Now()
	for i := range out {
		d := &out[i]
		a, ok := found[alertKey{d.n.Global, d.n.AlertID}]
		if !ok {
			d.why = herald.SupersededAlertGone
			continue
		}
		d.alert = a
		d.why = d.n.about().Superseded(a, d.rule, silencedBy(nc.windows, a, now), now)
	}
	slices.SortFunc(out, func(a, b digestEntry) int {
		return cmp.Or(a.rank.Compare(b.rank.Time), a.alert.Created.Compare(b.alert.Created.Time), strings.Compare(a.n.personalID(), b.n.personalID()))
	})
	return out, nil
}

type alertKey struct {
	global bool
	id     string
}

// digestAlertsRead is how many alerts one read of a digest's takes.
const digestAlertsRead = 500

// digestAlerts reads the alerts of entries that exist, a few hundred a round trip.
func (e *Engine) digestAlerts(ctx context.Context, entries []digestEntry) (map[alertKey]herald.Alert, error) {
	ids := map[bool][]string{}
	for _, d := range entries {
		ids[d.n.Global] = append(ids[d.n.Global], d.n.AlertID)
	}
	found := make(map[alertKey]herald.Alert, len(entries))
	for global, list := range ids {
		slices.Sort(list)
		list = slices.Compact(list)
		for chunk := range slices.Chunk(list, digestAlertsRead) {
			var as []herald.Alert
			var err error
			if global {
				as, err = e.store.GlobalAlertsByID(ctx, chunk)
			} else {
				as, err = e.store.AlertsByID(ctx, entries[0].n.GroupID, chunk)
			}
			if err != nil {
				return nil, err
			}
			for _, a := range as {
				found[alertKey{global, a.ID}] = a
			}
		}
	}
	return found, nil
}

// digestRecipient is the delivery of entry d to its target, under the digest's id: the
// target's address or channel as d's notification names it now.
func (e *Engine) digestRecipient(d digestEntry, nc noticeContext, id string) (recipient, error) {
	nc.alert, nc.rule = d.alert, d.rule
	rs, err := e.recipients(d.n, nc)
	if err != nil {
		return recipient{}, err
	}
	r := rs[0]
	r.delivery.ID = id
	return r, nil
}

// digestMessage makes r's delivery the digest of told, kept (store.SaveDigest) for its page.
func (e *Engine) digestMessage(ctx context.Context, n notice, r *recipient, told []*digestEntry, now time.Time) error {
	g := &channels.Digest{}
	rec := herald.Digest{ID: n.Digest, GroupID: n.GroupID, Kind: r.kind, Recipient: r.actor, Created: herald.At(now)}
	for _, d := range told {
		rec.Entries = append(rec.Entries, herald.DigestEntry{AlertID: d.n.AlertID, Global: d.n.Global, Ended: !d.opening})
		if d.opening {
			g.Opened = append(g.Opened, d.alert)
		} else {
			g.Closed = append(g.Closed, d.alert)
		}
	}
	if err := e.store.SaveDigest(ctx, rec, actlink.MaxAge); err != nil {
		return err
	}
	g.Link = e.Linker.DigestLink(rec, now)
	r.delivery.Event = channels.EventOpen
	if len(g.Opened) == 0 {
		r.delivery.Event = channels.EventClose
	}
	r.delivery.Alert, r.delivery.Links, r.delivery.Digest = told[0].alert, herald.ActionLinks{}, g
	return nil
}

// abandonDigestTries ends the tries of the digest's openings left out, which a run of it
// whose worker died may have begun: their resolutions need not wait for the marks to lapse.
func (e *Engine) abandonDigestTries(ctx context.Context, n notice, entries []digestEntry) error {
	left := pick(entries, func(d *digestEntry) bool { return d.opening && d.why != "" })
	return e.store.AbandonNotices(ctx, reaches(left), n.Digest)
}

// endDigestTries ends the tries of the digest's openings at their targets (EndNotice).
func (e *Engine) endDigestTries(ctx context.Context, n notice, entries []digestEntry, reached bool) {
	begun := pick(entries, func(d *digestEntry) bool { return d.opening && d.began.OK })
	if len(begun) == 0 {
		return
	}
	tries, told := make([]store.Try, len(begun)), make([]bool, len(begun))
	for i, d := range begun {
		tries[i], told[i] = d.began, reached && d.why == ""
	}
	if failed, err := e.store.EndNotices(context.WithoutCancel(ctx), reaches(begun), n.Digest, tries, told); err != nil {
		e.Observer.EngineError(ErrNoticeEnd, failed)
		e.Log.Warn("recording how a digest went", zap.String("digest", n.Digest), zap.Int("failed", failed), zap.Error(err))
	}
}

// pick is the entries that keep says to.
func pick(entries []digestEntry, keep func(*digestEntry) bool) []*digestEntry {
	var out []*digestEntry
	for i := range entries {
		if keep(&entries[i]) {
			out = append(out, &entries[i])
		}
	}
	return out
}

// reaches names the targets of entries in their alerts' reach records.
func reaches(entries []*digestEntry) []store.Reach {
	out := make([]store.Reach, len(entries))
	for i, d := range entries {
		out[i] = store.Reach{Scope: d.n.scope(), AlertID: d.n.AlertID, Target: d.target()}
	}
	return out
}

// digestRecords record what became of each notice of a digest: DIGESTED with the digest's id
// (digestID "": none was sent, or it was one notice sent as itself), else superseded, why.
func (e *Engine) digestRecords(n notice, entries []digestEntry, digestID, kind string) []tried {
	var out []tried
	for _, d := range entries {
		k := cmp.Or(kind, store.DigestLineKind(n.Line))
		switch {
		case d.why != "":
			out = append(out, tried{d.n, e.superseded(d.n, d.n.personalID(), k, d.n.Via, d.why)})
		case digestID != "":
			e.Observer.Digested(k)
			out = append(out, tried{d.n, store.Attempt{At: herald.At(e.Clock.Now()), AlertID: d.n.AlertID, Global: d.n.Global,
				DeliveryID: d.n.personalID(), Kind: k, Via: d.n.Via, Outcome: store.OutcomeDigested, DigestID: digestID,
				Reason: store.DigestedReason(digestID)}})
		}
	}
	return out
}

// errNotDigest: a task named as a digest's is not one.
var errNotDigest = errors.New("dispatch: a digest task without its line")
