package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A nonce count is taken once, and only when higher than every count of its nonce taken
// before: the same count again, a lower one and zero are refused; another nonce's counts are
// its own.
func TestNonceCountAdvancesOnlyUpward(t *testing.T) {
	st := store.New(storetest.Redis(t))
	n := st.NonceCounter()
	ctx := context.Background()
	steps := []struct {
		nonce string
		nc    uint64
		want  bool
	}{
		{"a", 1, true}, {"a", 1, false}, {"a", 3, true}, {"a", 2, false}, {"a", 3, false},
		{"b", 2, true}, {"a", 4, true}, {"b", 1, false}, {"a", 0xffffffff, true}, {"a", 0xfffffffe, false},
	}
	for _, s := range steps {
		got, err := n.Advance(ctx, s.nonce, s.nc, time.Minute)
		if err != nil || got != s.want {
			t.Fatalf("Advance(%s, %d) = %v, %v; want %v", s.nonce, s.nc, got, err, s.want)
		}
	}
}

// Of many API requests racing with the same count of one nonce, exactly one gets it.
func TestNonceCountTakenOnceUnderRace(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx := context.Background()
	for nc := uint64(1); nc <= 20; nc++ {
		var took atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := st.NonceCounter().Advance(ctx, "raced", nc, time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					took.Add(1)
				}
			})
		}
		wg.Wait()
		if took.Load() != 1 {
			t.Fatalf("count %d taken %d times", nc, took.Load())
		}
	}
}

// A count is dated at its nonce's first use, for the lifetime asked (in whole seconds, never
// shorter), and not again: a nonce's counts are forgotten one lifetime after its first use,
// not kept alive by use.
func TestNonceCountDatedAtFirstUse(t *testing.T) {
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	ctx := context.Background()
	advance(t, st, "dated", 1)
	key := store.NonceCountKey("dated")
	first, err := rdb.PTTL(ctx, key).Result()
	if err != nil || first <= 55*time.Second || first > time.Minute {
		t.Fatalf("after the first count, the count lives %v (%v), want about a minute", first, err)
	}
	if ok, err := st.NonceCounter().Advance(ctx, "dated", 2, 10*time.Minute); err != nil || !ok {
		t.Fatalf("count 2: %v %v", ok, err)
	}
	if again, err := rdb.PTTL(ctx, key).Result(); err != nil || again > first {
		t.Fatalf("a later count dated it again: %v after %v (%v)", again, first, err)
	}
	if ok, err := st.NonceCounter().Advance(ctx, "short", 1, 1500*time.Millisecond); err != nil || !ok {
		t.Fatalf("count 1: %v %v", ok, err)
	}
	if ttl, err := rdb.PTTL(ctx, store.NonceCountKey("short")).Result(); err != nil || ttl <= 1500*time.Millisecond-100*time.Millisecond {
		t.Fatalf("a lifetime of 1.5 s kept the count %v (%v): shorter than asked", ttl, err)
	}
}

// A count in the layout API processes kept before (a string with a TTL) is still compared
// and advanced in that layout, by both the counter and CheckAuth's round trip: while API
// processes of both versions serve, neither takes a count the other took.
func TestNonceCountOlderLayout(t *testing.T) {
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	ctx := context.Background()
	key := store.NonceCountKey("older")
	if err := rdb.Set(ctx, key, "5", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		nc   uint64
		want bool
	}{{5, false}, {4, false}, {6, true}, {6, false}} {
		if got, err := st.NonceCounter().Advance(ctx, "older", s.nc, time.Minute); err != nil || got != s.want {
			t.Fatalf("Advance(%d) over a string count = %v, %v; want %v", s.nc, got, err, s.want)
		}
	}
	if v, err := rdb.Get(ctx, key).Result(); err != nil || v != "6" {
		t.Fatalf("the string count is now %q (%v), want 6: left in its layout for the older processes", v, err)
	}
	k := herald.APIKey{ID: herald.NewID(time.Now()), PublicKey: "older-key", OrgID: herald.NewID(time.Now()), HA1: "ha1",
		Roles: []herald.Role{{OrgID: "o", RoleName: herald.OrgReadOnly}}}
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	limits := store.AuthLimits{Window: time.Minute, PerPair: 10, PerAddress: 10, PerName: 10}
	kept, err := st.Credential(ctx, "older-key")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		nc   uint64
		want store.AuthOutcome
	}{{6, store.AuthReplayed}, {7, store.AuthOK}} {
		check, err := st.CheckAuth(ctx, store.AuthAttempt{Name: "older-key", Address: "127.0.0.1", Limits: limits, Kept: kept,
			Nonce: "older", Count: s.nc, CountTTL: time.Minute})
		if err != nil || check.Outcome() != s.want {
			t.Fatalf("CheckAuth with count %d over a string count: %+v %v; want %v", s.nc, check, err, s.want)
		}
	}
}
