package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// notice is one delivery a step decided on, as the outbox and retry tasks carry it: ids, no
// secrets.
type notice = deliveryTask

// newNotice is notification idx of alert a's notice of kind ev. Its id is the same however
// often the notice is tried: the alert, the notification and which notice of it this is.
func newNotice(sc store.Scope, a herald.Alert, idx int, ev channels.Event, seq int) notice {
	id := fmt.Sprintf("%s-%d-%d", a.ID, idx, seq)
	if ev == channels.EventClose {
		id = fmt.Sprintf("%s-%d-close", a.ID, idx)
	}
	return notice{GroupID: sc.GroupID, Global: sc.Global, AlertID: a.ID, ConfigID: a.AlertConfigID,
		Notification: idx, Event: string(ev), DeliveryID: id}
}

func (n notice) scope() store.Scope { return store.Scope{GroupID: n.GroupID, Global: n.Global} }

func (n notice) encode() []byte {
	b, _ := json.Marshal(n) // plain struct: cannot fail
	return b
}

// stepNotices are the notices of a step, encoded for the outbox.
func stepNotices(sc store.Scope, st herald.Step) [][]byte {
	var out [][]byte
	for _, i := range st.Notify {
		ev := channels.EventUpdate
		if st.Schedule.Sent[i] == 1 {
			ev = channels.EventOpen
		}
		out = append(out, newNotice(sc, st.Alert, i, ev, st.Schedule.Sent[i]).encode())
	}
	for _, i := range st.Resolve {
		out = append(out, newNotice(sc, st.Alert, i, channels.EventClose, 0).encode())
	}
	return out
}

// integrationKind is the integration type that supplies defaults to a notification kind.
func integrationKind(typeName string) string {
	if typeName == "CHATA" {
		return "CHAT_A"
	}
	return typeName
}

// outcome of sending one notice.
type outcome int

const (
	delivered outcome = iota
	retryLater
	givenUp
)

// send delivers one notice of alert a under rule, with the project's integrations.
func (e *Engine) send(ctx context.Context, n notice, a herald.Alert, rule herald.AlertRule, integ map[string]*herald.Integration) (outcome, error) {
	if n.Notification >= len(rule.Notifications) {
		return givenUp, fmt.Errorf("the configuration no longer has notification %d", n.Notification)
	}
	nt := rule.Notifications[n.Notification]
	notifier, ok := e.Notifiers[nt.TypeName]
	if !ok {
		return givenUp, fmt.Errorf("no sender for %s notifications yet", nt.TypeName)
	}
	err := notifier.Notify(ctx, channels.Delivery{ID: n.DeliveryID, Event: channels.Event(n.Event), Alert: a,
		Notification: nt, Integration: integ[integrationKind(nt.TypeName)]})
	if err == nil {
		return delivered, nil
	}
	var f *channels.Failure
	if errors.As(err, &f) && f.Retry {
		return retryLater, err
	}
	if !errors.As(err, &f) && ctx.Err() == nil {
		return retryLater, err // not classified: assume transient
	}
	return givenUp, err
}

// sent is what became of a group of notices: who was notified when, and what to retry.
type sent struct {
	group    sendGroup
	notified map[string]time.Time
	retry    []notice
}

// deliver sends a committed step's notices concurrently.
func (s *session) deliver(ctx context.Context, g sendGroup) sent {
	var (
		mu        sync.Mutex
		wg        sync.WaitGroup
		out       = sent{group: g, notified: map[string]time.Time{}}
		sem       = make(chan struct{}, deliverParallel)
		decodeErr error
	)
	for _, raw := range g.notices {
		var n notice
		if err := json.Unmarshal(raw, &n); err != nil {
			decodeErr = err
			continue
		}
		a, rule := g.alerts[n.AlertID], s.configs[n.ConfigID]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res, err := s.e.send(ctx, n, a, rule, s.integ)
			mu.Lock()
			defer mu.Unlock()
			switch res {
			case delivered:
				out.notified[n.AlertID] = s.e.Clock.Now()
			case retryLater:
				out.retry = append(out.retry, n)
			case givenUp:
				s.e.Log.Warn("delivery not possible", zap.String("alertId", n.AlertID), zap.String("delivery", n.DeliveryID), zap.Error(err))
			}
		}()
	}
	wg.Wait()
	if decodeErr != nil {
		s.e.Log.Error("undecodable notice in the outbox", zap.Error(decodeErr))
	}
	return out
}

