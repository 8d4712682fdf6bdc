package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/sethvargo/go-retry"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// The delivery stage, shared by every kind: a notice becomes one delivery per recipient (a
// GROUP, ORG, USER or ADMIN notification reaches each of its people by email and/or SMS);
// each is tried a few times at once (go-retry, jittered, bounded to seconds), then handed to a
// retry task of its kind's queue (asynq's backoff, honouring Retry-After) until it is archived
// as a dead letter. Every attempt is recorded. A service that refuses a credential gets no
// retry: the credential is removed where it was configured, an event says so, and the
// project's owners are emailed.

// Mailer sends a message that is not about an alert: the owners' notice of a removed credential.
type Mailer interface {
	Message(ctx context.Context, to, subject, body, messageID string) error
}

// Quick retries: a few tries within seconds, before a failure costs a task.
const (
	quickTries         = 3
	quickFirstWait     = 200 * time.Millisecond
	quickBound         = 3 * time.Second
	quickRetryAfterMax = 2 * time.Second // a longer Retry-After is waited out by a retry task
	deliverPerKind     = 32              // deliveries of one kind in flight at once
)

// outcome of trying one delivery.
type outcome int

const (
	delivered outcome = iota
	retryLater
	rejected
	givenUp    // failed for good: a dead letter
	superseded // not sent: no longer so (recorded with why)
	paced      // not tried yet: its target's slot is later (pace.go)
)

// recipient is one delivery of a notice: the sender kind and what it is given.
type recipient struct {
	kind     string // a notification typeName, or EMAIL/SMS for a person
	via      string // EMAIL or SMS when the notice fans out to people
	userID   string
	delivery channels.Delivery
	// nobody, when set, is why a notice that fans out reached nobody: this recipient stands
	// for no one, and its delivery fails for good at once (attempt), so that the notice ends a
	// dead letter saying why rather than with no record at all.
	nobody string
	// pace is the bucket of the delivery's target, once pace took its slot there ("": none).
	pace string
	// actor is whom its action links are made for (a person's username or address, a kind's
	// Actor field); line, its target's digest line once it went through it (digest.go).
	actor, line string
}

// notified is what a notice's delivery needs besides the notice.
type noticeContext struct {
	alert   herald.Alert
	rule    *herald.AlertRule // nil: the configuration is gone
	project herald.Project
	org     string // the project's organization's name
	integ   map[string]*herald.Integration
	people  func() ([]herald.User, error) // the project's users, read when a notice fans out
	windows []herald.MaintenanceWindow    // the project's maintenance windows (read for a retry only)
}

// errNotificationGone: the configuration no longer has the notification a notice is for.
var errNotificationGone = errors.New("the configuration no longer has this notification")

// recipients are the deliveries of notice n, as the registry says its kind reaches: its one
// target, or each of its people by the means the notification names. A retry of one person's
// delivery (n.UserID set) has that one only. A notice that reaches nobody (no one it names
// has an address for its means; the person of a retry is no longer one it reaches) has one
// recipient that stands for nobody, its delivery a dead letter saying why.
func (e *Engine) recipients(n notice, nc noticeContext) ([]recipient, error) {
	if nc.rule == nil || n.Notification >= len(nc.rule.Notifications) {
		return nil, errNotificationGone
	}
	nt := nc.rule.Notifications[n.Notification]
	kind, ok := herald.LookupKind(nt.TypeName)
	if !ok {
		return nil, fmt.Errorf("no kind of delivery is called %s", nt.TypeName)
	}
	base := channels.Delivery{ID: n.DeliveryID, Event: channels.Event(n.Event), Alert: nc.alert,
		Notification: nt, Integration: nc.integ[kind.IntegrationName()], Project: nc.project.Name, Org: nc.org, Global: n.Global}
	links := func(recipient string) herald.ActionLinks {
		if !kind.Links || e.Linker == nil {
			return herald.ActionLinks{}
		}
		ended := base.Event == channels.EventClose || base.Event == channels.EventCancel
		return e.Linker.Links(nc.alert, n.Global, ended, recipient, e.Clock.Now())
	}
	if kind.People == nil {
		who := actor(kind, base)
		base.Links = links(who)
		return []recipient{{kind: kind.Name, delivery: base, actor: who}}, nil
	}
	reaches := func(u herald.User) bool { return kind.People.Reaches(nt, u, nc.project) }
	people := nc.people
	if kind.People.Administrators && len(e.Administrators) > 0 {
		admins := herald.Administrators(e.Administrators)
		people = func() ([]herald.User, error) { return admins, nil }
		reaches = func(herald.User) bool { return true }
	}
	candidates, err := people()
	if err != nil {
		return nil, err
	}
	email, sms := nt.Means()
	var out []recipient
	for _, u := range candidates {
		if (n.UserID != "" && u.ID != n.UserID) || !reaches(u) {
			continue
		}
		for _, via := range []struct {
			kind, to string
			on       bool
		}{{"EMAIL", u.EmailAddress, email && kind.People.Email}, {"SMS", u.MobileNumber, sms && kind.People.SMS}} {
			if !via.on || via.to == "" || (n.Via != "" && n.Via != via.kind) {
				continue
			}
			d := base
			d.ID, d.To = personalID(n.DeliveryID, u.ID, via.kind), via.to
			who := cmp.Or(u.Username, via.to)
			d.Links = links(who)
			out = append(out, recipient{kind: via.kind, via: via.kind, userID: u.ID, delivery: d, actor: who})
		}
	}
	if len(out) == 0 && n.UserID != "" {
		base.ID = personalID(n.DeliveryID, n.UserID, n.Via)
		return []recipient{{kind: n.Via, via: n.Via, userID: n.UserID, delivery: base, nobody: herald.NobodyPersonGone}}, nil
	}
	if len(out) == 0 {
		return []recipient{{kind: kind.Name, delivery: base, nobody: nt.NobodyReached()}}, nil
	}
	return out, nil
}

