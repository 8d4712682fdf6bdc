// Package dispatchtest starts the engine as Herald's tests run it: workers whose WEBHOOK
// sender may reach the tests' receivers on 127.0.0.1, with a short lease.
package dispatchtest

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// Lease is the lease of the engines tests start: short, so that a test of a worker that dies
// waits little for another to take over.
const Lease = 2 * time.Second

// Webhook is a WEBHOOK sender that may reach 127.0.0.1, where tests' receivers listen.
func Webhook() channels.Notifier {
	return webhook.Notifier{Client: channels.NewHTTPClient(true, 5*time.Second)}
}

// EngineConfig is an engine's configuration in tests: minute as the length of a minute of
// delayMin and intervalMin, the Lease, log (nil: none) and the Webhook sender.
func EngineConfig(minute time.Duration, log *zap.Logger) dispatch.EngineConfig {
	if log == nil {
		log = zap.NewNop()
	}
	return dispatch.EngineConfig{Minute: minute, Lease: Lease, Log: log,
		Notifiers: map[string]channels.Notifier{"WEBHOOK": Webhook()}}
}

// Start starts a worker of 10 at once on an engine of st and d with cfg; t fails if it does
// not start. Shutting it down is the caller's.
func Start(t testing.TB, st *store.Store, d *dispatch.Dispatcher, cfg dispatch.EngineConfig) *dispatch.Worker {
	t.Helper()
	w := dispatch.NewWorker(dispatch.NewEngine(st, d, cfg), dispatch.WorkerConfig{Concurrency: 10})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	return w
}

// Worker is a test's one worker, which the test may stop and start again; it is stopped
// when the test ends.
type Worker struct {
	t      testing.TB
	st     *store.Store
	d      *dispatch.Dispatcher
	config func() dispatch.EngineConfig
	w      *dispatch.Worker
}

// StartWorker starts a Worker on st and d whose engine has the configuration config returns
// (asked again at each start).
func StartWorker(t testing.TB, st *store.Store, d *dispatch.Dispatcher, config func() dispatch.EngineConfig) *Worker {
	t.Helper()
	w := &Worker{t: t, st: st, d: d, config: config}
	w.Start()
	t.Cleanup(w.Stop)
	return w
}

// Start starts the worker again after Stop (a new worker, as after a restart).
func (w *Worker) Start() {
	w.t.Helper()
	w.w = Start(w.t, w.st, w.d, w.config())
}

// Stop shuts the worker down, handing back what it has not finished; it does nothing when
// the worker is stopped.
func (w *Worker) Stop() {
	if w.w != nil {
		w.w.Shutdown()
		w.w = nil
	}
}

// Eventually polls cond every 10 ms until it holds or within passes; it reports whether it
// held.
func Eventually(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