// settle records what deliver did: lastNotified of the alerts notified, retry tasks for what
// failed for now, and the group's notices out of the outbox.
func (s *session) settle(ctx context.Context, r sent) error {
	sc := r.group.sc
	if err := s.e.store.MarkNotified(ctx, sc, r.notified, r.group.alerts); err != nil {
		return err
	}
	for _, n := range r.retry {
		if err := s.e.dispatcher.retry(ctx, n); err != nil {
			return err // the outbox keeps every notice: they come back after the lease
		}
	}
	return s.e.store.DoneOutbox(ctx, sc, r.group.notices...)
}

// retry queues a delivery for the delivery workers, once per delivery id.
func (d *Dispatcher) retry(ctx context.Context, n notice) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeDelivery, n), asynq.Queue(QueueDeliveries),
		asynq.TaskID("delivery:"+n.DeliveryID), asynq.MaxRetry(12), asynq.ProcessIn(time.Second))
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// recoverOutbox hands the notices of engines that died before sending them to retry tasks.
func (s *session) recoverOutbox(ctx context.Context) error {
	for _, sc := range s.scopes() {
		abandoned, err := s.e.store.ClaimOutbox(ctx, sc, s.e.Clock.Now(), s.e.Lease, claimBatch)
		if err != nil || len(abandoned) == 0 {
			if err != nil {
				return err
			}
			continue
		}
		for _, raw := range abandoned {
			var n notice
			if err := json.Unmarshal(raw, &n); err != nil {
				s.e.Log.Error("undecodable notice in the outbox", zap.Error(err))
				continue
			}
			if err := s.e.dispatcher.retry(ctx, n); err != nil {
				return err
			}
		}
		s.e.Log.Info("recovered notices an engine left behind", zap.String("groupId", sc.GroupID), zap.Int("notices", len(abandoned)))
		if err := s.e.store.DoneOutbox(ctx, sc, abandoned...); err != nil {
			return err
		}
	}
	return nil
}

// deliverTask is a retry of one delivery, run by a delivery worker.
func (e *Engine) deliverTask(ctx context.Context, t *asynq.Task) error {
	var n notice
	if err := json.Unmarshal(t.Payload(), &n); err != nil {
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	sc := n.scope()
	var (
		a    herald.Alert
		rule herald.AlertRule
		err  error
	)
	if n.Global {
		a, err = e.store.GlobalAlert(ctx, n.AlertID)
		if err == nil {
			var c herald.GlobalAlertConfig
			c, err = e.store.GlobalAlertConfig(ctx, n.ConfigID)
			rule = c.AlertRule
		}
	} else {
		a, err = e.store.Alert(ctx, n.GroupID, n.AlertID)
		if err == nil {
			var c herald.AlertConfig
			c, err = e.store.AlertConfig(ctx, n.GroupID, n.ConfigID)
			rule = c.AlertRule
		}
	}
	if herald.IsNotFound(err) {
		e.Log.Info("delivery dropped: its alert or configuration is gone", zap.String("delivery", n.DeliveryID))
		return nil
	}
	if err != nil {
		return err
	}
	integrations, err := e.store.Integrations(ctx, n.GroupID)
	if err != nil {
		return err
	}
	integ := map[string]*herald.Integration{}
	for i := range integrations {
		integ[integrations[i].Type] = &integrations[i]
	}
	res, err := e.send(ctx, n, a, rule, integ)
	switch res {
	case delivered:
		return e.store.MarkNotified(ctx, sc, map[string]time.Time{a.ID: e.Clock.Now()}, nil)
	case retryLater:
		return err
	default:
		e.Log.Warn("delivery not possible", zap.String("delivery", n.DeliveryID), zap.Error(err))
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
}

// retryDelay honours a target's Retry-After, and otherwise backs off exponentially.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	var f *channels.Failure
	if errors.As(err, &f) && f.RetryAfter > 0 {
		return f.RetryAfter
	}
	if errors.Is(err, errBusy) || strings.HasPrefix(t.Type(), "herald:") && t.Type() != TypeDelivery {
		return 100 * time.Millisecond * time.Duration(min(n+1, 20))
	}
	return min(time.Second<<min(n, 10), 10*time.Minute)
}