// actor is whom the action links of d are made for: the value of the kind's Actor field
// (the notification's, else its integration's), else the kind's name.
func actor(kind herald.Kind, d channels.Delivery) string {
	if kind.Actor == "" {
		return kind.Name
	}
	if v := (channels.Kind{Kind: kind}).Field(d, kind.Actor); v != "" {
		return v
	}
	return kind.Name
}

// personalID is the id of one person's delivery of a notice that fans out: the same on every
// retry, and what the retry task is named by.
func personalID(noticeID, userID, via string) string {
	return noticeID + "-" + userID + "-" + via
}

// attempt tries one delivery a few times at once and says how it went, with a record of each
// try.
func (e *Engine) attempt(ctx context.Context, n notice, r *recipient) (outcome, []store.Attempt, error) {
	if r.nobody != "" { // reached nobody: failed for good, as a delivery with no sender
		f := &channels.Failure{Reason: r.nobody}
		return givenUp, []store.Attempt{e.record(n, r, e.Clock.Now(), f)}, f
	}
	notifier, ok := e.Notifiers[r.kind]
	if !ok {
		err := fmt.Errorf("no sender for %s notifications", r.kind)
		return givenUp, []store.Attempt{e.record(n, r, e.Clock.Now(), &channels.Failure{Reason: err.Error()})}, err
	}
	records := make([]store.Attempt, 0, 1)
	err := retry.Do(ctx, quickBackoff(time.Now()), func(ctx context.Context) error {
		rec, again, err := e.tryOnce(ctx, notifier, n, r)
		records = append(records, rec)
		if again {
			return retry.RetryableError(err)
		}
		return err
	})
	f := failureOf(err)
	switch {
	case err == nil:
		return delivered, records, nil
	case f != nil && f.Rejected:
		return rejected, records, err
	case f != nil && !f.Retry:
		return givenUp, records, err
	case ctx.Err() != nil:
		return retryLater, records, err
	default: // transient, or not classified: try again later
		return retryLater, records, err
	}
}

// tryOnce is one try of delivery r and its record; again says that it may be tried again at
// once: it failed for now, and the target asked for no longer a wait than quickRetryAfterMax,
// which tryOnce has waited out. A paced target that asked for a wait is paused instead, and
// the delivery waits in its line (paceTried).
func (e *Engine) tryOnce(ctx context.Context, notifier channels.Notifier, n notice, r *recipient) (store.Attempt, bool, error) {
	start := e.Clock.Now()
	err := notifier.Notify(ctx, r.delivery)
	rec := e.record(n, r, start, err)
	if f := failureOf(err); f != nil && f.Retry && f.RetryAfter <= quickRetryAfterMax && (r.pace == "" || f.RetryAfter == 0) {
		select { // the target said when: no sooner
		case <-ctx.Done():
			return rec, false, ctx.Err()
		case <-time.After(f.RetryAfter):
		}
		return rec, true, err
	}
	return rec, false, err
}

