package api

import (
	"context"
	"testing"
	"time"
)

// The answer for a host is remembered for the cache's ttl, so a transaction retried inside that
// time does not ask the resolver again; a failed lookup is not remembered.
func TestResolvedHostsAreRememberedForTheirTTL(t *testing.T) {
	h := hostCache{ttl: time.Minute, max: 2}
	now := time.Now()
	if !h.private(context.Background(), "localhost", now) {
		t.Fatal("localhost is not private")
	}
	h.answers["localhost"] = hostAnswer{private: false, at: now} // what a second lookup would overwrite
	if h.private(context.Background(), "localhost", now.Add(59*time.Second)) {
		t.Error("asked the resolver again within the ttl")
	}
	if !h.private(context.Background(), "localhost", now.Add(61*time.Second)) {
		t.Error("kept an answer past its ttl")
	}
	if h.private(context.Background(), "no-such-host.invalid", now) {
		t.Error("an unresolved name is private")
	}
	if _, ok := h.answers["no-such-host.invalid"]; ok {
		t.Error("a failed lookup was remembered")
	}
}
