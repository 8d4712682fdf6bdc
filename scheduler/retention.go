package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/store"
)

// RetentionReport counts what one retention run deleted.
type RetentionReport struct {
	Alerts  int // closed and cancelled alerts, project and global
	Events  int // events of projects, organizations and the platform
	Windows int // maintenance windows
	Hosts   int // hosts no observation named within the retention (with their partitions)
	Capped  int // scopes that had more to delete than one run's batch: the next run goes on
	Failed  int // scopes the run could not finish; each is logged
}

func (r RetentionReport) counts() map[string]int {
	return map[string]int{"alerts": r.Alerts, "events": r.Events, "windows": r.Windows, "hosts": r.Hosts, "capped": r.Capped, "failed": r.Failed}
}

func (r *RetentionReport) add(o RetentionReport) {
	r.Alerts += o.Alerts
	r.Events += o.Events
	r.Windows += o.Windows
	r.Hosts += o.Hosts
	r.Capped += o.Capped
	r.Failed += o.Failed
}

// Retain deletes what is older than the retention: ended alerts, events, maintenance windows
// that ended, and hosts and disk partitions no observation reported since, of every project,
// organization and the platform, at most
// cfg.RetentionBatch of each kind per scope. Failures are logged and counted and the run goes
// on; the error is about the run as a whole.
func (s *Scheduler) Retain(ctx context.Context) (RetentionReport, error) {
	cutoff := s.cfg.Clock.Now().Add(-s.cfg.Retention)
	var r RetentionReport

	// The platform's: global alerts and events.
	r.add(s.purge(ctx, "global alerts", "", func(ctx context.Context, limit int) (int, bool, error) {
		return s.store.PurgeAlerts(ctx, true, "", cutoff, limit)
	}, func(r *RetentionReport, n int) { r.Alerts += n }))
	r.add(s.purge(ctx, "global events", "", func(ctx context.Context, limit int) (int, bool, error) {
		return s.store.PurgeEvents(ctx, store.EventScope{}, cutoff, limit)
	}, func(r *RetentionReport, n int) { r.Events += n }))

	// Each organization's events.
	const page = 500
	for off := 0; ctx.Err() == nil; off += page {
		ids, err := s.store.OrgIDs(ctx, store.Page{Offset: off, Limit: page})
		if err != nil {
			return r, fmt.Errorf("listing organizations: %w", err)
		}
		for _, id := range ids {
			r.add(s.purge(ctx, "organization events", id, func(ctx context.Context, limit int) (int, bool, error) {
				return s.store.PurgeEvents(ctx, store.EventScope{OrgID: id}, cutoff, limit)
			}, func(r *RetentionReport, n int) { r.Events += n }))
		}
		if len(ids) < page {
			break
		}
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}

	// Each project's alerts, events, windows and hosts.
	var mu sync.Mutex
	err := s.eachProject(ctx, func(ctx context.Context, gid string) {
		var p RetentionReport
		p.add(s.purge(ctx, "alerts", gid, func(ctx context.Context, limit int) (int, bool, error) {
			return s.store.PurgeAlerts(ctx, false, gid, cutoff, limit)
		}, func(r *RetentionReport, n int) { r.Alerts += n }))
		p.add(s.purge(ctx, "events", gid, func(ctx context.Context, limit int) (int, bool, error) {
			return s.store.PurgeEvents(ctx, store.EventScope{GroupID: gid}, cutoff, limit)
		}, func(r *RetentionReport, n int) { r.Events += n }))
		p.add(s.purge(ctx, "maintenance windows", gid, func(ctx context.Context, limit int) (int, bool, error) {
			return s.store.PurgeWindows(ctx, gid, cutoff, limit)
		}, func(r *RetentionReport, n int) { r.Windows += n }))
		p.add(s.purge(ctx, "hosts", gid, func(ctx context.Context, limit int) (int, bool, error) {
			return s.store.PurgeHosts(ctx, gid, cutoff, limit)
		}, func(r *RetentionReport, n int) { r.Hosts += n }))
		mu.Lock()
		r.add(p)
		mu.Unlock()
	})
	return r, err
}

// purge runs one bounded deletion of kind in scope (an id, "" for the platform) and reports it.
func (s *Scheduler) purge(ctx context.Context, kind, scope string, del func(context.Context, int) (int, bool, error),
	count func(*RetentionReport, int)) RetentionReport {
	var r RetentionReport
	started := time.Now()
	n, more, err := del(ctx, s.cfg.RetentionBatch)
	count(&r, n)
	if more {
		r.Capped++
	}
	if err != nil && ctx.Err() == nil {
		r.Failed++
		s.cfg.Log.Error("retention", zap.String("kind", kind), zap.String("scope", scope), zap.Error(err))
	} else if n > 0 {
		s.cfg.Log.Debug("retention", zap.String("kind", kind), zap.String("scope", scope), zap.Int("deleted", n),
			zap.Bool("more", more), zap.Duration("took", time.Since(started)))
	}
	return r
}
