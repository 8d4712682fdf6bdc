// Command bench measures Herald's alert engine against its performance targets, end to end,
// on this machine:
//
//	go run ./bench            # the full run: a few minutes, most of them loading a million alerts
//	go run ./bench -million 100000   # the same with a tenth of them
//	go run ./bench -quick     # reduced sizes: a smoke run of about a minute
//	go run ./bench -workers   # only deliveries/s with two workers against one (workers.go)
//	go run ./bench -help      # every size, and -profile DIR for a CPU profile of each scenario
//
// It needs Debian's redis-server (apt-get install redis-server), which it starts itself on a
// unix socket in a temporary directory, with the append-only file synced every second
// (--appendonly yes --appendfsync everysec), and stops at the end. Herald runs in this process
// as dispatch's end-to-end tests wire it: the API over HTTP with digest authentication, the
// dispatcher, an engine with the WEBHOOK sender, and a worker, with a webhook receiver that
// counts deliveries by Idempotency-Key (the same key twice is a duplicate) and records when
// each arrived. Every socket is on 127.0.0.1; every wait is bounded. Each scenario starts on an
// empty Redis, in a project whose only enabled configuration is HOST_DOWN with one WEBHOOK
// notification.
//
// What it measures:
//
//   - The ceiling: raw asynq throughput on the same Redis. N no-op tasks are enqueued, then an
//     asynq server with the concurrency and polling settings of Herald's worker runs them all;
//     tasks per second. It is the ceiling of a design that runs one task per delivery.
//   - 1, alerts opened: HOST_DOWN observations for distinct hosts, posted in requests of 500,
//     open alerts whose first notice is due at once (delayMin 0). Deliveries per second from
//     the first request to the last distinct delivery; target at least 1.2 times the ceiling,
//     and no duplicates.
//   - 2, first notices due: observations posted evenly over a window (10 s) open alerts whose
//     first notice falls due 5 s after detection (a minute of 1 s, delayMin 5), so the engine
//     takes new observations while sending what comes due. A notice's lateness is its arrival
//     minus its due time, the alert's Schedule.Detected + delayMin minutes; targets: none
//     early, p99 at most 100 ms.
//   - 3, open alerts waiting: alerts opened and notified once, next repeat an hour away. The
//     growth of Redis's used_memory per alert, from before the alerts (their hosts already
//     registered) to after (asynq's bookkeeping included), target at most 1.5 KB; then the CPU
//     this process uses over a window in which nothing is due, target near idle (at most 5% of
//     one core), with redis-server's beside it.
//   - 4, a million open alerts (-million): alerts opened by the engine from observations handed
//     to the dispatcher as the API hands them (HTTP, digest and host registration left out, to
//     load a million in minutes), first notices delivered, repeats pending; then a slice of
//     10,000 more in a second project whose repeats fall due together a minute later. Redis's
//     used_memory with all of them open, target at most 1.5 GB; the CPU of this process (with
//     a scheduler reconciling every 5 s) and redis-server over a window with nothing due,
//     target under 5% of a core together; the slice's repeats' lateness against the due time
//     the engine scheduled, target p99 at most 1 s.
//
// It prints progress on stderr, then the report on stdout: one line per figure with its target
// and PASS or MISS, and the same as a markdown table for the README. It exits 0 when every
// target is met, 3 when one is missed, 1 when it could not measure, 2 for bad flags.
package main
