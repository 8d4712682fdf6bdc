package dispatch

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/obsjson"
	"github.com/heraldhq/herald/store"
)

// observe evaluates the project's oldest waiting observation batches, in order. Each batch is
// committed (and its notices sent) before it leaves the queue, so a worker that dies midway
// leaves it to be evaluated again, which changes nothing twice.
func (s *session) observe(ctx context.Context) (bool, error) {
	batches, err := s.e.store.PendingObservations(ctx, s.project.ID, observeBatches)
	if err != nil || len(batches) == 0 {
		return false, err
	}
	// Read after the batches: every configuration committed before they were queued is seen.
	if err := s.refresh(ctx); err != nil {
		return false, err
	}
	decoded := decodeBatches(batches)
	for i, b := range batches {
		if i > 0 {
			// What came due while the last batch was evaluated goes first: a batch takes tens
			// of milliseconds, and a first notice must not wait behind a run of them.
			if _, err := s.due(ctx); err != nil {
				return true, err
			}
		}
		if d := decoded[i]; d.err != nil {
			// The API validated it: a batch this worker cannot read is damaged, or a newer
			// API's (a rollback, or workers upgraded after the APIs). Its sender was told it
			// was accepted, so it is kept, out of the way of the project's next batches.
			if err := s.retrying(ctx, "setting a batch aside", func() error { return s.lock.SetObservationsAside(ctx, s.project.ID, b) }); err != nil {
				return true, err
			}
			s.e.Observer.EngineError(ErrObservationsSetAside, 1)
			s.e.Log.Error("a batch of observations this worker cannot read was set aside, not evaluated: a newer version's, or damaged",
				zap.String("groupId", s.project.ID), zap.Int("bytes", len(b)), zap.Error(d.err))
		} else if err := s.evaluate(ctx, d.obs); err != nil {
			return true, err
		} else if err := s.retrying(ctx, "removing an evaluated batch", func() error { return s.lock.DropObservation(ctx, s.project.ID, b) }); err != nil {
			// Not removed, the batch is evaluated again by the project's next session: its
			// steps were committed, and one that clears and reports a condition again would
			// close the alert it opened and open a third.
			return true, err
		}
		if err := alive(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// decodedBatch is a waiting batch decoded, or why it could not be.
type decodedBatch struct {
	obs []herald.Observation
	err error
}

// decodeBatches decodes batches side by side, in their order: decoding is most of a batch's
// work, and a project's batches are otherwise evaluated one after another.
func decodeBatches(batches [][]byte) []decodedBatch {
	out := make([]decodedBatch, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() { out[i].obs, out[i].err = obsjson.Decode(b) })
	}
	wg.Wait()
	return out
}

// finding is one observation about one configuration's target.
type finding struct {
	obs     herald.Observation
	config  string
	target  string
	holds   bool
	at      time.Time
	expires time.Time // when the alert closes unless reported again (a Prometheus alert); zero: never
}

// evaluate applies a batch: each observation is matched against every enabled configuration
// of its type; per configuration and target, a holding condition opens an alert (or refreshes
// the open one) and a cleared one closes it, in the order reported. A firing Prometheus alert
// that no configuration takes is kept as unrouted (listed by the front door until it ends); a
// resolved one is forgotten there.
func (s *session) evaluate(ctx context.Context, obs []herald.Observation) error {
	now := s.e.Clock.Now()
	byScope := map[bool][]finding{}
	var unrouted []store.UnroutedChange
	cfg := s.cfg()
	for _, o := range obs {
		typ := o.EventTypeName
		if o.IsMeasurement() {
			typ = "OUTSIDE_METRIC_THRESHOLD"
		}
		at := now
		if o.At != nil && o.At.Before(now) {
			at = o.At.Time
		}
		target := ""
		for _, id := range cfg.byType[typ] {
			rule := cfg.configs[id]
			if !rule.Matches(o) {
				continue
			}
			if target == "" {
				target = store.TargetID(o.TargetKey())
			}
			byScope[cfg.global[id]] = append(byScope[cfg.global[id]], finding{obs: o, config: id, target: target,
				holds: rule.Holds(o) && o.FiringAt(now), at: at, expires: o.ExpiresAt(now)})
		}
		if o.IsPrometheus() {
			firing := o.Active != nil && *o.Active && o.FiringAt(now)
			switch {
			case firing && target == "":
				u := herald.UnroutedOf(o, now)
				unrouted = append(unrouted, store.UnroutedChange{Target: store.TargetID(o.TargetKey()), Alert: &u})
			case !firing:
				if target == "" {
					target = store.TargetID(o.TargetKey())
				}
				unrouted = append(unrouted, store.UnroutedChange{Target: target})
			}
		}
	}
	for _, global := range []bool{false, true} {
		idle := s.sending.Load() == 0
		for fs, step := byScope[global], 0; len(fs) > 0; step++ {
			n := applyChunk(len(fs), step, idle)
			if err := s.apply(ctx, store.Scope{GroupID: s.project.ID, Global: global}, fs[:n], now); err != nil {
				return err
			}
			fs = fs[n:]
		}
	}
	return s.keepUnrouted(ctx, unrouted, now)
}

// keepUnrouted applies a batch's changes to the project's unrouted Prometheus alerts. Applied
// again (the batch evaluated again), they change nothing more.
func (s *session) keepUnrouted(ctx context.Context, changes []store.UnroutedChange, now time.Time) error {
	refused, err := s.lock.UpdateUnrouted(ctx, s.project.ID, changes, now)
	if err != nil {
		return err
	}
	if refused > 0 {
		s.e.Log.Warn("Prometheus alerts that no configuration takes were not kept: the project holds the most it keeps",
			zap.String("groupId", s.project.ID), zap.Int("alerts", refused), zap.Int("max", herald.MaxUnroutedAlerts))
	}
	return nil
}

// idleChunk is how many findings of a batch the session commits first when its sender has
// nothing to send: a small first step gets notices on their way sooner, and the rest of the
// batch commits while they are delivered.
const idleChunk = 64

// applyChunk is how many of the n findings of a scope still to commit the session commits in
// step (0, 1, ...) of a batch. A batch that came while the sender was idle (startedIdle) is
// committed in steps that double from idleChunk, the last taking what is left once that is
// no more than half as much again (500: 64, 128, 308), so that the sender has notices to
// send from the first few milliseconds and more by the time it is done with them. Any other
// batch is one step: one that changes alerts without
// notices, as measurements refreshing open alerts do, costs one commit, not one per step.
// Committing a batch in steps, in order, ends as committing it whole: each step sees what
// the ones before it committed, and a worker that dies midway leaves the batch queued, to be
// evaluated again, which changes nothing twice.
func applyChunk(n, step int, startedIdle bool) int {
	if !startedIdle || step >= 8 { // 64 << 8 is past any batch's size
		return n
	}
	if size := idleChunk << step; n > size+size/2 {
		return size
	}
	return n
}

// apply commits the findings of one scope and sends the notices they make.
func (s *session) apply(ctx context.Context, sc store.Scope, fs []finding, now time.Time) error {
	fs, err := s.renew(ctx, sc, fs)
	if err != nil || len(fs) == 0 {
		return err
	}
	type pair = [2]string
	var pairs []pair
	seen := make(map[pair]bool, len(fs))
	for _, f := range fs {
		if p := (pair{f.config, f.target}); !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	openIDs, err := s.e.store.OpenAlertIDs(ctx, sc, pairs)
	if err != nil {
		return err
	}
	open := map[pair]string{}
	for i, id := range openIDs {
		if id != "" {
			open[pairs[i]] = id
		}
	}
	if fs = changing(fs, open); len(fs) == 0 {
		return nil
	}
	var ids []string
	for _, f := range fs {
		p := pair{f.config, f.target}
		if id := open[p]; id != "" {
			ids = append(ids, id)
			delete(open, p)
		}
	}
	alerts := make(map[string]herald.Alert, len(fs))
	d := newDecided(len(fs))
	_, err = s.lock.Transact(ctx, sc, ids, func(loaded []store.Tracked) ([]store.Change, error) {
		clear(alerts)
		d.reset()
		current := make(map[pair]*store.Change, len(fs))
		var order []*store.Change
		for _, t := range loaded {
			// Untouched (or only refreshed by a re-report), an alert keeps its due time.
			c := &store.Change{Tracked: t, PrevStatus: t.Alert.Status, Wake: herald.Wake(t.Alert, t.Schedule)}
			current[pair{t.Alert.AlertConfigID, t.Target}] = c
			order = append(order, c)
		}
		for _, f := range fs {
			p := pair{f.config, f.target}
			c := current[p]
			active := c != nil && herald.Active(c.Tracked.Alert.Status)
			rule := s.cfg().configs[f.config]
			switch {
			case f.holds && active:
				c.Tracked.Alert = herald.Refresh(c.Tracked.Alert, f.obs, now)
				if !f.expires.IsZero() {
					c.Tracked.Schedule.Expires = f.expires
					c.Wake = herald.Wake(c.Tracked.Alert, c.Tracked.Schedule)
				}
			case f.holds:
				a, sched := herald.NewAlert(herald.NewID(now), s.project.ID, f.config, rule, f.obs, s.e.Minute, f.at)
				sched.Expires = f.expires
				c = &store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: f.target, Scope: sc}}
				current[p] = c
				order = append(order, c)
				s.step(&d, c, sc, herald.Advance(a, sched, rule, s.silenced(a, now), s.e.Minute, now), now)
			case active:
				s.step(&d, c, sc, herald.Clear(c.Tracked.Alert, c.Tracked.Schedule, s.silenced(c.Tracked.Alert, now), now), now)
			}
		}
		changes := make([]store.Change, 0, len(order))
		for _, c := range order {
			c.OutboxUntil = now.Add(s.e.Lease)
			changes = append(changes, *c)
			alerts[c.Tracked.Alert.ID] = c.Tracked.Alert
		}
		return changes, nil
	})
	if err != nil {
		return err
	}
	s.e.stepLines(sc, d.steps)
	s.send(ctx, sc, alerts, d)
	return nil
}

// changing drops the findings that change nothing, in their order: those of a configuration
// and target with no open alert that all clear (nothing to close), and those of one with an
// open alert (open, by configuration and target) that all re-report its condition with
// nothing to refresh. Agents re-report every host every few seconds; most reports are these.
func changing(fs []finding, open map[[2]string]string) []finding {
	type pair = [2]string
	moves := make(map[pair]bool, len(fs))
	for _, f := range fs {
		p := pair{f.config, f.target}
		if open[p] == "" {
			moves[p] = moves[p] || f.holds
		} else {
			moves[p] = moves[p] || !f.holds || !f.expires.IsZero() || !herald.RefreshesNothing(f.obs)
		}
	}
	var out []finding
	for _, f := range fs {
		if moves[pair{f.config, f.target}] {
			out = append(out, f)
		}
	}
	return out
}

// renew applies the findings that only renew an active alert's expiry (a Prometheus alert
// re-sent while firing, with the annotations it has) in one store call that reads no alert,
// and returns the others, in their order. A configuration and target with any other finding
// in the batch (a clear, a first report) goes the usual way whole, so that its findings apply
// in the order reported.
func (s *session) renew(ctx context.Context, sc store.Scope, fs []finding) ([]finding, error) {
	type pair = [2]string
	last := make(map[pair]int, len(fs)) // pair -> index of its last finding, -1 when the pair cannot be renewed
	var order []pair
	for i, f := range fs {
		p := pair{f.config, f.target}
		j, seen := last[p]
		switch {
		case !seen:
			order = append(order, p)
			fallthrough
		case j >= 0:
			last[p] = i
			if !f.holds || f.expires.IsZero() {
				last[p] = -1
			}
		}
	}
	var rs []store.Renewal
	var rp []pair
	for _, p := range order {
		if i := last[p]; i >= 0 {
			f := fs[i]
			rs = append(rs, store.Renewal{ConfigID: f.config, Target: f.target, Expires: f.expires, Digest: f.obs.RefreshDigest()})
			rp = append(rp, p)
		}
	}
	if len(rs) == 0 {
		return fs, nil
	}
	done, err := s.lock.RenewExpiring(ctx, sc, rs)
	if err != nil {
		return nil, err
	}
	renewed := map[pair]bool{}
	for i, ok := range done {
		if ok {
			renewed[rp[i]] = true
		}
	}
	if len(renewed) == 0 {
		return fs, nil
	}
	rest := fs[:0:0]
	for _, f := range fs {
		if !renewed[pair{f.config, f.target}] {
			rest = append(rest, f)
		}
	}
	return rest, nil
}

// decided is what a commit's decisions made besides the changes: the steps, to be logged once
// committed, and the notices, to be sent once committed (each as the outbox holds it and
// decoded, so that the sender need not decode what the session just encoded).
type decided struct {
	steps   []herald.Step
	notices []notice
	raw     [][]byte // notices[i] encoded
}

// newDecided has room for the steps and notices of n alerts (most steps make one notice).
func newDecided(n int) decided {
	return decided{steps: make([]herald.Step, 0, n), notices: make([]notice, 0, n), raw: make([][]byte, 0, n)}
}

// reset empties d for another try of a commit.
func (d *decided) reset() { d.steps, d.notices, d.raw = d.steps[:0], d.notices[:0], d.raw[:0] }

// step records lifecycle step st in change c (the new state, when to wake, its events and
// notices) and in d.
func (s *session) step(d *decided, c *store.Change, sc store.Scope, st herald.Step, now time.Time) {
	c.Tracked.Alert, c.Tracked.Schedule, c.Wake = st.Alert, st.Schedule, st.Wake
	c.Events = append(c.Events, s.stepEvents(st, now)...)
	for _, n := range stepNotices(sc, st, s.cfg().fingerprints[st.Alert.AlertConfigID]) {
		raw := n.encode()
		c.Notices = append(c.Notices, raw)
		d.notices, d.raw = append(d.notices, n), append(d.raw, raw)
	}
	d.steps = append(d.steps, st)
}

// due looks at every alert of the project that came due: opening, repeats, acknowledgement
// expiry, silencing; and at what a configuration change or deletion left behind. It claims
// and advances them in chunks (dueChunks), up to about claimBatch a scope before the session
// looks at waiting observations again.
func (s *session) due(ctx context.Context) (bool, error) {
	any := false
	refreshed := false
	for _, sc := range s.scopes() {
		for taken := 0; taken < claimBatch; {
			chunk := s.dueChunk.size()
			now := s.e.Clock.Now()
			claimed, err := s.lock.ClaimDue(ctx, sc, now, s.e.Lease, chunk)
			if err != nil {
				return any, err
			}
			s.dueChunk.claimed(len(claimed))
			if len(claimed) == 0 {
				break
			}
			any = true
			taken += len(claimed)
			if !refreshed { // once a pass: its chunks follow each other within milliseconds
				if err := s.refresh(ctx); err != nil {
					return any, err
				}
				refreshed = true
			}
			if err := s.advanceDue(ctx, sc, claimed, now); err != nil {
				return any, err
			}
			if len(claimed) < chunk {
				break // caught up
			}
		}
	}
	return any, nil
}

// dueChunks sizes a session's claims of due alerts. A claim's notices are on their way while
// the session commits the next claim's step (a commit takes about as long as the deliveries),
// so the first notices of a run go out after a small commit, not after the whole run's; the
// claims grow with the run (half of what it took so far), so that a large backlog goes in big
// steps. A claim that comes back short (caught up) ends the run.
type dueChunks struct{ taken int }

// firstDueChunk is the size of the first claims of a run of due alerts.
const firstDueChunk = 64

func (c *dueChunks) size() int { return min(max(c.taken/2, firstDueChunk), claimBatch) }

// claimed records that a claim of size() gave n alerts.
func (c *dueChunks) claimed(n int) {
	if n < c.size() {
		c.taken = 0
		return
	}
	c.taken += n
}

// advanceDue takes the claimed alerts of scope through their step as of now.
func (s *session) advanceDue(ctx context.Context, sc store.Scope, claimed []store.Due, now time.Time) error {
	ids := make([]string, len(claimed))
	for i, d := range claimed {
		ids[i] = d.AlertID
		s.e.Observer.Lateness(now.Sub(d.At))
	}
	return s.advance(ctx, sc, ids, now, func(t store.Tracked, rule herald.AlertRule, ok bool) herald.Step {
		// A configuration that is gone, disabled or edited (its notifications no longer
		// those the schedule counts) cancels what it opened.
		if !ok || !rule.Enabled || len(rule.Notifications) != len(t.Schedule.Next) {
			return herald.Cancel(t.Alert, t.Schedule, now)
		}
		return herald.Advance(t.Alert, t.Schedule, rule, s.silenced(t.Alert, now), s.e.Minute, now)
	})
}

// advance applies next to the tracked alerts ids of scope, commits, and sends the notices.
// Alerts that ended meanwhile leave the due set.
func (s *session) advance(ctx context.Context, sc store.Scope, ids []string, now time.Time, next func(t store.Tracked, rule herald.AlertRule, ok bool) herald.Step) error {
	alerts := make(map[string]herald.Alert, len(ids))
	d := newDecided(len(ids))
	var gone []string
	_, err := s.lock.Transact(ctx, sc, ids, func(loaded []store.Tracked) ([]store.Change, error) {
		clear(alerts)
		d.reset()
		gone = gone[:0]
		found := make(map[string]bool, len(ids))
		changes := make([]store.Change, 0, len(loaded))
		for _, t := range loaded {
			found[t.Alert.ID] = true
			rule, ok := s.cfg().configs[t.Alert.AlertConfigID]
			c := store.Change{Tracked: t, PrevStatus: t.Alert.Status, OutboxUntil: now.Add(s.e.Lease)}
			s.step(&d, &c, sc, next(t, rule, ok), now)
			changes = append(changes, c)
			alerts[t.Alert.ID] = c.Tracked.Alert
		}
		for _, id := range ids {
			if !found[id] {
				gone = append(gone, id)
			}
		}
		return changes, nil
	})
	if err != nil {
		return err
	}
	s.e.stepLines(sc, d.steps)
	if err := s.lock.ForgetDue(ctx, sc, gone...); err != nil {
		return err
	}
	s.send(ctx, sc, alerts, d)
	return nil
}

// cancelConfig cancels the active alerts of configuration configID (of scope) that were
// created before before: it was edited, disabled or deleted. A configuration disabled or
// deleted opens nothing, so all of its alerts go. An edited one keeps the alerts created
// since the edit, under the configuration as it is now, whenever their condition began. The
// server's clock decides (the alert id's second): an alert created in the edit's second is
// kept.
func (s *session) cancelConfig(ctx context.Context, sc store.Scope, configID string, before time.Time) error {
	if rule := s.cfg().rule(configID); rule == nil || !rule.Enabled {
		before = time.Unix(1<<40, 0)
	}
	for offset := 0; ; {
		var active []herald.Alert
		var err error
		page := store.Page{Offset: offset, Limit: claimBatch}
		if sc.Global {
			active, _, err = s.e.store.GlobalConfigAlertsOfProject(ctx, configID, sc.GroupID, page)
		} else {
			active, _, err = s.e.store.ConfigAlerts(ctx, sc.GroupID, configID, page)
		}
		if err != nil {
			return err
		}
		var ids []string
		for _, a := range active {
			if createdBefore(a.ID, before) {
				ids = append(ids, a.ID)
			} else {
				offset++ // kept: the next page starts after it
			}
		}
		if len(ids) > 0 {
			now := s.e.Clock.Now()
			if err := s.advance(ctx, sc, ids, now, func(t store.Tracked, rule herald.AlertRule, ok bool) herald.Step {
				return herald.Cancel(t.Alert, t.Schedule, now)
			}); err != nil {
				return err
			}
		}
		if len(active) < claimBatch {
			return nil
		}
	}
}

// createdBefore says whether the alert of id was created before t, by the id's second.
func createdBefore(id string, t time.Time) bool {
	created, ok := herald.IDTime(id)
	return ok && created.Unix() < t.Unix()
}
