package dispatch

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Every try of a notice (the first, each retry, a replayed dead letter) re-checks it against
// the present (herald.NoticeAbout.Superseded), and goes through the alert's reach record
// (store.BeginNotice, BeginClose). An opening or repeat marks its target tried before it is
// sent, and is refused once the alert ended. A resolution goes only to a target marked tried,
// waits while a retry there is under way, and is withheld where nothing was tried. So no
// target sees a resolution without its opening, and a PAGING incident opened at the service
// is always resolved. A target with no record got nothing: every path that ends an opening
// unsent (superseded, its sender dead before trying it) fails safe without writing.

// sendingMax bounds how long a try of an opening may be under way (its quick retries
// included): a resolution waits for it no longer, should its sender have died (and waits less
// when the try's task runs again first and finds the notice superseded: abandonTries).
const sendingMax = 2 * time.Minute

// errWaitingForOpening: a resolution waits while an opening to its target is being sent.
var errWaitingForOpening = errors.New("waiting for the alert's opening to this target to be sent first")

// about is what notice n was about.
func (n notice) about() herald.NoticeAbout {
	return herald.NoticeAbout{Closing: n.Event == string(channels.EventClose), Notification: n.Notification, Fingerprint: n.Fingerprint}
}

// reachTarget names the target of one delivery of a notice among its alert's targets: the
// notification, or one person's means of it.
func reachTarget(n notice, r recipient) string {
	t := strconv.Itoa(n.Notification)
	if r.userID != "" {
		t += ":" + r.userID + ":" + r.via
	}
	return t
}

// superseded is the record of a notice (or one delivery of it) not sent, and why.
func (e *Engine) superseded(n notice, deliveryID, kind, via, why string) store.Attempt {
	e.Observer.Delivery(kind, store.OutcomeSuperseded, 0)
	return store.Attempt{At: herald.At(e.Clock.Now()), AlertID: n.AlertID, Global: n.Global, DeliveryID: deliveryID,
		Kind: kind, Via: via, Outcome: store.OutcomeSuperseded, Reason: why}
}

// noticeKind is the kind a notice of rule is recorded under before it is resolved to people.
func noticeKind(n notice, rule *herald.AlertRule) string {
	if rule != nil && n.Notification >= 0 && n.Notification < len(rule.Notifications) {
		return rule.Notifications[n.Notification].TypeName
	}
	return ""
}

// try is one try of delivery r of notice n (retry: by a retry task, not the session that
// decided it), in its place in the order of its alert's notices to that target: a resolution
// may wait (retryLater with errWaitingForOpening) or be superseded; a retried opening or
// repeat is superseded once its alert ended. A session's own try follows its commit, so its
// alert is open: it only marks its target (store.MarkTried).
func (e *Engine) try(ctx context.Context, n notice, r *recipient, retry bool) (outcome, []store.Attempt, error) {
	sc, target := n.scope(), reachTarget(n, *r)
	if n.about().Closing {
		v, err := e.store.BeginClose(ctx, sc, n.AlertID, target, e.Clock.Now())
		switch {
		case err != nil:
			return retryLater, nil, storeFailed(err)
		case v == store.CloseWait:
			return retryLater, nil, errWaitingForOpening
		case v == store.CloseNeverOpened:
			return superseded, []store.Attempt{e.superseded(n, r.delivery.ID, r.kind, r.via, herald.SupersededNeverOpened)}, nil
		}
		if res, records, err, held := e.inLine(ctx, n, r, retry); held {
			return res, records, err
		}
		if ok, wait, rec, err := e.pace(ctx, n, r, retry); !ok {
			return pacedOutcome(wait, rec, err)
		}
		res, records, err := e.attempt(ctx, n, r)
		e.paceTried(ctx, r, err)
		return res, records, err
	}
	// Digested and paced before its target is marked tried: a waiting opening has reached
	// nothing there (a digest marks it tried when it tells of it: digest.go).
	if res, records, err, held := e.inLine(ctx, n, r, retry); held {
		return res, records, err
	}
	if ok, wait, rec, err := e.pace(ctx, n, r, retry); !ok {
		return pacedOutcome(wait, rec, err)
	}
	var began store.Try
	var err error
	if retry {
		began, err = e.store.BeginNotice(ctx, sc, n.AlertID, target, r.delivery.ID, e.Clock.Now().Add(sendingMax))
	} else {
		began, err = e.store.MarkTried(ctx, sc, n.AlertID, target)
	}
	if err != nil {
		return retryLater, nil, storeFailed(err)
	}
	if !began.OK {
		return superseded, []store.Attempt{e.superseded(n, r.delivery.ID, r.kind, r.via, herald.SupersededClosed)}, nil
	}
	res, records, err := e.attempt(ctx, n, r)
	e.paceTried(ctx, r, err)
	if reached := mayHaveReached(res, err); retry || !reached {
		if endErr := e.store.EndNotice(context.WithoutCancel(ctx), sc, n.AlertID, target, r.delivery.ID, began, reached); endErr != nil {
			// The target stays marked tried: its resolution goes (a retry's waits for its mark
			// to lapse, sendingMax).
			e.Observer.EngineError(ErrNoticeEnd, 1)
			e.Log.Warn("recording how a notice went", zap.String("delivery", r.delivery.ID), zap.Error(endErr))
		}
	}
	return res, records, err
}

// abandonTries ends the tries of notice n (an opening or repeat, now superseded) that an
// earlier run of its retry task began and never ended: that run's worker died under it (the
// task came back to this one, through the worker's reclaimer or asynq's recoverer, only once
// its lease ran out). Its resolution then waits for it no longer, rather than until the
// tries' marks lapse (sendingMax). A try may have reached its target, as when its mark
// lapses. A resolution, or a notice whose notification is gone, has nothing to end.
func (e *Engine) abandonTries(ctx context.Context, n notice, nc noticeContext) error {
	if n.about().Closing {
		return nil
	}
	rs, err := e.recipients(n, nc)
	if errors.Is(err, errNotificationGone) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, r := range rs {
		if _, err := e.store.AbandonNotice(ctx, n.scope(), n.AlertID, reachTarget(n, r), r.delivery.ID); err != nil {
			return err
		}
	}
	return nil
}

// mayHaveReached says whether a try may have reached its target: it did, or no answer came (a
// target that hangs may have acted on it). A target that answered with a failure did not.
func mayHaveReached(res outcome, err error) bool {
	if res == delivered {
		return true
	}
	var f *channels.Failure
	if errors.As(err, &f) {
		return f.Status == 0 && res == retryLater
	}
	return res == retryLater
}
