package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
)

// periodic are the scheduler's own settings.
type periodic struct {
	ReconcileInterval time.Duration
	Retention         time.Duration
}

func (p *periodic) bind(s settings) {
	s.duration(&p.ReconcileInterval, "reconcile-interval", "HERALD_RECONCILE_INTERVAL", scheduler.DefaultReconcileInterval,
		"how often the scheduler repairs lost due times and makes sure waiting work gets a session")
	s.duration(&p.Retention, "retention", "HERALD_RETENTION", scheduler.DefaultRetention,
		"how long ended alerts, events, past maintenance windows, and hosts and disk partitions no observation reports are kept")
	s.check(p.validate)
}

// minReconcileInterval is the shortest HERALD_RECONCILE_INTERVAL: at 1ns the job scheduler
// spent itself on the reconciliation (gocron: "scheduler unreachable"), and stopping took 30 s.
const minReconcileInterval = 100 * time.Millisecond

func (p *periodic) validate() error {
	if p.ReconcileInterval <= 0 {
		return fmt.Errorf("HERALD_RECONCILE_INTERVAL must be positive, not %s", p.ReconcileInterval)
	}
	if p.ReconcileInterval < minReconcileInterval {
		return fmt.Errorf("HERALD_RECONCILE_INTERVAL must be %s or more, not %s: each run reads every project's schedule", minReconcileInterval, p.ReconcileInterval)
	}
	if p.Retention <= 0 {
		return fmt.Errorf("HERALD_RETENTION must be positive, not %s", p.Retention)
	}
	return nil
}

// startScheduler starts the periodic jobs on st.
func startScheduler(st *store.Store, d *dispatch.Dispatcher, p periodic, log *zap.Logger) (*scheduler.Scheduler, error) {
	sch := scheduler.New(st, d, scheduler.Config{ReconcileInterval: p.ReconcileInterval, Retention: p.Retention,
		ObserveRun: processMetrics().SchedulerRun, Clock: herald.SystemClock{}, Log: log.Named("scheduler")})
	return sch, sch.Start()
}

// runScheduler runs the periodic work on a real Redis until ctx ends, then lets the runs under
// way finish. Several may run; one leads.
func runScheduler(ctx context.Context, args []string, out, errOut io.Writer) error {
	var c common
	var p periodic
	var metricsListen string
	s := newSettings("scheduler", "periodic work: repairs the alert engine's schedule, deletes old data", out)
	c.bindBase(s)
	p.bind(s)
	bindMetricsListen(s, &metricsListen, schedulerMetricsListen)
	if err := s.parse(args); err != nil {
		return err
	}
	rt, err := startRuntime(ctx, "scheduler", c, errOut)
	if err != nil {
		return err
	}
	defer rt.close()
	log, st, d := rt.log, rt.store, rt.queue
	health := newHealthServer(metricsListen, st, processMetrics().Handler(clusterMetrics(st, log)), log)
	if err := health.Start(); err != nil {
		return err
	}
	defer health.Shutdown()
	sch, err := startScheduler(st, d, p, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down: finishing the runs under way")
	sch.Shutdown()
	return nil
}
