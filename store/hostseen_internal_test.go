package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// A host this process wrote is written again only when its document changes, its lastSeen
// moves by the precision, or the write is that old.
func TestWrittenHostIsCurrent(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	doc := herald.Host{ID: "h1", GroupID: "g1", HostnameAndPort: "h1:27017", LastSeen: herald.At(t0)}
	with := func(f func(*herald.Host)) herald.Host { h := doc; f(&h); return h }
	var w writtenHosts
	w.wrote([]herald.Host{doc}, t0)
	for _, tc := range []struct {
		name string
		h    herald.Host
		now  time.Time
		want bool
	}{
		{"the same, seen again at once", doc, t0, true},
		{"seen 59 s later", with(func(h *herald.Host) { h.LastSeen = herald.At(t0.Add(59 * time.Second)) }), t0.Add(59 * time.Second), true},
		{"seen a minute later", with(func(h *herald.Host) { h.LastSeen = herald.At(t0.Add(time.Minute)) }), t0.Add(time.Minute), false},
		{"seen earlier (an agent's old report)", with(func(h *herald.Host) { h.LastSeen = herald.At(t0.Add(-time.Hour)) }), t0, true},
		{"the same, but written a minute ago", doc, t0.Add(time.Minute), false},
		{"another hostnameAndPort", with(func(h *herald.Host) { h.HostnameAndPort = "h1:27018" }), t0, false},
		{"a typeName now", with(func(h *herald.Host) { h.TypeName = "PRIMARY" }), t0, false},
		{"another project's host of that id", with(func(h *herald.Host) { h.GroupID = "g2" }), t0, false},
		{"another host", with(func(h *herald.Host) { h.ID = "h2" }), t0, false},
	} {
		if got := w.current(tc.h, tc.now); got != tc.want {
			t.Errorf("%s: current %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The memory of written hosts stays bounded: past its cap it starts over.
func TestWrittenHostsAreBounded(t *testing.T) {
	now := time.Now()
	var w writtenHosts
	hs := make([]herald.Host, 1000)
	for round := range 2 * hostsWrittenMax / len(hs) {
		for i := range hs {
			hs[i] = herald.Host{ID: fmt.Sprintf("h%d-%d", round, i), GroupID: "g", LastSeen: herald.At(now)}
		}
		w.wrote(hs, now)
		remembered := 0
		for _, project := range w.m {
			remembered += len(project)
		}
		if remembered > hostsWrittenMax || remembered != w.n {
			t.Fatalf("%d hosts remembered (counted %d), cap %d", remembered, w.n, hostsWrittenMax)
		}
	}
}