// quickBackoff is the waits between a delivery's quick tries, the first of which started at
// start. It is built only when a first try failed, which most never do.
func quickBackoff(start time.Time) retry.Backoff {
	var b retry.Backoff
	return retry.BackoffFunc(func() (time.Duration, bool) {
		if b == nil {
			b = retry.WithMaxDuration(quickBound-time.Since(start), retry.WithMaxRetries(quickTries-1,
				retry.WithJitterPercent(20, retry.NewExponential(quickFirstWait))))
		}
		return b.Next()
	})
}

// record is the log entry of one try.
func (e *Engine) record(n notice, r *recipient, start time.Time, err error) store.Attempt {
	end := e.Clock.Now()
	a := store.Attempt{At: herald.At(end), AlertID: n.AlertID, Global: n.Global, DeliveryID: r.delivery.ID,
		Kind: r.kind, Via: r.via, Outcome: store.OutcomeDelivered, DurationMs: end.Sub(start).Milliseconds()}
	switch f := failureOf(err); {
	case err == nil:
	case f != nil:
		a.StatusCode, a.Reason = f.Status, f.Reason
		switch {
		case f.Rejected:
			a.Outcome = store.OutcomeRejected
		case f.Retry:
			a.Outcome = store.OutcomeRetrying
		default:
			a.Outcome = store.OutcomeFailed
		}
	default:
		a.Outcome, a.Reason = store.OutcomeRetrying, "unclassified failure"
	}
	e.Observer.Delivery(r.kind, a.Outcome, end.Sub(start))
	return a
}

// failureOf is the *channels.Failure in err's chain, nil if none. It allocates nothing when
// err is nil, as most tries' is.
func failureOf(err error) *channels.Failure {
	if err == nil {
		return nil
	}
	var f *channels.Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

// sent is what became of a group of notices.
type sent struct {
	group    sendGroup
	notified map[string]time.Time // alert -> when a delivery succeeded
	retry    []later              // one per delivery to try again later
	refused  []refusal            // credentials a service refused
	attempts []tried
	lapsed   bool // deliveries were left untried: the session's lease may have lapsed
}

// later is a delivery to try again, no sooner than after (the target's Retry-After), on the
// queue of kind (empty: the notice's own, kindOf).
type later struct {
	n     notice
	after time.Duration
	kind  string
	paced bool // after is the wait for its target's slot (paceAt)
}

// retryAfter is how long a failure asked to be left alone.
func retryAfter(err error) time.Duration {
	var f *channels.Failure
	if errors.As(err, &f) {
		return f.RetryAfter
	}
	return 0
}

// refusal is a credential a service refused, for the notice that used it.
type refusal struct {
	n notice
	r recipient
}

// deliver sends a committed step's notices concurrently on the session's deliverers, at most
// deliverParallel at once and deliverPerKind of one kind, so that one slow service cannot hold
// every slot.
func (s *session) deliver(ctx context.Context, g sendGroup, pool *deliverers) sent {
	// Sized for a delivery a notice, the common case.
	out := sent{group: g, notified: make(map[string]time.Time, len(g.notices)), attempts: make([]tried, 0, len(g.notices))}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		kinds = map[string]chan struct{}{}
	)
	slot := func(kind string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if kinds[kind] == nil {
			kinds[kind] = make(chan struct{}, deliverPerKind)
		}
		return kinds[kind]
	}
	people := func() ([]herald.User, error) { return s.people(ctx) }
	for i := range g.notices {
		n := &g.notices[i] // the jobs below share it rather than each hold a copy
		nc := noticeContext{alert: g.alerts[n.AlertID], rule: g.cfg.rule(n.ConfigID), project: s.project, org: g.cfg.org, integ: g.cfg.integ,
			people: people}
		about := n.about()
		if fps := g.cfg.fingerprints[n.ConfigID]; n.Notification < len(fps) && about.Fingerprint == fps[n.Notification] {
			about.Fingerprint = "" // the notification is as it was: no need to fingerprint it again
		}
		now := s.e.Clock.Now()
		if why := about.Superseded(nc.alert, nc.rule, s.silenced(nc.alert, now), now); why != "" {
			mu.Lock()
			out.attempts = append(out.attempts, tried{*n, s.e.superseded(*n, n.DeliveryID, noticeKind(*n, nc.rule), "", why)})
			mu.Unlock()
			continue
		}
		rs, err := s.e.recipients(*n, nc)
		if err != nil { // reading the project's people failed: the whole notice is tried again
			mu.Lock()
			out.retry = append(out.retry, later{n: *n, kind: noticeKind(*n, nc.rule)}) // on the people kinds' queue
			mu.Unlock()
			continue
		}
		for j := range rs {
			r := &rs[j] // as n: a recipient holds the alert, some hundreds of bytes
			kind := slot(r.kind)
			wg.Add(1)
			kind <- struct{}{}
			pool.run(func() {
				defer func() { <-kind; wg.Done() }()
				if alive(ctx) != nil || s.lapsed() {
					// Another session may hold the project, and send the group's notices from
					// the outbox: this one sends no more of them.
					mu.Lock()
					out.lapsed = true
					mu.Unlock()
					return
				}
				res, records, err := s.e.try(ctx, *n, r, false)
				mu.Lock()
				defer mu.Unlock()
				one := *n
				one.UserID, one.Via, one.Line = r.userID, r.via, r.line
				switch res {
				case delivered:
					out.notified[n.AlertID] = s.e.Clock.Now()
				case retryLater, paced:
					wait, inLine := lineWait(r, res, err)
					out.retry = append(out.retry, later{n: one, after: wait, paced: inLine})
				case rejected: // the credential is removed; the notice waits as a dead letter for a new one
					out.refused = append(out.refused, refusal{*n, *r})
					one.DeadLetter = deadLetterReason(err)
					out.retry = append(out.retry, later{n: one, kind: r.kind})
				case givenUp:
					markDeadLetter(records)
					one.DeadLetter = deadLetterReason(err)
					out.retry = append(out.retry, later{n: one, kind: r.kind})
				}
				out.attempts = appendTried(out.attempts, one, records)
			})
		}
	}
	wg.Wait()
	return out
}

