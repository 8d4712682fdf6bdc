package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Engine is what the scheduler asks of the alert engine; *dispatch.Dispatcher is one.
type Engine interface {
	// Kick queues a session of the project.
	Kick(ctx context.Context, groupID string) error
	// WakeAt makes sure a session of the project runs at at.
	WakeAt(ctx context.Context, groupID string, at time.Time) error
}

// Config is what a scheduler runs with; zero values take the defaults.
type Config struct {
	ReconcileInterval time.Duration // how often reconcile runs (default 5 s)
	RetentionInterval time.Duration // how often retention runs (default 1 h)
	Retention         time.Duration // how long ended alerts, events, past windows and unreported hosts and disks are kept (default 90 days)
	RetentionBatch    int           // deletions per scope and kind in one run (default 10000)
	Parallel          int           // projects worked on at once (default 8)
	Clock             herald.Clock
	Log               *zap.Logger
	// ObserveRun, when set, is told of each run as it ends (how late it started, how it
	// ended), for metrics.
	ObserveRun func(Run)
}

// Defaults of Config.
const (
	DefaultReconcileInterval = 5 * time.Second
	DefaultRetentionInterval = time.Hour
	DefaultRetention         = 90 * 24 * time.Hour
	DefaultRetentionBatch    = 10000
	DefaultParallel          = 8
	// LeaderLease is how long the leadership lasts unrenewed; the leader renews it, and a
	// standby asks for it, every third of it. A standby takes over at most LeaderLease plus a
	// third after the leader dies, and runs the jobs at once (about 8 s, never over 15 s).
	LeaderLease = 6 * time.Second
)

// The jobs, by name.
const (
	JobReconcile = "reconcile"
	JobRetention = "retention"
)

// Jobs are every job's name.
var Jobs = []string{JobReconcile, JobRetention}

// How a run ended (Run.Outcome).
const (
	RunOK = "ok"
	// RunFailed: the run's error, or a part of its work failed (its report's "failed"
	// count: a project it could not reconcile, a kind of data it could not purge); its log
	// line says what. The next run tries again.
	RunFailed = "failed"
	// RunInterrupted: the process was shutting down.
	RunInterrupted = "interrupted"
)

// RunOutcomes are every value of Run.Outcome.
var RunOutcomes = []string{RunOK, RunFailed, RunInterrupted}

// Run is what the scheduler knows about a job's last run, for logs and metrics.
type Run struct {
	Job       string
	Scheduled time.Time     // when the run was due to start
	Started   time.Time     // when it started
	Lateness  time.Duration // Started - Scheduled: how far behind its schedule it started
	Duration  time.Duration
	Counts    map[string]int // what it did (the job's report)
	Err       error
	Outcome   string // one of RunOutcomes
}

// Scheduler runs the periodic jobs in the background: Start, then Shutdown.
type Scheduler struct {
	cfg    Config
	store  *store.Store
	engine Engine
	token  string // this scheduler's name in the leadership lease
	cron   gocron.Scheduler

	jobs      []gocron.Job
	stopLead  chan struct{} // closed at shutdown: the leadership heartbeat stops
	leadDone  chan struct{} // closed when it has
	stopOnce  sync.Once
	mu        sync.Mutex
	scheduled map[string]time.Time // job -> when the run now starting was due
	last      map[string]Run
	leading   bool
}

