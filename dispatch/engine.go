package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Engine evaluates observations and due alerts, one project session at a time.
type Engine struct {
	store      *store.Store
	dispatcher *Dispatcher
	notifiers  map[string]channels.Notifier
	minute     time.Duration
	clock      herald.Clock
	log        *zap.Logger
	token      string // this engine's name in project leases
}

// Settings of the engine's timing and batching.
const (
	leaseTTL        = 30 * time.Second // a project session's lease; renewed while it works
	claimLease      = 30 * time.Second // how long a claimed due alert is this engine's
	claimBatch      = 2000             // due alerts per step
	observeBatches  = 8                // observation batches per step
	sessionMax      = 10 * time.Second // a session then hands over to a new tick
	lockWait        = 5 * time.Second  // how long a task waits for a busy project
	soonEnough      = 1100 * time.Millisecond
	deliverParallel = 64
)

// NewEngine builds an engine. notifiers maps a notification typeName to its sender; kinds
// without one are skipped (and logged).
func NewEngine(st *store.Store, d *Dispatcher, notifiers map[string]channels.Notifier, minute time.Duration, clock herald.Clock, log *zap.Logger) *Engine {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Engine{store: st, dispatcher: d, notifiers: notifiers, minute: minute, clock: clock, log: log, token: hex.EncodeToString(b)}
}

// errBusy: another engine holds the project; the task is retried shortly.
var errBusy = errors.New("dispatch: project busy")

// session is one engine's turn at a project: what it loaded once and uses throughout.
type session struct {
	e       *Engine
	project herald.Project
	lock    *store.ProjectLock
	configs map[string]herald.AlertRule // project and global configurations by id
	global  map[string]bool             // which of them are global
	byType  map[string][]string         // enabled configuration ids by event type
	windows []herald.MaintenanceWindow
	integ   map[string]*herald.Integration
	started time.Time
	notices []notice
}