// deliverers are the goroutines a session's sender runs its deliveries on: started as needed,
// up to deliverParallel, and kept until the sender ends. They are kept because an HTTP
// exchange grows a goroutine's stack, and a new goroutine would grow it again. Only one
// goroutine (the sender's delivering stage) hands out work.
type deliverers struct {
	jobs    chan func()
	started int
}

func newDeliverers() *deliverers { return &deliverers{jobs: make(chan func())} }

// run runs job on an idle deliverer, a new one while fewer than deliverParallel run, or else
// the first to become idle (waiting for it).
func (p *deliverers) run(job func()) {
	select {
	case p.jobs <- job:
		return
	default:
	}
	if p.started < deliverParallel {
		p.started++
		go func() {
			for job := range p.jobs {
				job()
			}
		}()
	}
	p.jobs <- job
}

// stop ends the deliverers once their jobs are done; run must not be called after.
func (p *deliverers) stop() { close(p.jobs) }

// people are the users a notification of the session's project may reach, read once it succeeds.
func (s *session) people(ctx context.Context) ([]herald.User, error) {
	s.peopleMu.Lock()
	defer s.peopleMu.Unlock()
	if s.peopleList == nil { // a failed read is not kept: the next notice reads again
		users, err := s.e.store.UsersOf(ctx, s.project)
		if err != nil {
			return nil, err
		}
		s.peopleList = append(make([]herald.User, 0, len(users)), users...)
	}
	return s.peopleList, nil
}

// settle records what deliver did: the attempts, lastNotified of the alerts notified, retry
// tasks for what failed for now, refused credentials, and the group's notices out of the
// outbox. Each part done is taken out of r, so that settling again after a failure does only
// what is left.
func (s *session) settle(ctx context.Context, r *sent) error {
	sc := r.group.sc
	if err := s.e.recordAttempts(ctx, s.project.ID, r.attempts); err != nil {
		return err
	}
	r.attempts = nil
	if err := s.lock.MarkNotified(ctx, sc, r.notified); err != nil {
		return err
	}
	r.notified = nil
	for len(r.retry) > 0 {
		l := r.retry[0]
		kind := l.kind
		if kind == "" {
			kind = s.kindOf(l.n)
		}
		if err := s.e.dispatcher.retryAt(ctx, l.n, kind, s.e.DeliveryRetries, retryTime(time.Now(), l.after, l.paced)); err != nil {
			return err // the outbox keeps every notice: they come back after the lease
		}
		r.retry = r.retry[1:]
	}
	for len(r.refused) > 0 {
		if err := s.e.refused(ctx, r.refused[0].n, r.refused[0].r, s.project); err != nil {
			return err
		}
		r.refused = r.refused[1:]
	}
	return s.lock.DoneOutbox(ctx, sc, r.group.raw...)
}

