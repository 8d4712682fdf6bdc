package main

import "runtime/debug"

// The GC targets (GOGC) of the roles that allocate for every piece of work they do, when the
// environment sets none. A process's live heap is small (a few MiB), so at Go's default of 100
// it collects many times a second under load, and each collection's fixed part (stopping and
// restarting the world, scanning every goroutine's stack) is paid whatever the heap holds.
const (
	// workerGCPercent: a storm allocates for every delivery (its HTTP exchange, the alert's
	// body, the records of the attempt), and at 100 the collector took some 8 % of a worker's
	// CPU; at 300, some 3 %, for a heap that peaks higher (a storm of 20,000 alerts: api and
	// worker 94 → 127 MiB RSS together).
	workerGCPercent = 300
	// apiGCPercent: every request allocates (net/http's request and response, the Digest
	// check's, the read's), some 8 KB of garbage a request. Under bench's scenario 7 the API
	// collected about ten times a second at 100 (a heap of 8 MB, 3-4 MB live), and the
	// collector's share of its CPU profile (marking, assists, sweeping) was 6.3-6.6 %; at
	// 200, 4.3-4.6 %; at 300, 2.3-3.8 % (one or two runs each), some 1-2 µs a request.
	// An API's heap also holds the observation batches being posted, and a higher target
	// holds more of them: a storm of 100,000 alerts peaked at api + worker 152, 175 and
	// 193-202 MiB RSS at 100, 200 and 300 (against 250), the ingest scenario's API at 54, 68
	// and 80-85 MB. 200 takes most of the gain for half the memory.
	apiGCPercent = 200
)

// roleGC sets the process's GC target to percent, unless GOGC (read through getenv) sets one:
// the operator's setting wins. A container's GOMEMLIMIT (deploy/) still makes the runtime
// collect harder near its memory limit.
func roleGC(getenv func(string) string, percent int) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