// runProject runs fn in a session of project groupID, waiting a while for a busy one, then
// makes sure the project's next due alert has a tick.
func (e *Engine) runProject(ctx context.Context, groupID string, fn func(*session) error) error {
	var lock *store.ProjectLock
	for deadline := time.Now().Add(lockWait); ; {
		l, ok, err := e.store.LockProject(ctx, groupID, e.token, leaseTTL)
		if err != nil {
			return err
		}
		if ok {
			lock = l
			break
		}
		if time.Now().After(deadline) {
			return errBusy
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	defer func() {
		if err := lock.Unlock(context.WithoutCancel(ctx)); err != nil {
			e.log.Warn("releasing project lease", zap.String("groupId", groupID), zap.Error(err))
		}
	}()
	s, err := e.newSession(ctx, groupID, lock)
	if err != nil {
		if herald.IsNotFound(err) {
			e.log.Warn("work for a project that does not exist", zap.String("groupId", groupID))
			return nil
		}
		return err
	}
	if err := fn(s); err != nil {
		return err
	}
	return e.scheduleNext(ctx, groupID)
}

// scheduleNext makes sure a tick runs when the project's next alert is due.
func (e *Engine) scheduleNext(ctx context.Context, groupID string) error {
	var next time.Time
	for _, sc := range []store.Scope{{GroupID: groupID}, {GroupID: groupID, Global: true}} {
		at, ok, err := e.store.NextDue(ctx, sc)
		if err != nil {
			return err
		}
		if ok && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if next.IsZero() {
		return nil
	}
	return e.dispatcher.WakeAt(ctx, groupID, next)
}

func (e *Engine) newSession(ctx context.Context, groupID string, lock *store.ProjectLock) (*session, error) {
	p, err := e.store.Project(ctx, groupID)
	if err != nil {
		return nil, err
	}
	s := &session{e: e, project: p, lock: lock, configs: map[string]herald.AlertRule{}, global: map[string]bool{},
		byType: map[string][]string{}, integ: map[string]*herald.Integration{}, started: time.Now()}
	for off := 0; ; off += 500 {
		cs, _, err := e.store.AlertConfigs(ctx, groupID, store.Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			s.addConfig(c.ID, c.AlertRule, false)
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
				s.addConfig(c.ID, c.AlertRule, true)
			}
		}
		if len(cs) < 500 {
			break
		}
	}
	if s.windows, _, err = e.store.Windows(ctx, groupID, e.clock.Now(), store.Page{Limit: 500}); err != nil {
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

func (s *session) addConfig(id string, rule herald.AlertRule, global bool) {
	s.configs[id], s.global[id] = rule, global
	if rule.Enabled {
		s.byType[rule.EventTypeName] = append(s.byType[rule.EventTypeName], id)
	}
}

// silenced reports whether a maintenance window of the project silences an alert of eventType now.
func (s *session) silenced(eventType string, now time.Time) bool {
	info, ok := herald.LookupEventType(eventType)
	if !ok {
		return false
	}
	for _, w := range s.windows {
		if w.Silences(info.Category, now) {
			return true
		}
	}
	return false
}

// keepAlive renews the lease when half of it is gone.
func (s *session) keepAlive(ctx context.Context) error {
	if time.Until(s.lock.Expires) > leaseTTL/2 {
		return nil
	}
	return s.lock.Extend(ctx, leaseTTL)
}

// run is a whole session: evaluate waiting observations and due alerts until there is
// nothing left to do now or soon, for at most sessionMax.
func (s *session) run(ctx context.Context) error {
	for {
		if err := s.keepAlive(ctx); err != nil {
			return err
		}
		observed, err := s.observe(ctx)
		if err != nil {
			return err
		}
		due, err := s.due(ctx)
		if err != nil {
			return err
		}
		if observed || due {
			continue
		}
		// Nothing to do now. Something due within about a second is waited for here: its tick
		// would be this very task (same second), and asynq may have started it early.
		next, soon, err := s.nextWithin(ctx, soonEnough)
		if err != nil || !soon || time.Since(s.started) > sessionMax {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(next)):
		}
	}
}

func (s *session) nextWithin(ctx context.Context, d time.Duration) (time.Time, bool, error) {
	var next time.Time
	for _, sc := range s.scopes() {
		at, ok, err := s.e.store.NextDue(ctx, sc)
		if err != nil {
			return next, false, err
		}
		if ok && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next, !next.IsZero() && time.Until(next) <= d, nil
}

func (s *session) scopes() []store.Scope {
	return []store.Scope{{GroupID: s.project.ID}, {GroupID: s.project.ID, Global: true}}
}

// event is an audit event the engine records about an alert.
func (s *session) event(typ string, a herald.Alert, now time.Time, global bool) herald.Event {
	sc := herald.Scope{GroupID: a.GroupID}
	if global {
		sc = herald.Scope{}
	}
	ev := herald.NewEvent(typ, herald.Principal{}, sc, now)
	ev.GroupID = a.GroupID
	ev.AlertID, ev.AlertConfigID = a.ID, a.AlertConfigID
	ev.HostID, ev.ReplicaSetName, ev.ClusterID, ev.ClusterName = a.HostID, a.ReplicaSetName, a.ClusterID, a.ClusterName
	ev.MetricName, ev.CurrentValue = a.MetricName, a.CurrentValue
	ev.Raw["source"] = "ENGINE"
	ev.Raw["status"] = a.Status
	return ev
}

// stepEvents are the audit events of a lifecycle step.
func (s *session) stepEvents(st herald.Step, now time.Time, global bool) []herald.Event {
	var evs []herald.Event
	a := st.Alert
	if st.Opened || st.Closed || st.Cancelled {
		evs = append(evs, s.event(a.EventTypeName, a, now, global))
	}
	if st.Unacknowledged {
		evs = append(evs, s.event(herald.EventAlertUnacknowledged, a, now, global))
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
