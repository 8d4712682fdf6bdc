package dispatch

import "time"

// Observer is told what the engine does, for metrics (package metrics implements it; this
// package knows no metrics library). Its methods are called from many goroutines and must
// not block.
type Observer interface {
	// Delivery: one attempt at delivering a notice of kind (a notification typeName), its
	// outcome (a store.Attempt outcome: DELIVERED, RETRYING, REJECTED, FAILED or SUPERSEDED,
	// the last with no duration) and how long it took.
	Delivery(kind, outcome string, d time.Duration)
	// Lateness: how long after its due time a session claimed an alert's step.
	Lateness(d time.Duration)
	// Reclaimed: one run of the worker's reclaimer (reclaim.go): how many tasks of dead
	// workers it handed back to their queue, how many it left to asynq's recoverer, or why it
	// failed.
	Reclaimed(requeued, left int, err error)
	// EngineError: n things the engine could not do that no caller hears of (its log line
	// says which), by what went wrong: one of EngineErrors.
	EngineError(what string, n int)
	// Paced: a notice of kind (a notification typeName, or EMAIL or SMS for a person) waits
	// for its target's next slot (pace.go).
	Paced(kind string)
	// Digested: a notice of kind was told in a digest with others (digest.go).
	Digested(kind string)
}

// What EngineError counts.
const (
	// ErrLeaseRelease: a session's project lease was not given back (a store error): the
	// project's next session waits for it to lapse (HERALD_ENGINE_LEASE).
	ErrLeaseRelease = "lease_release"
	// ErrOutboxSetAside: outbox entries or notices a worker could not read, set aside in the
	// project's outbox-aside list rather than sent (store.SetAside).
	ErrOutboxSetAside = "outbox_set_aside"
	// ErrObservationsSetAside: batches of observations a worker could not read, set aside in
	// the project's obs-aside list rather than evaluated (store.SetObservationsAside).
	ErrObservationsSetAside = "observations_set_aside"
	// ErrNoticeEnd: how a try of an opening or repeat went was not recorded (a store error,
	// store.EndNotice). The target stays marked tried, so its resolution goes (after a
	// retry's mark lapses, sendingMax).
	ErrNoticeEnd = "notice_end"
)

// EngineErrors are every value of EngineError's what.
var EngineErrors = []string{ErrLeaseRelease, ErrOutboxSetAside, ErrObservationsSetAside, ErrNoticeEnd}

// nopObserver is the Observer of an engine configured without one.
type nopObserver struct{}

func (nopObserver) Delivery(string, string, time.Duration) {}
func (nopObserver) Lateness(time.Duration)                 {}
func (nopObserver) Paced(string)                           {}
func (nopObserver) Digested(string)                        {}
func (nopObserver) Reclaimed(int, int, error)              {}
func (nopObserver) EngineError(string, int)                {}
