package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ReconcileReport counts what one reconcile run did.
type ReconcileReport struct {
	Projects int // projects looked at
	Repaired int // active alerts put back in their due set (project and global)
	Kicked   int // projects given a session for observations or abandoned notices waiting
	Ticks    int // projects whose earliest due time was made sure of a tick
	Failed   int // projects (or the global pass) the run could not finish; each is logged
}

func (r ReconcileReport) counts() map[string]int {
	return map[string]int{"projects": r.Projects, "repaired": r.Repaired, "kicked": r.Kicked, "ticks": r.Ticks, "failed": r.Failed}
}

// Reconcile makes sure the engine will look at everything it should: it repairs lost due
// entries (global alerts in one pass, then each project's), kicks projects with work waiting
// and no task sure to come for it, and makes sure each project's earliest due time has its
// tick. A project that fails is logged and counted and the run goes on; the error is about
// the run as a whole (listing projects, or ctx ending).
func (s *Scheduler) Reconcile(ctx context.Context) (ReconcileReport, error) {
	now := s.cfg.Clock.Now()
	var r ReconcileReport
	global, err := s.store.RepairGlobalDue(ctx, now)
	for gid, n := range global {
		r.Repaired += n
		s.cfg.Log.Warn("put global alerts without a due time back in the schedule", zap.String("groupId", gid), zap.Int("alerts", n))
	}
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Failed++
		s.cfg.Log.Error("reconciling global alerts", zap.Error(err))
	}
	var mu sync.Mutex
	err = s.eachProject(ctx, func(ctx context.Context, gid string) {
		p, err := s.reconcileProject(ctx, gid, now)
		mu.Lock()
		defer mu.Unlock()
		r.Projects++
		r.Repaired += p.Repaired
		r.Kicked += p.Kicked
		r.Ticks += p.Ticks
		if err != nil && ctx.Err() == nil {
			r.Failed++
			s.cfg.Log.Error("reconciling a project", zap.String("groupId", gid), zap.Error(err))
		}
	})
	return r, err
}

// reconcileProject is one project's part of a run.
func (s *Scheduler) reconcileProject(ctx context.Context, gid string, now time.Time) (ReconcileReport, error) {
	var r ReconcileReport
	var errs []error
	n, err := s.store.RepairDue(ctx, gid, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("repairing due times: %w", err))
	}
	if n > 0 {
		r.Repaired = n
		s.cfg.Log.Warn("put alerts without a due time back in the schedule", zap.String("groupId", gid), zap.Int("alerts", n))
	}
	w, err := s.store.Waiting(ctx, gid, now)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("reading waiting work: %w", err))
	case w.Any():
		if err := s.engine.Kick(ctx, gid); err != nil {
			errs = append(errs, fmt.Errorf("kicking: %w", err))
		} else {
			r.Kicked = 1
			s.cfg.Log.Debug("kicked a project with work waiting", zap.String("groupId", gid),
				zap.Int64("observationBatches", w.Observations), zap.Int64("abandonedOutboxEntries", w.Outbox))
		}
	}
	if !w.OutboxClaimedUntil.IsZero() {
		// A sender holds notices: should it have died, a session takes them over as soon as its
		// claim runs out, not at a later run (a session that starts early waits in its task
		// for the claim's end).
		if err := s.engine.WakeAt(ctx, gid, w.OutboxClaimedUntil); err != nil {
			errs = append(errs, fmt.Errorf("scheduling a tick for claimed notices: %w", err))
		}
	}
	at, ok, err := s.store.ProjectNextDue(ctx, gid)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("reading the next due time: %w", err))
	case ok:
		if err := s.engine.WakeAt(ctx, gid, at); err != nil {
			errs = append(errs, fmt.Errorf("scheduling a tick: %w", err))
		} else {
			r.Ticks = 1
		}
	}
	return r, errors.Join(errs...)
}