// kindOf is the queue kind of a notice's retry: the person's means, or the notification's kind
// (none, its configuration gone: DeliveryQueue gives it a served queue, where it is superseded).
func (s *session) kindOf(n notice) string {
	if n.Via != "" {
		return n.Via
	}
	return noticeKind(n, s.cfg().rule(n.ConfigID))
}

// retry queues one delivery for its kind's workers, once per delivery, to be tried up to
// retries times, the first in a second or after, whichever is later.
//
// asynq archives a task whose last run fails, whatever the error. The task gets one run more
// than its tries (storeSpare): deliverTask ends the last try itself (asynq.SkipRetry), and a
// store error in that run leaves the spare, so the task runs again rather than being archived
// without its record.
func (d *Dispatcher) retry(ctx context.Context, n notice, kind string, retries int, after time.Duration) error {
	return d.retryAt(ctx, n, kind, retries, retryTime(time.Now(), after, false))
}

// retryTime is when a retry task due after after from now is scheduled: a delivery that waits
// in its target's line (paced) a little before its slot (paceAt), any other no sooner than a
// second from now and after.
func retryTime(now time.Time, after time.Duration, paced bool) time.Time {
	if paced {
		return paceAt(now, after)
	}
	return notBefore(now, max(time.Second, after))
}

// retryAt is retry with the task due at at.
func (d *Dispatcher) retryAt(ctx context.Context, n notice, kind string, retries int, at time.Time) error {
	return d.enqueueDelivery(ctx, n, kind, retries, at, "delivery:"+n.personalID())
}

// personalID is the id of the notice's one delivery: its own, or its person's.
func (n notice) personalID() string {
	if n.UserID != "" {
		return personalID(n.DeliveryID, n.UserID, n.Via)
	}
	return n.DeliveryID
}

// enqueueDelivery queues delivery task n as retryAt does, under task id taskID: once.
func (d *Dispatcher) enqueueDelivery(ctx context.Context, n notice, kind string, retries int, at time.Time, taskID string) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeDelivery, n), asynq.Queue(DeliveryQueue(kind)),
		asynq.TaskID(taskID), asynq.MaxRetry(retries+storeSpare), asynq.ProcessAt(at))
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// refused handles a credential a service refused: removed where it was configured (the
// notification's own, else the integration's), an event, and an email to the project's
// owners. A credential already removed (another delivery was refused first) does nothing.
//
// The owners' email is a task of its own (ownersTask), queued before the removal: once the
// removal is recorded, a crash, or a mail server that fails, cannot lose it (it is retried
// as a delivery is, and waits as a dead letter in asynqmon when its tries are spent).
func (e *Engine) refused(ctx context.Context, n notice, r recipient, p herald.Project) error {
	ev := herald.NewEvent(herald.EventCredentialRejected, herald.Principal{}, p.Scope(), e.Clock.Now())
	ev.AlertID, ev.AlertConfigID = n.AlertID, n.ConfigID
	ev.Raw = map[string]any{"typeName": r.kind, "deliveryId": r.delivery.ID}
	fromNotification := r.delivery.Notification.RemoveCredential() != "" // the notification held it
	if e.Mailer == nil {
		e.Log.Warn("no mail server configured: the project's owners will not be told of the removed credential", zap.String("groupId", p.ID))
	} else if err := e.dispatcher.tellOwners(ctx, ownersTask{GroupID: p.ID, Global: n.Global && fromNotification, EventID: ev.ID,
		Queued: e.Clock.Now()}, e.DeliveryRetries); err != nil {
		return err
	}
	var field, where string
	change := func(nt *herald.Notification) ([]herald.Event, error) {
		if field = nt.RemoveCredential(); field == "" {
			return nil, nil
		}
		ev.Raw["field"], ev.Raw["removedFrom"] = field, "notification"
		return []herald.Event{ev}, nil
	}
	var err error
	if fromNotification {
		where = "alert configuration " + n.ConfigID
		if n.Global {
			ev.GroupID = ""
			_, err = e.store.UpdateGlobalAlertConfig(ctx, n.ConfigID, func(c *herald.GlobalAlertConfig) ([]herald.Event, error) {
				if n.Notification >= len(c.Notifications) {
					return nil, nil
				}
				return change(&c.Notifications[n.Notification])
			})
		} else {
			_, err = e.store.UpdateAlertConfig(ctx, p.ID, n.ConfigID, func(c *herald.AlertConfig) ([]herald.Event, error) {
				if n.Notification >= len(c.Notifications) {
					return nil, nil
				}
				return change(&c.Notifications[n.Notification])
			})
		}
	} else if r.delivery.Integration != nil {
		typ := integrationKind(r.kind)
		where = typ + " integration"
		_, err = e.store.PutIntegration(ctx, p.ID, typ, func(cur *herald.Integration) (herald.Integration, []herald.Event, error) {
			if cur == nil {
				return herald.Integration{}, nil, errNothingToRemove
			}
			next := *cur
			if field = next.RemoveCredential(r.kind); field == "" {
				return next, nil, nil
			}
			ev.Raw["field"], ev.Raw["removedFrom"] = field, "integration"
			return next, []herald.Event{ev}, nil
		})
	}
	if errors.Is(err, errNothingToRemove) || herald.IsNotFound(err) {
		err = nil
	}
	if err != nil || field == "" {
		return err
	}
	e.Log.Warn("a service refused a credential; removed it", zap.String("groupId", p.ID), zap.String("typeName", r.kind),
		zap.String("field", field), zap.String("from", where))
	return nil
}

