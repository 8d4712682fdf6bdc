package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"github.com/heraldhq/herald/store"
)

// Worker runs the engine's tasks from the Redis queues, and a session of a project at once
// when it hears a kick (work queued for the project: store.Kicks) rather than at its next
// poll of the queues, which is slow so that an idle worker costs little.
type Worker struct {
	srv     *asynq.Server
	engine  *Engine
	kicks   *store.Kicks
	kicked  kickedLoops
	reclaim *reclaimer  // hands back the tasks of dead workers, sooner than asynq does
	beats   *background // looks for missed heartbeats
}

// kickedLoops are the project loops a worker runs for kicks, beside asynq's tasks: at most
// slots at once (a kick that finds no room is left to the work's task, queued anyway).
type kickedLoops struct {
	slots  chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context // ended when a shutdown runs out of time
	cancel context.CancelFunc
}

// WorkerConfig sizes a worker.
type WorkerConfig struct {
	Concurrency int            // tasks at once (default 20)
	Queues      map[string]int // queue priorities (default engine 6, deliveries 4)
}

// NewWorker builds a worker for engine on the engine's Redis.
func NewWorker(e *Engine, cfg WorkerConfig) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 20
	}
	if cfg.Queues == nil {
		cfg.Queues = DefaultQueues()
	}
	srv := asynq.NewServerFromRedisClient(e.store.Redis(), asynq.Config{
		Concurrency: cfg.Concurrency,
		Queues:      cfg.Queues,
		// Due work must start within a fraction of a second: asynq's defaults poll for
		// scheduled work every 5 s and idle queues every second. An idle worker's polling is
		// what Herald and Redis spend while nothing is due: a script per queue (a dozen) at
		// each check, and two per queue at each move of scheduled work. The engine queues its
		// ticks dueLead ahead of what is due and waits in the task for the due time, so
		// scheduled work is moved every 500 ms and idle queues polled every 100 ms (240 + 120
		// scripts a second before, 120 + 48 now) with the ticks still on time. New
		// observations do not wait for a poll: their kick starts a session at once (Start).
		DelayedTaskCheckInterval: delayedTaskCheck,
		TaskCheckInterval:        taskCheck,
		RetryDelayFunc:           retryDelay,
		IsFailure:                isFailure,
		ShutdownTimeout:          shutdownTimeout,
		Logger:                   e.Log.Named("asynq").Sugar(),
		LogLevel:                 asynq.WarnLevel,
	})
	w := &Worker{srv: srv, engine: e, kicked: kickedLoops{slots: make(chan struct{}, cfg.Concurrency)},
		reclaim: newReclaimer(e.store, cfg.Queues, e.Observer, e.Log.Named("reclaim"))}
	w.kicked.ctx, w.kicked.cancel = context.WithCancel(context.Background())
	return w
}

// shutdownTimeout is how long a shutting-down worker waits for the work under way.
const shutdownTimeout = 25 * time.Second

// Start runs the worker in the background: it listens for kicks, then takes tasks, and hands
// back those of dead workers (reclaimer). It refuses to start in a binary built with an asynq
// the reclaimer was not tested with (store.CheckAsynqVersion).
func (w *Worker) Start() error {
	if err := store.CheckAsynqVersion(); err != nil {
		return err
	}
	kicks, err := w.engine.store.ListenKicks(w.kicked.ctx)
	if err != nil {
		return err
	}
	mux := asynq.NewServeMux()
	for typ, tt := range taskTypes {
		mux.HandleFunc(typ, func(ctx context.Context, t *asynq.Task) error { return tt.handle(w.engine, ctx, t) })
	}
	if err := w.srv.Start(mux); err != nil {
		_ = kicks.Close()
		return err
	}
	w.kicks = kicks
	w.reclaim.start()
	w.beats = w.engine.watchHeartbeats()
	w.engine.loops.setStart(w.startKicked)
	go func() {
		for groupID := range kicks.C() {
			w.engine.loops.kick(groupID)
		}
	}()
	return nil
}

