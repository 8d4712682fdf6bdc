package store_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Re-reported hosts are not rewritten while only their lastSeen moves, by less than
// store.HostSeenPrecision; a changed document is written at once.
func TestRegisterHostsWritesWhatChanged(t *testing.T) {
	ctx := t.Context()
	st := store.New(storetest.Redis(t))
	t0 := time.Now().Truncate(time.Second)
	register := func(h herald.Host) {
		t.Helper()
		if err := st.RegisterHosts(ctx, "g1", []herald.Host{h}, nil); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen := func() time.Time {
		t.Helper()
		h, err := st.Host(ctx, "g1", "h1")
		if err != nil {
			t.Fatal(err)
		}
		return h.LastSeen.Time
	}
	h := herald.Host{ID: "h1", GroupID: "g1", HostnameAndPort: "h1:27017", LastSeen: herald.At(t0)}
	register(h)
	h.LastSeen = herald.At(t0.Add(30 * time.Second))
	register(h)
	if got := lastSeen(); !got.Equal(t0) {
		t.Errorf("lastSeen %s after a re-report 30 s later, want %s (kept to the precision)", got, t0)
	}
	h.LastSeen = herald.At(t0.Add(store.HostSeenPrecision))
	register(h)
	if got := lastSeen(); !got.Equal(h.LastSeen.Time) {
		t.Errorf("lastSeen %s after a re-report a precision later, want %s", got, h.LastSeen)
	}
	h.LastSeen, h.TypeName = herald.At(t0.Add(store.HostSeenPrecision+time.Second)), "PRIMARY"
	register(h)
	got, err := st.Host(ctx, "g1", "h1")
	if err != nil || got.TypeName != "PRIMARY" || !got.LastSeen.Equal(h.LastSeen.Time) {
		t.Errorf("host %+v (%v) after its typeName changed, want %+v", got, err, h)
	}
}
