package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Engine evaluates observations and due alerts, one project session at a time.
type Engine struct {
	EngineConfig
	store      *store.Store
	dispatcher *Dispatcher
	stopping   chan struct{} // closed when the worker shuts down: waits end at once
	stopOnce   sync.Once
	waiters    waiters  // the tasks of this engine waiting in-process for a project's next due time
	loops      loops    // the engine's loops at each project, which kicks reach
	tracked    sync.Map // scopes known to record every try (store.TrackReach)
}

// stop ends the engine's waits (for a busy project, for an alert due within the second), so
// that a shutting-down worker hands its tasks back promptly.
func (e *Engine) stop() { e.stopOnce.Do(func() { close(e.stopping) }) }

// EngineConfig is what an engine runs with.
type EngineConfig struct {
	// Notifiers maps a kind's name (herald.Kind.Name: CHAT_A for CHATA too; EMAIL and SMS for
	// the people of GROUP, ORG, USER and ADMIN) to its sender; kinds without one are skipped
	// (and logged).
	Notifiers map[string]channels.Notifier
	// Minute is the length of a minute of delayMin and intervalMin.
	Minute time.Duration
	// Lease is how long a project session, a claimed due alert and an unsent notice belong to
	// one engine without it renewing them: after a crash, the work comes back after this.
	// A session's heartbeat renews them every quarter of it while the session works or waits
	// on senders. Default 8 s.
	Lease time.Duration
	// DeliveryRetries is how often a failed delivery is retried by a task before it is archived
	// as a dead letter (default 12: about an hour and a half of backoff).
	DeliveryRetries int
	// Administrators are the installation's administrators' addresses (HERALD_ADMIN_EMAIL),
	// whom ADMIN notifications reach; none: the users holding GLOBAL_OWNER.
	Administrators []string
	// Mailer emails a project's owners when a service refuses a credential (nil: logged only).
	Mailer Mailer
	// Linker makes the action links of notices read by people (nil: notices carry none).
	Linker *actlink.Linker
	// Paces are the paces of each kind's targets, by kind name (pace.go; DefaultPaces are the
	// services' documented limits). A kind missing, or off, is not paced; nil paces nothing.
	Paces map[string]store.Pace
	// DigestAfter is how many messages a target of a kind people read takes one by one in
	// DigestWindow minutes (of Minute's length); more go out together as digests (digest.go).
	// 0: no digests. DigestWindow unset is DefaultDigestWindow.
	DigestAfter, DigestWindow int
	// Observer is told of every delivery attempt and due step, for metrics (nil: nobody).
	Observer Observer
	Clock    herald.Clock
	Log      *zap.Logger
}

// DefaultLease is the lease of a session's project, claims and notices: a killed worker's
// projects resume within it.
const DefaultLease = 8 * time.Second

// Settings of the engine's batching.
const (
	claimBatch     = 2000             // due alerts per step, at most
	observeBatches = 8                // observation batches per step
	sessionMax     = 10 * time.Second // a session then hands over to a new tick
	lockWait       = 5 * time.Second  // how long a task waits for a busy project
	// holdWithin: a session waits for what falls due this soon, and a project's next session
	// starts this much before its due time, so that taking the lease (two steps, fenced) and
	// reading what the session needs is done by then, on a loaded machine too.
	holdWithin  = 100 * time.Millisecond
	sessionHold = time.Second // for at most this long: then others get the lease
	// dueLead is how long before an alert's due time the engine's tick for it is queued: asynq
	// holds a scheduled task to the whole second and moves it to its queue at its next check
	// (delayedTaskCheck), so a tick queued for the due time itself starts up to a check (and
	// a poll of the queue, taskCheck) late whenever the time falls early in its second. Queued
	// earlier, it starts before, and its session waits in the task for the due time
	// (soonEnough covers the second of rounding and the lead).
	delayedTaskCheck = 500 * time.Millisecond
	taskCheck        = 100 * time.Millisecond // how often an idle worker polls its queues
	dueLead          = delayedTaskCheck + taskCheck
	soonEnough       = time.Second + dueLead + 100*time.Millisecond // due this soon: wait in the task rather than schedule a tick
	deliverParallel  = 64
)

