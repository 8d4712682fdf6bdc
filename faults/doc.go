// Package faults is Herald's fault-injection suite: `go test ./faults/` builds the herald
// binary, starts a real redis-server and real `herald api`, `herald worker` and `herald
// scheduler` processes on it, drives them through the API as agents do, and breaks things on
// purpose while notices flow: workers and Redis killed, a worker paused past its lease, Redis
// paused past go-redis' timeouts, targets that fail, hang or answer slowly, the leading
// scheduler killed, agents re-reporting with no scheduler running, and digest storms (many
// alerts for the members of a project, by email, so that each address gets digests) with
// Redis stopped (SIGSTOP) or the workers SIGKILLed while digests are claimed and sent.
//
// What arrives is recorded by real receivers on 127.0.0.1: an HTTP receiver for webhooks (every
// request: its Idempotency-Key, X-Vendor-Event, the alert it is about, its status, when it came
// and what it was answered) and an SMTP server (go-smtp) for the email that GROUP
// notifications fan out to people. Each scenario then counts, per expected notice, what was
// lost, delivered twice, delivered out of order (an alert's close before its open) and how long
// the system took to recover, prints one row, and asserts Herald's promises: nothing accepted
// is lost, a close never precedes its open, recovery within its target. The one allowed loss
// is what a Redis SIGKILL takes with it from the last second before the kill (AOF everysec):
// it is counted in its own column, never as lost.
//
// A digest mail (its Message-ID is the digest's id) counts as a notice for each alert its
// record lists (what its link's page shows). Each alert must be told each address once, in a
// mail of its own or in a digest, never again in another message; a Message-ID delivered
// twice is a duplicate, allowed only within a fault's at-least-once window (its first copy
// within 2 s of the fault); every alert a digest told is recorded DIGESTED with the digest's
// id (or SUPERSEDED, when the digest's sender died before recording it and its alert closed
// before the digest ran again). The other scenarios that mail people turn digests and email
// pacing off: they count one email per alert.
//
// Sizes are scaled down by default so that the suite fits in CI (about 6–8 minutes on two
// cores); HERALD_FAULTS=full runs the sizes of issue 8, about 10–15 minutes, past go test's
// default timeout: `HERALD_FAULTS=full go test -timeout 30m ./faults/`. The table of every scenario is logged at the end, and
// written to the file HERALD_FAULTS_REPORT names, when set. Without redis-server the suite is
// skipped, except in CI (CI set), where that is a failure.
//
// The suite runs on Linux (CI's Debian): children die with the test (Pdeathsig), and the
// receiver asks /proc which worker sent a request. The package holds tests only; this file
// says what it owns.
package faults