// notBefore is when a task due after d from now may be scheduled so that asynq, which keeps
// due times in whole seconds and may start a task up to a second early, never starts it
// sooner: the next whole second at or after now+d.
func notBefore(now time.Time, d time.Duration) time.Time {
	at := now.Add(d)
	if t := at.Truncate(time.Second); !t.Equal(at) {
		return t.Add(time.Second)
	}
	return at
}

var errNothingToRemove = errors.New("dispatch: no credential to remove")

// ownersWait is how long an owners' notice waits for its removal's event: the removal is
// recorded right after the task is queued; when it is not by then, it never was under this
// event (a store error made the refusal run again, with an event and a notice of its own, or
// another delivery's refusal removed the credential first and tells the owners itself).
const ownersWait = 2 * time.Minute

// errRemovalPending is an owners' notice whose removal is not recorded yet: it looks again in
// a second, and that is no failed try (isFailure).
var errRemovalPending = errors.New("dispatch: the credential's removal is not recorded yet")

// tellOwners queues the owners' notice of a removal (once: its id is its event's).
func (d *Dispatcher) tellOwners(ctx context.Context, o ownersTask, retries int) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeOwnersTold, o), asynq.Queue(DeliveryQueue("EMAIL")),
		asynq.TaskID("owners:"+o.EventID), asynq.MaxRetry(retries))
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// ownersTask emails the project's owners that a credential was removed, as its event says:
// which kind, which field, from where. Every owner with an address is emailed on each try
// until all of them were in one (at least once; a message keeps its Message-ID, so a mail
// client shows a repeat once).
func (e *Engine) ownersTask(ctx context.Context, t *asynq.Task) error {
	var o ownersTask
	if err := decodeJSON(t.Payload(), &o); err != nil || o.GroupID == "" || o.EventID == "" {
		return errors.Join(asynq.SkipRetry, err, errors.New("dispatch: an owners' notice without its project or event"))
	}
	if e.Mailer == nil {
		return errors.Join(asynq.SkipRetry, errors.New("dispatch: no mail server configured to tell the project's owners"))
	}
	sc := store.EventScope{GroupID: o.GroupID}
	if o.Global {
		sc = store.EventScope{}
	}
	ev, err := e.store.Event(ctx, sc, o.EventID)
	if herald.IsNotFound(err) {
		if e.Clock.Now().Sub(o.Queued) < ownersWait {
			return errRemovalPending
		}
		return nil // that removal never happened (ownersWait)
	}
	if err != nil {
		return err
	}
	p, err := e.store.Project(ctx, o.GroupID)
	if herald.IsNotFound(err) {
		return nil // the project is gone, and its owners with it
	}
	if err != nil {
		return err
	}
	people, err := e.store.UsersOf(ctx, p)
	if err != nil {
		return err
	}
	subject, body := ownersMessage(p, ev)
	var failed []error
	for _, u := range people {
		if !u.OwnsProject(p) || u.EmailAddress == "" {
			continue
		}
		if err := e.Mailer.Message(ctx, u.EmailAddress, subject, body, fmt.Sprintf("%s-%s@herald", ev.ID, u.ID)); err != nil {
			failed = append(failed, fmt.Errorf("owner %s: %w", u.ID, err))
		}
	}
	return errors.Join(failed...)
}