// New builds a scheduler on st that asks e for sessions.
func New(st *store.Store, e Engine, cfg Config) *Scheduler {
	if cfg.ReconcileInterval <= 0 {
		cfg.ReconcileInterval = DefaultReconcileInterval
	}
	if cfg.RetentionInterval <= 0 {
		cfg.RetentionInterval = DefaultRetentionInterval
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.RetentionBatch <= 0 {
		cfg.RetentionBatch = DefaultRetentionBatch
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	if cfg.Clock == nil {
		cfg.Clock = herald.SystemClock{}
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Scheduler{cfg: cfg, store: st, engine: e, token: hex.EncodeToString(b),
		scheduled: map[string]time.Time{}, last: map[string]Run{}}
}

// Start runs the jobs in the background, each first at once.
func (s *Scheduler) Start() error {
	if s.cron != nil {
		return errors.New("scheduler: started twice")
	}
	cron, err := gocron.NewScheduler(
		gocron.WithLocation(time.UTC),
		gocron.WithLogger(gocronLogger{s.cfg.Log.Named("gocron").Sugar()}),
		gocron.WithSchedulerMonitor(monitor{s}),
		gocron.WithDistributedElector(elector{s}),
		gocron.WithStopTimeout(30*time.Second),
	)
	if err != nil {
		return err
	}
	jobs := []struct {
		name  string
		every time.Duration
		run   func(context.Context) (map[string]int, error)
	}{
		{JobReconcile, s.cfg.ReconcileInterval, func(ctx context.Context) (map[string]int, error) {
			r, err := s.Reconcile(ctx)
			return r.counts(), err
		}},
		{JobRetention, s.cfg.RetentionInterval, func(ctx context.Context) (map[string]int, error) {
			r, err := s.Retain(ctx)
			return r.counts(), err
		}},
	}
	for _, j := range jobs {
		job, err := cron.NewJob(gocron.DurationJob(j.every),
			gocron.NewTask(func(ctx context.Context) { s.record(ctx, j.name, j.run) }),
			gocron.WithName(j.name),
			gocron.WithSingletonMode(gocron.LimitModeReschedule),
			gocron.WithStartAt(gocron.WithStartImmediately()))
		if err != nil {
			_ = cron.Shutdown()
			return fmt.Errorf("scheduler: job %s: %w", j.name, err)
		}
		s.jobs = append(s.jobs, job)
	}
	s.cron = cron
	s.stopLead, s.leadDone = make(chan struct{}), make(chan struct{})
	cron.Start()
	go s.lead()
	s.cfg.Log.Info("scheduler started", zap.Duration("reconcileInterval", s.cfg.ReconcileInterval),
		zap.Duration("retentionInterval", s.cfg.RetentionInterval), zap.Duration("retention", s.cfg.Retention))
	return nil
}

// Shutdown stops scheduling, waits for the runs under way (their context is cancelled) and
// gives up the leadership so that another scheduler takes over at once. Calling it again does
// nothing.
func (s *Scheduler) Shutdown() {
	if s.cron == nil {
		return
	}
	s.stopOnce.Do(func() {
		close(s.stopLead)
		<-s.leadDone
		if err := s.cron.Shutdown(); err != nil {
			s.cfg.Log.Warn("scheduler shutdown", zap.Error(err))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.store.ResignScheduler(ctx, s.token); err != nil {
			s.cfg.Log.Warn("giving up the scheduler leadership", zap.Error(err))
		}
	})
}

// LastRuns is the last run of each job that ran in this process, by job name.
func (s *Scheduler) LastRuns() map[string]Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.last)
}

// record runs one job run and keeps and logs what it did.
func (s *Scheduler) record(ctx context.Context, name string, run func(context.Context) (map[string]int, error)) {
	started := time.Now()
	s.mu.Lock()
	scheduled, ok := s.scheduled[name]
	delete(s.scheduled, name)
	s.mu.Unlock()
	if !ok || scheduled.After(started) {
		scheduled = started
	}
	counts, err := run(ctx)
	r := Run{Job: name, Scheduled: scheduled, Started: started, Lateness: started.Sub(scheduled),
		Duration: time.Since(started), Counts: counts, Err: err, Outcome: outcome(ctx, counts, err)}
	s.mu.Lock()
	s.last[name] = r
	s.mu.Unlock()
	if s.cfg.ObserveRun != nil {
		s.cfg.ObserveRun(r)
	}

	// Every run is logged with its counts: at info when it repaired, deleted or failed
	// something (and every retention run, hourly), at debug when it found all well.
	fields := []zap.Field{zap.String("job", name), zap.Duration("lateness", r.Lateness), zap.Duration("duration", r.Duration)}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fields = append(fields, zap.Int(k, counts[k]))
	}
	notable := name == JobRetention || counts["repaired"] > 0 || r.Outcome == RunFailed
	switch {
	case r.Outcome == RunInterrupted:
		s.cfg.Log.Info("scheduler run interrupted by shutdown", fields...)
	case err != nil:
		s.cfg.Log.Error("scheduler run failed", append(fields, zap.Error(err))...)
	case notable:
		s.cfg.Log.Info("scheduler run", fields...)
	default:
		s.cfg.Log.Debug("scheduler run", fields...)
	}
}

// outcome is how a run that reported counts and err ended, ctx being its context.
func outcome(ctx context.Context, counts map[string]int, err error) string {
	switch {
	case err != nil && ctx.Err() != nil:
		return RunInterrupted
	case err != nil || counts["failed"] > 0:
		return RunFailed
	}
	return RunOK
}

// eachProject calls fn for every project, cfg.Parallel at a time, until ctx ends.
func (s *Scheduler) eachProject(ctx context.Context, fn func(ctx context.Context, groupID string)) error {
	const page = 500
	ids := make(chan string)
	var wg sync.WaitGroup
	for range s.cfg.Parallel {
		wg.Go(func() {
			for id := range ids {
				fn(ctx, id)
			}
		})
	}
	err := func() error {
		for off := 0; ; off += page {
			got, err := s.store.ProjectIDs(ctx, store.Page{Offset: off, Limit: page})
			if err != nil {
				return fmt.Errorf("listing projects: %w", err)
			}
			for _, id := range got {
				select {
				case ids <- id:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if len(got) < page {
				return nil
			}
		}
	}()
	close(ids)
	wg.Wait()
	return err
}

// elector makes one scheduler of several the one that runs the jobs: gocron asks it before
// each run.
type elector struct{ s *Scheduler }

var errStandingBy = errors.New("scheduler: another scheduler leads")

func (e elector) IsLeader(ctx context.Context) error {
	ok, err := e.s.hold(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errStandingBy
	}
	return nil
}

// leaderLease is the leadership's lease: LeaderLease, or shorter when the jobs run more often
// (tests), never under a second.
func (s *Scheduler) leaderLease() time.Duration {
	return max(min(LeaderLease, 3*s.cfg.ReconcileInterval), time.Second)
}

// hold takes or renews the leadership and reports whether this scheduler leads; it logs a
// change and says whether this scheduler just became the leader.
func (s *Scheduler) hold(ctx context.Context) (bool, error) {
	ok, err := s.store.LeadScheduler(ctx, s.token, s.leaderLease())
	if err != nil {
		s.cfg.Log.Warn("scheduler leadership", zap.Error(err))
		return false, err
	}
	s.mu.Lock()
	changed := ok != s.leading
	s.leading = ok
	s.mu.Unlock()
	if changed && ok {
		s.cfg.Log.Info("this scheduler leads: it runs the periodic jobs")
	} else if changed {
		s.cfg.Log.Info("another scheduler leads: standing by")
	}
	return ok, nil
}

// lead is the leadership heartbeat: every third of the lease the leader renews it and a
// standby asks for it, independently of how often the jobs run, so that a standby takes over
// soon after the leader dies, whatever the job intervals; a new leader runs its jobs at once.
func (s *Scheduler) lead() {
	defer close(s.leadDone)
	t := time.NewTicker(s.leaderLease() / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stopLead:
			return
		case <-t.C:
		}
		s.mu.Lock()
		was := s.leading
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), s.leaderLease()/3)
		ok, err := s.hold(ctx)
		cancel()
		if err == nil && ok && !was {
			for _, j := range s.jobs {
				if err := j.RunNow(); err != nil {
					s.cfg.Log.Warn("running a job on taking the lead", zap.String("job", j.Name()), zap.Error(err))
				}
			}
		}
	}
}