// NewEngine builds an engine on st, queueing follow-up work with d.
func NewEngine(st *store.Store, d *Dispatcher, cfg EngineConfig) *Engine {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.DeliveryRetries <= 0 {
		cfg.DeliveryRetries = 12
	}
	if cfg.Minute <= 0 {
		cfg.Minute = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = herald.SystemClock{}
	}
	if cfg.DigestWindow <= 0 {
		cfg.DigestWindow = DefaultDigestWindow
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	return &Engine{EngineConfig: cfg, store: st, dispatcher: d, stopping: make(chan struct{})}
}

// errBusy: another engine holds the project; the task is retried shortly.
var errBusy = errors.New("dispatch: project busy")

// session is one engine's turn at a project, with the configurations it works with.
type session struct {
	e       *Engine
	project herald.Project
	lock    *store.ProjectLock
	// lapse is when the session must have stopped unless it renews its lease before: the
	// start of its last renewal (or of its taking the lease) plus the lease, less leaseMargin.
	lapse   atomic.Pointer[time.Time]
	snap    atomic.Pointer[configSet] // the configurations, as of the last refresh
	sends   chan sendGroup            // committed notices for the session's sender, in commit order
	sent    chan error                // the sender's result, once sends is closed
	sending atomic.Int32              // groups handed to the sender and not yet settled
	settled chan struct{}             // a group was settled (capacity 1)
	kicked  chan struct{}             // work was queued for the project (the loop's: loops)

	mu       sync.Mutex                      // guards inflight
	inflight map[store.Scope]map[string]bool // notices handed to the sender and not yet settled

	dueChunk dueChunks // how many due alerts the session claims next

	peopleMu   sync.Mutex    // guards peopleList
	peopleList []herald.User // the project's users, read when a notice first fans out (nil: not yet)
}

// sendGroup is the notices of one committed step, with the alerts they are about.
type sendGroup struct {
	cfg     *configSet // the configurations the step was committed with
	sc      store.Scope
	alerts  map[string]herald.Alert
	notices []notice
	raw     [][]byte // the outbox entry that holds the notices (store.OutboxEntry)
}

// runProject runs first in a session of project groupID, then the session's usual work, and
// keeps at it while more comes due within about a second (its tick would be this very task,
// and asynq may have started it early), for at most sessionMax. The project's lease is held
// only while working, never while waiting, so that other tasks for the project (a changed
// configuration, an acknowledgement's expiry) get their turn. The configurations loaded by
// one session serve the next while their version is unchanged (one read, not ten): an alert
// that comes due waits for as little as possible. A kick (a batch of observations queued)
// ends a wait at once, and one that came during a session makes another session follow.
func (e *Engine) runProject(ctx context.Context, groupID string, first func(*session) error) error {
	return e.runLoop(ctx, groupID, first, e.loops.enter(groupID))
}

// runLoop is runProject's loop, counted among the project's loops as p; it leaves when it
// returns.
func (e *Engine) runLoop(ctx context.Context, groupID string, first func(*session) error, p *projectLoops) error {
	defer e.loops.leave(groupID)
	started := time.Now()
	var cfg *configSet
	for fn := first; ; fn = nil {
		w, err := e.session(ctx, groupID, fn, &cfg, p.kicked)
		if err != nil {
			return err
		}
		next := w.at()
		if time.Since(started) <= sessionMax && !ready(e.stopping) && p.took() {
			continue // a batch was queued during the session, maybe after its last look
		}
		if next.IsZero() {
			return nil
		}
		if time.Until(next) > soonEnough || time.Since(started) > sessionMax {
			return e.dispatcher.wakeAt(ctx, groupID, next, dueLead)
		}
		// One waiter a project is enough: its session at its time takes whatever is due and
		// waiting then, and it waits on for what comes due after. Every task waiting for the
		// same instant would only race for the lease at it, and take worker slots meanwhile.
		done, first := e.waiters.add(groupID, next)
		if !first {
			return nil
		}
		select {
		case <-ctx.Done():
			done()
			return ctx.Err()
		case <-e.stopping:
			done()
			return e.dispatcher.wakeAt(ctx, groupID, next, dueLead) // another worker's turn
		case <-p.kicked: // a batch was queued: a session now, and then the wait again
			done()
		case <-time.After(time.Until(w.start())):
			done()
		}
	}
}

// wake is when a project needs its next session, as a session ends: its next alert's due time,
// and when notices another sender holds come back if their sender does not renew its claim.
// A session ends with none of its own held, and a live sender holds the project's lease, so
// those are a dead one's: the next session takes them over then, rather than at the
// scheduler's next look.
type wake store.NextWork

// at is the earliest of w's times (zero: none).
func (w wake) at() time.Time {
	if w.Due.IsZero() || !w.ClaimedUntil.IsZero() && w.ClaimedUntil.Before(w.Due) {
		return w.ClaimedUntil
	}
	return w.Due
}

// claimSlack is how long after a claim's end its session starts: the claim's time is the
// clock of the worker that made it, and a session that found it not yet over would leave its
// notices until the next look.
const claimSlack = 10 * time.Millisecond

// start is when an in-process wait for w ends: a little before the due time (the session's
// start, the lease, the configurations' version, the outbox, is done by then, and the
// session then waits for the due time itself), but only after a claim's end (the session
// takes claimed notices over as it starts, and waits for no claim itself).
func (w wake) start() time.Time {
	var t time.Time
	if !w.Due.IsZero() {
		t = w.Due.Add(-holdWithin)
	}
	if c := w.ClaimedUntil.Add(claimSlack); !w.ClaimedUntil.IsZero() && (t.IsZero() || c.Before(t)) {
		t = c
	}
	return t
}

// waiters are the tasks of one engine waiting in-process for their project's next due time.
type waiters struct {
	mu sync.Mutex
	at map[string][]time.Time // by project: when each waiter's session starts
}

// add registers a task that would wait for project groupID until at, unless one already
// waits for at or earlier (first false: the task need not wait). done unregisters it, when
// its wait ends (before its session starts: a task finishing meanwhile waits itself).
func (w *waiters) add(groupID string, at time.Time) (done func(), first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.at[groupID] {
		if !t.After(at) {
			return func() {}, false
		}
	}
	if w.at == nil {
		w.at = map[string][]time.Time{}
	}
	w.at[groupID] = append(w.at[groupID], at)
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		ts := w.at[groupID]
		if i := slices.IndexFunc(ts, at.Equal); i >= 0 {
			ts = slices.Delete(ts, i, i+1)
		}
		if len(ts) == 0 {
			delete(w.at, groupID)
		} else {
			w.at[groupID] = ts
		}
	}, true
}

