package main

import "runtime/debug"

// The GC targets (GOGC) of the roles that allocate for every piece of work they do, when the
// environment sets none. A process's live heap is small (a few MiB), so at Go's default of 100
// it collects many times a second under load, and each collection's fixed part (stopping and
// restarting the world, scanning every goroutine's stack) is paid whatever the heap holds.
const (
	// workerGCPercent: a worker allocates for every delivery (its HTTP exchange, the alert's
	// body, the records of the attempt). A higher target collects less often, for a heap that
	// peaks higher (docs/performance.md, "GC targets").
	workerGCPercent = 300
	// apiGCPercent: every request allocates, and the API's heap also holds the observation
	// batches being posted, so a higher target costs more memory there than in a worker.
	// 200 takes most of the gain for half the memory of 300 (docs/performance.md, "GC
	// targets").
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
