// Command bench measures Herald's alert engine against its performance targets, end to end,
// on this machine:
//
//	go run ./bench            # the full run: a few minutes, most of them loading a million alerts
//	go run ./bench -million 100000   # the same with a tenth of them
//	go run ./bench -quick     # reduced sizes: a smoke run of about a minute
//	go run ./bench -workers   # only deliveries/s with two workers against one (workers.go)
//	go run ./bench -only storm,prometheus  # only the scenarios named (opened, due, waiting, million, storm, prometheus, apiread, ingest, people, heartbeats)
//	go run ./bench -only people -people-minute 1m -timeout 30m  # the storm for people over 15 real minutes
//	go run ./bench -help      # every size, and -profile DIR for a CPU profile of each scenario and each Herald process
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
//   - 5, alert storms against Alertmanager (storm.go; sizes -storms, default 10,000 and
//     100,000): N distinct alerts reported at once (requests of 500, 4 in flight), each one
//     notification, first through Alertmanager v0.28.1 (alertmanager.go: its API v2, a
//     webhook receiver, every alert its own group, group_wait 0s, no cluster), then through
//     Herald as production runs it: `herald api` and `herald worker` built from ./cmd/herald
//     as separate processes on the run's redis-server, a WEBHOOK notification with delayMin 0.
//     Notifications per second from the first report to the last notice; targets: Herald at
//     least 2.5 times Alertmanager in the same run, no duplicates, the last first notice at
//     most 20 s after the last report, Herald's processes' peak RSS (VmHWM of api and worker)
//     at most 250 MB together, Redis's used_memory growth at most 1.5 KB per open alert (the
//     figure says how much of the growth is connections' buffers, mem_clients_normal: they
//     follow the connections in use, some 16-20 KB each until idle 2 s, not the alerts).
//     With the CPU each Herald process and redis-server spent per notification, beside.
//     Without an Alertmanager binary (-alertmanager, PATH, $(go env GOPATH)/bin) its figures
//     say not measured, and why; the run goes on (-alertmanager /nonexistent skips it, for
//     Herald's figures alone). -storm-keys logs, after each Herald storm, Redis's memory by key
//     pattern (keybreakdown.go): where an open alert's bytes are.
//   - 6, Prometheus re-sends (prometheus.go; -prometheus-alerts, default 50,000): firing
//     PROMETHEUS_ALERT alerts re-posted through the Alertmanager front door in Prometheus'
//     batches of 64, as Prometheus does every resend interval: CPU per batch, Redis commands per
//     alert, no delivery; the same batches re-posted to Alertmanager for comparison.
//   - 7, API reads: GET /groups/{id}/alerts/{id} with Digest from 64 keep-alive clients, each
//     keeping its nonce (nc+1 a request), for -read-for, against a plain net/http handler
//     encoding the same alert, in the same run. Both servers are processes of their own: Herald
//     is `herald api` built from ./cmd/herald (logging at info), the plain handler this program
//     started again in its plain-server mode; the load generator, here, is never measured in
//     the figures judged, but it shares the cores: a last line says how the machine's CPU went
//     in each load window (to the servers, to the load generator, to other processes), since
//     other work on the machine moves the rates and p99 far more than CPU a request.
//     Targets: at least 0.5 times the plain handler's requests/s, p99 at most 10 ms, and at
//     most 100 µs of CPU a request, the API process's (/proc) and Redis's (INFO cpu) together.
//     It runs in -read-rounds rounds (3; 1 with -quick), each loading the plain handler and
//     then Herald: the ratio and rates are the median round's, with every round's ratio,
//     and p99 and CPU a request the worst round's. One round's ratio moved between 0.39 and
//     0.50 on the same builds.
//     With -profile, each Herald process writes its own profile (HERALD_CPU_PROFILE), and the
//     load generator one a load (apiread.plain-clients.N and apiread.herald-clients.N): the
//     clients' CPU a request is part of what the ratio weighs.
//   - 8, observations ingested: 16 agents post batches of -batch HOST_DOWN observations (hosts
//     of their own, the same each time) to `herald api` for -ingest-for while `herald worker`
//     evaluates them. Targets: at least 50,000 observations accepted (202) a second; the API
//     process's peak resident memory at most 256 MB.
//   - 9, a storm for people (people.go, people_services.go; -people-alerts, default 10,000):
//     HOST_DOWN alerts open at once in a project with three owners, each with an email address
//     and a mobile number, notified by a GROUP notification by email and SMS, and a CHAT_B
//     channel notification, through `herald api` and `herald worker` (with action keys) and
//     real services on 127.0.0.1: the SMTP server the tests use (channelstest), an SMS gateway
//     (the Messages API channels/sms speaks) taking one message a second per number and a chat
//     service (chat.postMessage) one a second per channel, each answering 429 with Retry-After
//     beyond that (a GCRA with 250 ms of tolerance). The targets are watched for 15 minutes of
//     Herald's minute, -people-minute (HERALD_MINUTE, default 8s: a span of 2 minutes), or
//     -people-span. The services' rates stay real: a Herald that only paces sends as many
//     messages as the real span allows (about 8 times fewer in 2 minutes than in 15), one that
//     digests as many as its windows, which follow its minute. Targets, per target: messages in the span at most 10 emails, 10 SMS and 20
//     chat messages; no 429 after the first; the first message at most 5 s after the first
//     report; every alert accounted for in exactly one message by the span's end (named by a
//     host or an action link, or listed by the record of a digest the message links to). The
//     deliveries API's records of -people-sample alerts (DELIVERED, or DIGESTED with a
//     digestId) must agree with what each target received; its log keeps a project's last
//     5,000 attempts, so most of a large storm's are no longer there.
//   - 10, heartbeats (heartbeats.go; -heartbeats, default 100,000): heartbeats with a period of
//     one minute and a grace of one, made through `herald api` (8 clients at once) and each
//     pinged over HTTP at the ping endpoint once a minute at a moment of its own (32 pings in
//     flight), while one `herald worker` watches them, both processes of their own. The minute
//     is the real one (-heartbeat-minute; -quick: 5,000 heartbeats and a minute of 5 s, given
//     to both processes as HERALD_MINUTE). Redis's used_memory growth per heartbeat, from
//     before they are made to once each was pinged, target at most 1 KB (the figure says how
//     much of it is their creation's audit events); the worker's CPU over a minute in which
//     every heartbeat is pinged in time, target under 10% of a core, with the api's and
//     redis-server's beside (what the pings cost). Then, at the start of each of
//     -heartbeat-miss-minutes minutes (3), a new 1% stop being pinged for two periods (and are
//     pinged again after, which closes their alerts): each must be found missed and notified,
//     HEARTBEAT_MISSED opened and its notice at a webhook receiver on 127.0.0.1 (delayMin 0),
//     within 5 s of its deadline (its last ping plus period and grace, as the due set held
//     it): p99 and max of notice − deadline, none before the deadline, none for a heartbeat
//     pinged in time. It logs the pinger's progress every half minute and Redis's memory by
//     key pattern.
//
// The idle windows of 3 and 4 start once redis-server is done with what the load left it (an
// append-only file rewrite, and the deletion of the old file after it, whose freeing of a
// gigabyte of cached pages was 61% of redis-server's CPU in one of scenario 4's windows), and
// log where their CPU went (idlediag.go): Redis's commands and scripts by calls and
// microseconds each (INFO commandstats), its own active expiry and rewrites, and this process's
// collections and live heap; with -profile, the window has a CPU profile of its own
// (<scenario>.idle.pprof) and a heap profile (<scenario>.idle.heap.pprof).
//
// It prints progress on stderr, then the report on stdout: one line per figure with its target
// and PASS or MISS, and the same as a markdown table for docs/performance.md. It exits 0 when every
// target is met, 3 when one is missed, 1 when it could not measure, 2 for bad flags.
package main