// monitor hears from gocron when each run was due (the rest it is told is of no use here).
type monitor struct{ s *Scheduler }

func (m monitor) JobSchedulingDelay(job gocron.Job, scheduled, _ time.Time) {
	m.s.mu.Lock()
	m.s.scheduled[job.Name()] = scheduled
	m.s.mu.Unlock()
}

func (monitor) SchedulerStarted()                          {}
func (monitor) SchedulerStopped()                          {}
func (monitor) SchedulerShutdown()                         {}
func (monitor) JobRegistered(gocron.Job)                   {}
func (monitor) JobUnregistered(gocron.Job)                 {}
func (monitor) JobStarted(gocron.Job)                      {}
func (monitor) JobRunning(gocron.Job)                      {}
func (monitor) JobFailed(gocron.Job, error)                {}
func (monitor) JobCompleted(gocron.Job)                    {}
func (monitor) JobExecutionTime(gocron.Job, time.Duration) {}
func (monitor) ConcurrencyLimitReached(string, gocron.Job) {}

// gocronLogger writes gocron's own messages to zap, at debug level except its errors.
type gocronLogger struct{ l *zap.SugaredLogger }

func (g gocronLogger) Debug(msg string, args ...any) { g.l.Debugw(msg, args...) }
func (g gocronLogger) Info(msg string, args ...any)  { g.l.Debugw(msg, args...) }
func (g gocronLogger) Warn(msg string, args ...any)  { g.l.Warnw(msg, args...) }
func (g gocronLogger) Error(msg string, args ...any) { g.l.Errorw(msg, args...) }
