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
//   - Worker: the asynq server that runs the engine's tasks. Idle, it polls asynq's queues
//     slowly, so that it costs little; work the dispatcher queues for a project is also
//     announced on a Redis channel (a kick), and a worker hearing it starts the project's
//     session at once (kick.go). A kick is a hint: the task is queued all the same. It also
//     hands back to their queue the tasks a worker that died was running, 10–15 s after
//     their asynq lease ran out, rather than asynq's 60–120 s (reclaim.go).
//
// Timing. Each active alert has a due time in a per-project sorted set (millisecond
// precision). A tick task per project and second (a deterministic asynq task id, so a
// retried or repeated step never schedules twice) starts a session at that second; the
// session claims only what is due by now, with a lease, so nothing is sent early (asynq hands
// tasks out up to a second early) and nothing claimed is lost if the worker dies. Work is
// batched: a task carries a project's batch, not one delivery, and deliveries that succeed
// need no task of their own; only retries become tasks.
//
// In a storm, the notices for one target people read go out together, as digests (digest.go):
// a notice a digest tells of is recorded DIGESTED, and the digest is a delivery of its own.
//
// Every notice ends as exactly one of: delivered (alone, or told in a digest); superseded (every try re-checks it against
// the alert and its notification as they are now, and a resolution goes to a target only
// after the opening reached it: supersede.go), recorded with why; or a dead letter, an
// archived asynq task recorded DEAD_LETTER (deadletters.go lists and replays them). A store
// error is never an end: the notice stays in the outbox or its task retries.
//
// Renewals. An alert that ends unless reported again (an alert from Prometheus, re-sent every
// few seconds while it fires) has an expiry beside its schedule. A re-send that changes nothing
// but the expiry is applied by one store script per batch (evaluate.go: renew) that reads no
// alert and writes neither the alert nor its schedule; the alert's due time is the earlier of
// its lifecycle's and its expiry, so one that is not re-sent closes at its expiry through the
// usual due step, with its resolution notices.
//
// Leases. A session's heartbeat renews its project lease and holds the notices it is sending
// every quarter of the lease, so a slow target never lets another session in; each session
// has its own token and removes exactly the observation batches it evaluated. Its writes to
// the engine's state are the lease's methods (store.ProjectLock), each fenced by the token:
// a session that stalled past its lease while another took the project writes nothing. One
// whose renewals fail stops before the lease can have lapsed in Redis, which expires it by
// its clock. A session
// reloads the project's configurations when their version changed, so an observation is
// evaluated with everything committed before it.
//
// It owns when things happen and in which order. It must not know HTTP routing (package api)
// or the wire protocol of a service (package channels), and keeps no Redis keys of its own
// (package store).
package dispatch