// ownersMessage is the owners' email about the removal ev records (its kind, field and
// place, never the credential).
func ownersMessage(p herald.Project, ev herald.Event) (subject, body string) {
	kind, _ := ev.Raw["typeName"].(string)
	field, _ := ev.Raw["field"].(string)
	where := integrationKind(kind) + " integration"
	if from, _ := ev.Raw["removedFrom"].(string); from == "notification" {
		where = "alert configuration " + ev.AlertConfigID
	}
	subject = fmt.Sprintf("[Herald] A %s credential of project %s was refused and removed", kind, p.Name)
	body = fmt.Sprintf("The %s service refused the credential in the %s field of the %s of project %s (%s).\n"+
		"Herald removed it and will not send %s notices with it again. Set a new one through the API.\n\nEvent: %s\n",
		kind, field, where, p.Name, p.ID, kind, ev.ID)
	return subject, body
}

// deliverTask is a retry of one delivery, run by a delivery worker. Its last try failing, or
// a permanent failure, makes it a dead letter (archived by asynq, visible and replayable in
// asynqmon and through the API), recorded as such. A task queued as a dead letter
// (DeadLetter set) is archived at once the first time it runs, and tried when replayed. A
// store error is no failed try (errStore): the task runs again, so that no last try is
// archived without its record.
func (e *Engine) deliverTask(ctx context.Context, t *asynq.Task) error {
	var n notice
	if err := json.Unmarshal(t.Payload(), &n); err != nil {
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	if n.DeadLetter != "" {
		if replayed, err := e.replayed(ctx); err != nil {
			return storeFailed(err)
		} else if !replayed {
			return fmt.Errorf("%w: %s", asynq.SkipRetry, n.DeadLetter)
		}
	}
	if n.Digest != "" {
		if n.Line == "" {
			return fmt.Errorf("%w: %v", asynq.SkipRetry, errNotDigest)
		}
		return e.digestTask(ctx, n)
	}
	nc, err := e.loadNoticeContext(ctx, n)
	if herald.IsNotFound(err) {
		e.Log.Info("delivery dropped: its project is gone", zap.String("delivery", n.DeliveryID))
		return nil
	}
	if err != nil {
		return storeFailed(err)
	}
	why := ""
	if nc.alert.ID == "" {
		why = herald.SupersededAlertGone
	} else {
		now := e.Clock.Now()
		why = n.about().Superseded(nc.alert, nc.rule, silencedBy(nc.windows, nc.alert, now), now)
	}
	if why != "" && n.Line != "" {
		if held, err := e.leaveLine(ctx, n); err != nil {
			return storeFailed(err)
		} else if held {
			return nil // a digest claimed it: the digest tells of it or leaves it out
		}
	}
	if why != "" {
		if err := e.abandonTries(ctx, n, nc); err != nil {
			return storeFailed(err)
		}
		return storeFailed(e.recordAttempts(ctx, n.GroupID, []tried{{n, e.superseded(n, n.DeliveryID, noticeKind(n, nc.rule), n.Via, why)}}))
	}
	rs, err := e.recipients(n, nc)
	if err != nil {
		return storeFailed(err) // reading the project's people failed: tried again
	}
	// A notice that fans out and reached nobody yet is tried once for each person here; a
	// person it fails for gets a retry task of their own, so that the others are not sent it
	// again.
	fanned := n.UserID == "" && len(rs) > 0 && rs[0].userID != ""
	var failed error
	for _, r := range rs {
		res, records, err := e.try(ctx, n, &r, true)
		if errors.Is(err, errStore) {
			return err
		}
		last, _ := asynq.GetRetryCount(ctx)
		max, _ := asynq.GetMaxRetry(ctx)
		final := res == givenUp || (res == retryLater && !fanned && last >= max-storeSpare)
		if final {
			markDeadLetter(records)
		}
		one := n
		one.UserID, one.Via, one.DeadLetter, one.Line = r.userID, r.via, "", r.line
		if rerr := e.recordAttempts(ctx, n.GroupID, appendTried(nil, one, records)); rerr != nil {
			return storeFailed(rerr)
		}
		switch {
		case res == delivered:
			if err := e.store.MarkNotified(ctx, n.scope(), map[string]time.Time{nc.alert.ID: e.Clock.Now()}); err != nil {
				return storeFailed(err)
			}
		case res == rejected:
			if err := e.refused(ctx, n, r, nc.project); err != nil {
				return storeFailed(err)
			}
			failed = fmt.Errorf("%w: %v", asynq.SkipRetry, err) // a dead letter, for a new credential
		case res == paced && !fanned && r.line != "" && n.Line != r.line:
			// It waits in its target's digest line: from a task that names the line (inLine).
			wait, _ := lineWait(&r, res, err)
			if err := e.dispatcher.enqueueDelivery(ctx, one, r.kind, e.DeliveryRetries, retryTime(time.Now(), wait, true), "line:"+one.personalID()); err != nil {
				return storeFailed(err)
			}
		case fanned && res == givenUp:
			one.DeadLetter = deadLetterReason(err)
			if err := e.dispatcher.retry(ctx, one, r.via, e.DeliveryRetries, 0); err != nil {
				return storeFailed(err)
			}
		case fanned && (res == retryLater || res == paced):
			wait, inLine := lineWait(&r, res, err)
			if err := e.dispatcher.retryAt(ctx, one, r.via, e.DeliveryRetries, retryTime(time.Now(), wait, inLine)); err != nil {
				return storeFailed(err)
			}
		case final: // its last try, recorded as the dead letter: no spare run tries again
			failed = fmt.Errorf("%w: %v", asynq.SkipRetry, err)
		case res == paced:
			failed = err // runs again at its slot, no failed try
		case res == retryLater:
			failed = err
			if wait, inLine := lineWait(&r, res, err); inLine {
				failed = &pacedError{wait: wait, failure: err} // in its target's line (paceTried)
			}
		}
	}
	return failed
}

// replayed says whether the dead-letter task running now was replayed (it failed before: it
// was archived, then run again from asynqmon or the API) rather than running for the first
// time, to be archived.
func (e *Engine) replayed(ctx context.Context) (bool, error) {
	id, _ := asynq.GetTaskID(ctx)
	queue, _ := asynq.GetQueueName(ctx)
	info, err := e.dispatcher.inspector.GetTaskInfo(queue, id)
	if err != nil {
		return false, err
	}
	return info.LastErr != "", nil
}

// markDeadLetter records the last of a delivery's tries as the one that made it a dead letter.
func markDeadLetter(records []store.Attempt) {
	if len(records) > 0 {
		records[len(records)-1].Outcome = store.OutcomeDeadLetter
	}
}

// deadLetterReason is what a dead letter says failed: the failure's reason, never a secret.
func deadLetterReason(err error) string {
	var f *channels.Failure
	if errors.As(err, &f) && f.Reason != "" {
		return f.Reason
	}
	if err != nil {
		return err.Error()
	}
	return "failed for good"
}

// loadNoticeContext reads what a retry of notice n needs: as of now (the alert, its
// configuration, the project's maintenance windows), to tell whether the notice is superseded. An alert that is gone has a zero alert, a configuration that is gone a
// nil rule; a project that is gone is NotFound.
func (e *Engine) loadNoticeContext(ctx context.Context, n notice) (noticeContext, error) {
	var nc noticeContext
	var err error
	if nc.project, err = e.store.Project(ctx, n.GroupID); err != nil {
		return nc, err
	}
	if nc.org, err = e.orgName(ctx, nc.project.OrgID); err != nil {
		return nc, err
	}
	var rule herald.AlertRule
	if n.Global {
		nc.alert, err = e.store.GlobalAlert(ctx, n.AlertID)
		if err == nil || herald.IsNotFound(err) {
			var c herald.GlobalAlertConfig
			c, err = e.store.GlobalAlertConfig(ctx, n.ConfigID)
			rule = c.AlertRule
		}
	} else {
		nc.alert, err = e.store.Alert(ctx, n.GroupID, n.AlertID)
		if err == nil || herald.IsNotFound(err) {
			var c herald.AlertConfig
			c, err = e.store.AlertConfig(ctx, n.GroupID, n.ConfigID)
			rule = c.AlertRule
		}
	}
	switch {
	case err == nil:
		nc.rule = &rule
	case !herald.IsNotFound(err):
		return nc, err
	}
	if nc.windows, err = e.windows(ctx, n.GroupID); err != nil {
		return nc, err
	}
	integrations, err := e.store.Integrations(ctx, n.GroupID)
	if err != nil {
		return nc, err
	}
	nc.integ = map[string]*herald.Integration{}
	for i := range integrations {
		nc.integ[integrations[i].Type] = &integrations[i]
	}
	nc.people = func() ([]herald.User, error) { return e.store.UsersOf(ctx, nc.project) }
	return nc, nil
}
