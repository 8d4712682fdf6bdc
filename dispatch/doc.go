// Package dispatch is Herald's alert engine: it turns observations into alerts and drives
// every notification's timing on asynq queues, so that nothing depends on one process staying
// up.
//
// The moving parts, each small:
//   - Dispatcher, used by the API: queues an observations batch, wakes a project at a time,
//     tells the engine a configuration changed or an alert was acknowledged.
//   - Engine, run by workers: one session per project at a time (a lease in Redis) evaluates
//     the project's waiting observations in order and looks at every alert that came due,
//     applying the lifecycle rules of package herald, committing each step atomically before
//     sending what it says to send.
//   - Worker: the asynq server that runs the engine's tasks.
//
// Timing. Each active alert has a due time in a per-project sorted set (millisecond
// precision). A tick task per project and second (a deterministic asynq task id, so a
// retried or repeated step never schedules twice) starts a session at that second; the
// session claims only what is due by now, with a lease, so nothing is sent early (asynq hands
// tasks out up to a second early) and nothing claimed is lost if the worker dies. Work is
// batched: a task carries a project's batch, not one delivery, and deliveries that succeed
// need no task of their own; only retries become tasks.
//
// It owns when things happen and in which order. It must not know HTTP routing (package api)
// or the wire protocol of a service (package channels), and keeps no Redis keys of its own
// (package store).
package dispatch
