package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
)

// Worker runs the engine's tasks from the Redis queues.
type Worker struct {
	srv    *asynq.Server
	engine *Engine
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
		// scripts a second before, 120 + 48 now) with the ticks still on time; a kick for new
		// observations starts within 100 ms.
		DelayedTaskCheckInterval: delayedTaskCheck,
		TaskCheckInterval:        taskCheck,
		RetryDelayFunc:           retryDelay,
		IsFailure:                func(err error) bool { return !errors.Is(err, errBusy) },
		ShutdownTimeout:          25 * time.Second,
		Logger:                   e.Log.Named("asynq").Sugar(),
		LogLevel:                 asynq.WarnLevel,
	})
	return &Worker{srv: srv, engine: e}
}

// Start runs the worker in the background.
func (w *Worker) Start() error {
	mux := asynq.NewServeMux()
	mux.HandleFunc(TypeObservations, w.engine.projectTask)
	mux.HandleFunc(TypeTick, w.engine.projectTask)
	mux.HandleFunc(TypeConfig, w.engine.configTask)
	mux.HandleFunc(TypeDelivery, w.engine.deliverTask)
	return w.srv.Start(mux)
}

// Shutdown stops taking tasks and waits for those under way; what does not finish in time is
// handed back to the queue.
func (w *Worker) Shutdown() {
	w.srv.Stop()     // no new tasks
	w.engine.stop()  // tasks waiting rather than working give up their turn
	w.srv.Shutdown() // and those working finish, up to the shutdown timeout
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
