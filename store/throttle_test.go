package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The counters: a pair is refused at PerPair failures, an address at PerAddress, a name at
// PerName only to addresses that failed on it; each counter lives one window from its first
// failure.
func TestAuthThrottle(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	l := store.AuthLimits{Window: 300 * time.Millisecond, PerPair: 2, PerAddress: 4, PerName: 3}
	refused := func(name, addr string) time.Duration {
		t.Helper()
		d, err := st.AuthRefused(ctx, name, addr, l)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	fail := func(name, addr string) {
		t.Helper()
		if err := st.AuthFailed(ctx, name, addr, l); err != nil {
			t.Fatal(err)
		}
	}
	fail("k", "a1")
	if refused("k", "a1") != 0 {
		t.Error("refused after one failure")
	}
	fail("k", "a1")
	if d := refused("k", "a1"); d <= 0 || d > l.Window {
		t.Errorf("pair at its limit: refused for %s, want (0, %s]", d, l.Window)
	}
	if refused("k", "a2") != 0 || refused("other", "a1") != 0 {
		t.Error("a pair's limit refused another address or name")
	}
	fail("k", "a2") // the name's third failure
	if refused("k", "a2") == 0 {
		t.Error("a name over its limit is not refused to an address that failed on it")
	}
	if refused("k", "a3") != 0 {
		t.Error("a name over its limit is refused to an address that never failed on it")
	}
	for _, n := range []string{"x", "y"} {
		fail(n, "a1")
	}
	if refused("fresh", "a1") == 0 {
		t.Error("an address over its limit is not refused for a fresh name")
	}
	deadline := time.Now().Add(5 * time.Second)
	for refused("k", "a1") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("still refused long after the window")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