// session takes the project's lease (waiting a while for a busy project), runs fn (if any) and
// then whatever waits or is due, gives the lease back, and says when the project's next alert
// is due. cfg holds the configurations of the task's last session (nil: none yet), which this
// one uses if still current, and gets this one's. kicked tells of work queued meanwhile.
func (e *Engine) session(ctx context.Context, groupID string, fn func(*session) error, cfg **configSet, kicked chan struct{}) (wake, error) {
	var lock *store.ProjectLock
	var taken time.Time // when the lease was asked for: it runs from no earlier
	backoff := 5 * time.Millisecond
	for deadline := time.Now().Add(lockWait); ; {
		taken = time.Now()
		l, ok, err := e.store.LockProject(ctx, groupID, e.Lease)
		if err != nil {
			return wake{}, err
		}
		if ok {
			lock = l
			break
		}
		if time.Now().After(deadline) {
			return wake{}, errBusy
		}
		select {
		case <-ctx.Done():
			return wake{}, ctx.Err()
		case <-e.stopping:
			return wake{}, errBusy // retried, by another worker
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
	defer func() {
		if err := lock.Unlock(context.WithoutCancel(ctx)); err != nil {
			e.Observer.EngineError(ErrLeaseRelease, 1)
			e.Log.Warn("releasing project lease failed: the project's next session waits for it to lapse", zap.String("groupId", groupID), zap.Error(err))
		}
	}()
	// The heartbeat keeps the lease and the notices being sent held while the session works;
	// if the lease is lost, the session's context ends with store.ErrLeaseLost.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s, err := e.newSession(sctx, groupID, lock, *cfg)
	if err == nil {
		s.kicked = kicked
		s.renewed(taken)
	}
	if err != nil {
		if herald.IsNotFound(err) {
			e.Log.Warn("work for a project that does not exist", zap.String("groupId", groupID))
			return wake{}, nil
		}
		return wake{}, err
	}
	beat := make(chan struct{})
	beating := make(chan struct{})
	go func() { defer close(beating); s.heartbeat(sctx, cancel, beat) }()
	defer func() { close(beat); <-beating }()
	err = s.work(sctx, fn)
	*cfg = s.cfg()
	// Deliveries under way finish before the lease is given back.
	if sendErr := s.flush(); err == nil {
		err = sendErr
	}
	if cause := context.Cause(sctx); err != nil && errors.Is(cause, store.ErrLeaseLost) {
		err = cause
	}
	if err != nil {
		return wake{}, err
	}
	next, err := e.store.ProjectNextWork(sctx, groupID, e.Clock.Now())
	return wake(next), err
}

// leaseMargin is how long before its lease can lapse in Redis a session whose renewals fail
// stops: for the time a command takes to reach Redis, and clocks that run apart.
func (e *Engine) leaseMargin() time.Duration { return e.Lease / 8 }

// renewed records that the session's lease was renewed (or taken) by a command sent at at:
// Redis keeps it for a lease from no earlier.
func (s *session) renewed(at time.Time) {
	lapse := at.Add(s.e.Lease - s.e.leaseMargin())
	s.lapse.Store(&lapse)
}

// lapsed says whether the session's lease may have lapsed in Redis: it was not renewed in time.
func (s *session) lapsed() bool {
	l := s.lapse.Load()
	return l == nil || !time.Now().Before(*l)
}

// heartbeat renews the session's lease and holds its notices being sent, every quarter of
// the lease, until stop is closed. A lease found lost ends the session (another may hold the
// project). A renewal that fails (Redis paused or unreachable) is tried again at the next
// beat, but Redis expires the lease by its clock, whatever keeps the renewals from it: the
// session ends as one that lost its lease as soon as it may have lapsed (lapse), a margin
// before the lease runs out after the last renewal, however long a renewal under way takes.
func (s *session) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	every := max(s.e.Lease/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	until := func() time.Duration {
		if l := s.lapse.Load(); l != nil {
			return time.Until(*l)
		}
		return 0
	}
	lapse := time.AfterFunc(until(), func() {
		s.e.Log.Warn("project lease not renewed in time: the session stops", zap.String("groupId", s.project.ID))
		cancel(store.ErrLeaseLost)
	})
	defer lapse.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		err := s.lock.Extend(ctx, s.e.Lease)
		if err == nil && ctx.Err() == nil {
			s.renewed(start)
			lapse.Reset(until())
			err = s.holdInflight(ctx)
		}
		switch {
		case errors.Is(err, store.ErrLeaseLost):
			s.e.Log.Warn("project lease lost: the session stops", zap.String("groupId", s.project.ID))
			cancel(err)
			return
		case err != nil && ctx.Err() == nil:
			s.e.Log.Warn("renewing the project lease", zap.String("groupId", s.project.ID), zap.Error(err))
		}
	}
}

// holdInflight keeps the notices handed to the sender held for another lease.
func (s *session) holdInflight(ctx context.Context) error {
	s.mu.Lock()
	held := map[store.Scope][][]byte{}
	for sc, ns := range s.inflight {
		for n := range ns {
			held[sc] = append(held[sc], []byte(n))
		}
	}
	s.mu.Unlock()
	until := s.e.Clock.Now().Add(s.e.Lease)
	for sc, ns := range held {
		if err := s.lock.HoldOutbox(ctx, sc, until, ns...); err != nil {
			return err
		}
	}
	return nil
}

// track records notices as handed to the sender (on) or settled (off).
func (s *session) track(sc store.Scope, notices [][]byte, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil {
		s.inflight = map[store.Scope]map[string]bool{}
	}
	if s.inflight[sc] == nil {
		s.inflight[sc] = map[string]bool{}
	}
	for _, n := range notices {
		if on {
			s.inflight[sc][string(n)] = true
		} else {
			delete(s.inflight[sc], string(n))
		}
	}
}

// work is what a session does: fn, the notices engines left behind, then whatever waits or is
// due.
func (s *session) work(ctx context.Context, fn func(*session) error) error {
	if err := s.trackReach(ctx); err != nil {
		return err
	}
	if fn != nil {
		if err := fn(s); err != nil {
			return err
		}
	}
	if err := s.recoverOutbox(ctx); err != nil {
		return err
	}
	return s.run(ctx)
}

// trackReach makes sure the session's scopes record every try before it creates an alert
// there (store.TrackReach), once an engine.
func (s *session) trackReach(ctx context.Context) error {
	for _, sc := range s.scopes() {
		if _, ok := s.e.tracked.Load(sc); ok {
			continue
		}
		if err := s.e.store.TrackReach(ctx, sc, s.e.Clock.Now()); err != nil {
			return err
		}
		s.e.tracked.Store(sc, true)
	}
	return nil
}

// send hands a committed step's notices to the session's sender, which delivers them while
// the session goes on evaluating: they are safe in the outbox already. The sender is two
// stages, each taking groups in commit order: one delivers (so an alert's notices go out in
// the order its steps were committed), the other settles what the first delivered (records
// lastNotified, queues retries, clears the outbox) while the first delivers the next group.
func (s *session) send(ctx context.Context, sc store.Scope, alerts map[string]herald.Alert, d decided) {
	if len(d.notices) == 0 {
		return
	}
	if s.sends == nil {
		s.sends, s.sent, s.settled = make(chan sendGroup, 1), make(chan error, 1), make(chan struct{}, 1)
		delivered := make(chan sent, 1)
		go func() {
			defer close(delivered)
			pool := newDeliverers()
			defer pool.stop()
			for g := range s.sends {
				delivered <- s.deliver(ctx, g, pool)
			}
		}()
		go func() {
			var err error
			for r := range delivered {
				if err == nil && r.lapsed { // what was not tried stays in the outbox, for the project's next session
					err = store.ErrLeaseLost
				}
				if err == nil { // after a save that failed for good the rest stays in the outbox, for later
					err = s.retrying(ctx, "saving delivery results", func() error { return s.settle(ctx, &r) })
				}
				s.track(r.group.sc, r.group.raw, false)
				s.sending.Add(-1)
				select {
				case s.settled <- struct{}{}:
				default:
				}
			}
			s.sent <- err
		}()
	}
	// The step's notices are one outbox entry: every change of the step was held as long.
	raw := [][]byte{store.OutboxEntry(d.raw)}
	s.track(sc, raw, true)
	s.sending.Add(1)
	s.sends <- sendGroup{cfg: s.cfg(), sc: sc, alerts: alerts, notices: d.notices, raw: raw}
}

// retrying does what, trying again after a failure (backing off up to a second) while the
// session holds its lease, for up to a lease. It is for what a session must not leave half
// done once its steps are committed: a batch evaluated must leave the queue, or the next
// session evaluates it again; delivery results must be saved, or the notices stay in the
// outbox, where another session would send them again. What still fails after a lease (a
// document that cannot be decoded, say) is given up: the session ends with the error, and
// what it left comes back as after a crash, rather than its lease holding the project's every
// other alert for good.
func (s *session) retrying(ctx context.Context, what string, do func() error) error {
	wait := 20 * time.Millisecond
	giveUp := time.Now().Add(s.e.Lease)
	for {
		err := do()
		if err == nil || errors.Is(err, store.ErrLeaseLost) || alive(ctx) != nil {
			return err
		}
		if time.Now().After(giveUp) {
			s.e.Log.Error(what+" failed for a lease; the session gives up", zap.String("groupId", s.project.ID), zap.Error(err))
			return err
		}
		s.e.Log.Warn(what+" failed; trying again", zap.String("groupId", s.project.ID), zap.Error(err))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// flush waits for the sender to deliver everything handed to it.
func (s *session) flush() error {
	if s.sends == nil {
		return nil
	}
	close(s.sends)
	err := <-s.sent
	s.sends = nil
	return err
}

// newSession starts a session with the project's configurations: cached if still current
// (nil: none), loaded otherwise.
func (e *Engine) newSession(ctx context.Context, groupID string, lock *store.ProjectLock, cached *configSet) (*session, error) {
	if cached != nil {
		s := &session{e: e, project: cached.project, lock: lock}
		s.snap.Store(cached)
		return s, s.refresh(ctx)
	}
	cs, err := e.loadConfigs(ctx, groupID)
	if err != nil {
		return nil, err
	}
	s := &session{e: e, project: cs.project, lock: lock}
	s.snap.Store(cs)
	return s, nil
}

// configSet is what a session evaluates and delivers with, as committed at one version: never
// changed once loaded (the sender reads it while the session may load a newer one).
type configSet struct {
	version string
	project herald.Project
	org     string                      // the project's organization's name, for notices
	configs map[string]herald.AlertRule // project and global configurations by id
	global  map[string]bool             // which of them are global
	byType  map[string][]string         // enabled configuration ids by event type
	windows []herald.MaintenanceWindow
	integ   map[string]*herald.Integration
	// fingerprints are each configuration's notifications' (fingerprints), by id.
	fingerprints map[string][]string
}

// cfg is the configurations the session uses now.
func (s *session) cfg() *configSet { return s.snap.Load() }

// refresh loads the project's configurations again if any changed since the session loaded
// them: called after reading observations and before evaluating them, so that every
// configuration committed before an observation was queued is seen.
func (s *session) refresh(ctx context.Context) error {
	v, err := s.e.store.ConfigVersion(ctx, s.project.ID)
	if err != nil || v == s.cfg().version {
		return err
	}
	cs, err := s.e.loadConfigs(ctx, s.project.ID)
	if err != nil {
		return err
	}
	s.snap.Store(cs)
	return nil
}

// loadConfigs reads what a session of project groupID evaluates and delivers with. The
// version is read first: a write after it makes the next refresh load again.
func (e *Engine) loadConfigs(ctx context.Context, groupID string) (*configSet, error) {
	version, err := e.store.ConfigVersion(ctx, groupID)
	if err != nil {
		return nil, err
	}
	p, err := e.store.Project(ctx, groupID)
	if err != nil {
		return nil, err
	}
	org, err := e.orgName(ctx, p.OrgID)
	if err != nil {
		return nil, err
	}
	s := &configSet{version: version, project: p, org: org, configs: map[string]herald.AlertRule{}, global: map[string]bool{},
		byType: map[string][]string{}, integ: map[string]*herald.Integration{}, fingerprints: map[string][]string{}}
	for off := 0; ; off += 500 {
		cs, _, err := e.store.AlertConfigs(ctx, groupID, store.Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			s.add(c.ID, c.AlertRule, false)
		}
		if len(cs) < 500 {
			break
		}
	}
	for off := 0; ; off += 500 {
		cs, _, err := e.store.GlobalAlertConfigs(ctx, store.Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if c.AppliesTo(p) {
				s.add(c.ID, c.AlertRule, true)
			}
		}
		if len(cs) < 500 {
			break
		}
	}
	if s.windows, err = e.windows(ctx, groupID); err != nil {
		return nil, err
	}
	integrations, err := e.store.Integrations(ctx, groupID)
	if err != nil {
		return nil, err
	}
	for i := range integrations {
		s.integ[integrations[i].Type] = &integrations[i]
	}
	return s, nil
}

// orgName is the name of organization id; "" when it is gone.
func (e *Engine) orgName(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	o, err := e.store.Org(ctx, id)
	if herald.IsNotFound(err) {
		return "", nil
	}
	return o.Name, err
}

// windows reads every maintenance window of project groupID that has not ended, a page at a
// time: one in effect may end after hundreds of others (scheduled ones, silences).
func (e *Engine) windows(ctx context.Context, groupID string) ([]herald.MaintenanceWindow, error) {
	now := e.Clock.Now()
	var out []herald.MaintenanceWindow
	for off := 0; ; off += 500 {
		ws, _, err := e.store.Windows(ctx, groupID, now, store.Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
		if len(ws) < 500 {
			return out, nil
		}
	}
}

// rule is configuration id's rule, nil when there is none.
func (s *configSet) rule(id string) *herald.AlertRule {
	if r, ok := s.configs[id]; ok {
		return &r
	}
	return nil
}

func (s *configSet) add(id string, rule herald.AlertRule, global bool) {
	s.configs[id], s.global[id], s.fingerprints[id] = rule, global, fingerprints(rule)
	if rule.Enabled {
		s.byType[rule.EventTypeName] = append(s.byType[rule.EventTypeName], id)
	}
}

// silenced reports whether a maintenance window of the project silences alert a now: by its
// event type's category, or (a window with matchers, a silence) by its labels.
func (s *session) silenced(a herald.Alert, now time.Time) bool {
	return silencedBy(s.cfg().windows, a, now)
}

// silencedBy reports whether one of windows silences alert a now.
func silencedBy(windows []herald.MaintenanceWindow, a herald.Alert, now time.Time) bool {
	info, ok := herald.LookupEventType(a.EventTypeName)
	if !ok {
		return false
	}
	for _, w := range windows {
		if w.SilencesAlert(info.Category, a.Labels, now) {
			return true
		}
	}
	return false
}

// alive says whether the session may go on: its lease held (the heartbeat ends the context
// when it is lost) and its task not cancelled.
func alive(ctx context.Context) error { return context.Cause(ctx) }

// run evaluates waiting observations and due alerts until there is nothing left to do now.
// While alerts keep coming due a few milliseconds apart, it waits for the next one in the
// session (for up to sessionHold): a new session would first wait for the last one's
// deliveries, so each alert would wait for a whole session's round; the session's sender
// delivers one step while the next is evaluated. With nothing left to do it waits for its
// deliveries under way (it must before giving the lease back), taking any work queued
// meanwhile at once.
func (s *session) run(ctx context.Context) error {
	started := time.Now()
	for {
		if err := alive(ctx); err != nil {
			return err
		}
		// What is due goes first: its time has come, while a waiting batch may take tens of
		// milliseconds to evaluate.
		due, err := s.due(ctx)
		if err != nil {
			return err
		}
		observed, err := s.observe(ctx)
		if err != nil {
			return err
		}
		if observed || due {
			continue
		}
		next, _, err := s.e.store.ProjectNextDue(ctx, s.project.ID)
		if err != nil {
			return err
		}
		if wait := time.Until(next); !next.IsZero() && wait <= holdWithin && time.Since(started)+wait <= sessionHold {
			select {
			case <-ctx.Done():
				return alive(ctx)
			case <-s.e.stopping:
				return nil
			case <-s.kicked: // observations queued meanwhile do not wait for the due time
			case <-time.After(wait):
			}
			continue
		}
		if !s.kickedWhileSending(ctx) {
			return nil
		}
	}
}

// kickedWhileSending waits while the session's sender has deliveries under way (the session
// gives the lease back only after them), unless work is queued for the project meanwhile:
// then it says so, and the session takes the work at once rather than after the deliveries.
func (s *session) kickedWhileSending(ctx context.Context) bool {
	for s.sending.Load() > 0 {
		select {
		case <-s.kicked:
			return true
		case <-s.settled:
		case <-ctx.Done():
			return false
		case <-s.e.stopping:
			return false
		}
	}
	return false
}

func (s *session) scopes() []store.Scope {
	return []store.Scope{{GroupID: s.project.ID}, {GroupID: s.project.ID, Global: true}}
}

// event is an audit event the engine records about an alert: herald.NewEvent's, by no one (a
// test compares them), without the raw record NewEvent makes for a principal's events, which
// the engine never reads.
func (s *session) event(typ string, a herald.Alert, now time.Time) herald.Event {
	ev := herald.Event{ID: herald.NewID(now), Created: herald.At(now), EventTypeName: typ, GroupID: a.GroupID}
	ev.AlertID, ev.AlertConfigID = a.ID, a.AlertConfigID
	ev.HostID, ev.ReplicaSetName, ev.ClusterID, ev.ClusterName = a.HostID, a.ReplicaSetName, a.ClusterID, a.ClusterName
	ev.MetricName, ev.CurrentValue = a.MetricName, a.CurrentValue
	// The raw record of an engine event says only what the fields do not (the status the alert
	// went to; no actor means the engine): one is written per alert opened or closed, and
	// 100,000 open alerts must stay small.
	ev.Raw = map[string]any{"status": a.Status}
	return ev
}

// stepEvents are the audit events of a lifecycle step.
func (s *session) stepEvents(st herald.Step, now time.Time) []herald.Event {
	var evs []herald.Event
	a := st.Alert
	if st.Opened || st.Closed || st.Cancelled {
		evs = append(evs, s.event(herald.AlertEventType(a), a, now))
	}
	if st.Unacknowledged {
		evs = append(evs, s.event(herald.EventAlertUnacknowledged, a, now))
	}
	return evs
}

func decodeProjectTask(b []byte) (projectTask, error) {
	var t projectTask
	if err := decodeJSON(b, &t); err != nil || t.GroupID == "" {
		return t, fmt.Errorf("dispatch: bad task payload %q", b)
	}
	return t, nil
}

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }
