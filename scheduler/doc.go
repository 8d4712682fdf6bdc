// Package scheduler is Herald's periodic work (the `herald scheduler` role, also run inside
// `herald dev`), on gocron: small jobs that keep the alert engine's state whole and Redis
// from growing without end. Each job runs in singleton mode, so a slow run never overlaps the
// next one.
//
// Jobs:
//   - reconcile (every ReconcileInterval, default 5 s), for every project: an active alert
//     with a next step but no due entry (lost in a Redis failover, say) is put back due now;
//     a project with observations waiting or outbox notices whose lease ran out (a worker died
//     with them) is kicked (a session is queued, which drains, recovers and looks at what is
//     due); and the project's earliest due time gets its tick task (deterministic task ids
//     make this a no-op when the tick is there). What the engine does on its own is never
//     redone here: the scheduler only makes sure the engine gets to look.
//   - retention (hourly, cutoff Retention, default 90 days): closed and cancelled alerts that
//     ended before the cutoff, events created before it and maintenance windows that ended
//     before it are deleted with every index entry, a bounded number per scope and run (what
//     is left goes in the next run).
//
// Maintenance windows need no job of their own: the engine evaluates silencing at each alert's
// wake-up (skipping the slots a window covers, resuming at the next slot once it ends), so the
// only work windows make here is deleting old ones in retention.
//
// Several schedulers may run; one leads at a time (a lease in Redis of LeaderLease, renewed by
// a heartbeat every third of it, apart from the jobs), and the others stand by, asking as often,
// and take over when it stops renewing, running the jobs at once. Everything a run does is
// idempotent, so two runs overlapping during a handover do no harm.
//
// It owns when the periodic work happens. It must not touch Redis keys itself (package store
// has every key), decide anything about an alert (the engine, package dispatch, does), or
// send anything.
package scheduler