// startKicked runs a loop at project groupID (counted as p) for a kick, unless every slot is
// taken. Its error needs no handling of its own: the work's task does the same work, and
// asynq retries what fails there; the kick only came sooner.
func (w *Worker) startKicked(groupID string, p *projectLoops) bool {
	select {
	case w.kicked.slots <- struct{}{}:
	default:
		return false
	}
	w.kicked.wg.Add(1)
	go func() {
		defer func() { <-w.kicked.slots; w.kicked.wg.Done() }()
		if err := w.engine.runLoop(w.kicked.ctx, groupID, nil, p); err != nil && !errors.Is(err, errBusy) && w.kicked.ctx.Err() == nil {
			w.engine.Log.Warn("a kicked session failed; the work's task takes over", zap.String("groupId", groupID), zap.Error(err))
		}
	}()
	return true
}

// Shutdown stops reclaiming dead workers' tasks (its goroutine has returned when Shutdown
// does), stops taking tasks and kicks and waits for the work under way; what does not
// finish in time is handed back to the queue (a kicked session's work comes back with its
// lease: the batches and claims it did not finish stay in Redis, and their tasks are queued).
func (w *Worker) Shutdown() {
	w.reclaim.shutdown()
	w.beats.stop()
	w.srv.Stop() // no new tasks
	if w.kicks != nil {
		_ = w.kicks.Close()
		w.engine.loops.setStart(nil) // no new kicked loops
	}
	w.engine.stop() // tasks waiting rather than working give up their turn
	late := time.AfterFunc(shutdownTimeout, w.kicked.cancel)
	w.srv.Shutdown() // and those working finish, up to the shutdown timeout
	w.kicked.wg.Wait()
	late.Stop()
	w.kicked.cancel()
}

// projectTask runs a session of the task's project: whatever waits or is due gets done,
// whichever task it was that came.
func (e *Engine) projectTask(ctx context.Context, t *asynq.Task) error {
	p, err := decodeProjectTask(t.Payload())
	if err != nil {
		return errors.Join(asynq.SkipRetry, err)
	}
	return e.runProject(ctx, p.GroupID, nil)
}

// configTask cancels the alerts a changed configuration opened; a global configuration's
// change fans out to each project it has alerts in.
func (e *Engine) configTask(ctx context.Context, t *asynq.Task) error {
	var p projectTask
	if err := decodeJSON(t.Payload(), &p); err != nil || p.ConfigID == "" {
		return errors.Join(asynq.SkipRetry, err)
	}
	if p.Global && p.GroupID == "" {
		groups, err := e.store.GlobalConfigProjects(ctx, p.ConfigID)
		if err != nil {
			return err
		}
		for _, g := range groups {
			q := p
			q.GroupID = g
			if _, err := e.dispatcher.client.EnqueueContext(ctx, newTask(TypeConfig, q), asynq.Queue(QueueEngine), asynq.MaxRetry(50)); err != nil {
				return err
			}
		}
		return nil
	}
	return e.runProject(ctx, p.GroupID, func(s *session) error {
		sc := s.scopes()[0]
		if p.Global {
			sc = s.scopes()[1]
		}
		return s.cancelConfig(ctx, sc, p.ConfigID, p.Before)
	})
}

// background is a function a worker runs in a goroutine of its own: at once, then interval
// after each run ends, until stopped.
type background struct {
	done    chan struct{} // closed by stop
	stopped chan struct{} // closed when the loop has returned
}

func every(interval time.Duration, run func()) *background {
	b := &background{done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(b.stopped)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				run()
				t.Reset(interval)
			}
		}
	}()
	return b
}

// stop ends the loop and waits for its run under way, if any; a nil one was never started.
func (b *background) stop() {
	if b == nil {
		return
	}
	close(b.done)
	<-b.stopped
}
