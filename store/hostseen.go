package store

import (
	"sync"
	"time"

	"github.com/heraldhq/herald"
)

// HostSeenPrecision is how far a host's lastSeen may lag its latest observation: an API
// process rewrites a host it wrote itself only when the document changes or lastSeen moved
// this far. Agents re-report the same hosts every few seconds; rewriting each host of every
// batch was a quarter of the API's work under ingest.
const HostSeenPrecision = time.Minute

// hostsWrittenMax bounds the memory of writtenHosts: past it, the process forgets and
// rewrites (a few hundred bytes a host).
const hostsWrittenMax = 100_000

// writtenHosts are the host documents this process last wrote, by project and host. Its zero
// value is empty and ready. Safe for concurrent use.
type writtenHosts struct {
	mu sync.Mutex
	m  map[string]map[string]writtenHost // by project, then host
	n  int                               // hosts in m
}

// writtenHost is a host document as written, and when (this process's clock).
type writtenHost struct {
	doc herald.Host
	at  time.Time
}

// current reports whether h needs no write at now (this process's clock): this process
// wrote the same document less than HostSeenPrecision ago, last seen less than
// HostSeenPrecision before h. Old writes do not count, so that whatever happened to the
// document since (a purge) is mended within the precision.
func (w *writtenHosts) current(h herald.Host, now time.Time) bool {
	w.mu.Lock()
	prev, ok := w.m[h.GroupID][h.ID]
	w.mu.Unlock()
	if !ok || now.Sub(prev.at) >= HostSeenPrecision {
		return false
	}
	same := prev.doc
	same.LastSeen = h.LastSeen
	return same == h && h.LastSeen.Sub(prev.doc.LastSeen.Time) < HostSeenPrecision
}

// wrote records hosts as written at now.
func (w *writtenHosts) wrote(hs []herald.Host, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil || w.n+len(hs) > hostsWrittenMax {
		w.m, w.n = map[string]map[string]writtenHost{}, 0
	}
	for _, h := range hs {
		project := w.m[h.GroupID]
		if project == nil {
			project = map[string]writtenHost{}
			w.m[h.GroupID] = project
		}
		if _, ok := project[h.ID]; !ok {
			w.n++
		}
		project[h.ID] = writtenHost{doc: h, at: now}
	}
}
