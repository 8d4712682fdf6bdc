package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// A storm of new hosts adds fields to one hash, not a key (and an index entry) each: what
// every host costs Redis is bounded.
func TestHostsTakeOneHashField(t *testing.T) {
	ctx := t.Context()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	const gid, n = "5f0000000000000000000001", 1000
	now := time.Now().Truncate(time.Second)
	hs := make([]herald.Host, n)
	for i := range hs {
		id := fmt.Sprintf("h100000-%d", 10000+i)
		hs[i] = herald.Host{ID: id, GroupID: gid, HostnameAndPort: id + ".example.com:27017", LastSeen: herald.At(now)}
	}
	if err := st.RegisterHosts(ctx, gid, hs, nil); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("%d keys after %d hosts (%v), want 1", len(keys), n, err)
	}
	if used, err := rdb.MemoryUsage(ctx, keys[0], 0).Result(); err != nil {
		t.Logf("no MEMORY USAGE here (%v): the key count alone is checked", err)
	} else if t.Logf("%d bytes a host", used/n); used > n*140 {
		t.Errorf("%d hosts take %d bytes (%d a host), want at most 140 a host", n, used, used/n)
	}
	got, err := st.Host(ctx, gid, hs[7].ID)
	if err != nil || !reflect.DeepEqual(got, hs[7]) {
		t.Errorf("Host = %+v, %v; want %+v", got, err, hs[7])
	}
}

// Hosts the previous layout wrote, a key each listed in a sorted set by lastSeen, are read
// where they are, purged there, and moved into the hash when next reported.
func TestOldLayoutHostsReadMovedAndPurged(t *testing.T) {
	ctx := t.Context()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	const gid = "5f0000000000000000000002"
	now := time.Now().Truncate(time.Second)
	old, cutoff := now.Add(-100*24*time.Hour), now.Add(-90*24*time.Hour)
	oldDoc := func(id string) string { return "herald:{g:" + gid + "}:host:" + id }
	const oldIndex = "herald:{g:" + gid + "}:hosts"
	write := func(h herald.Host) {
		t.Helper()
		b, _ := json.Marshal(h)
		if err := rdb.Set(ctx, oldDoc(h.ID), b, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.ZAdd(ctx, oldIndex, redis.Z{Score: float64(h.LastSeen.Unix()), Member: h.ID}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	gone := herald.Host{ID: "gone", GroupID: gid, HostnameAndPort: "gone:27017", LastSeen: herald.At(old)}
	kept := herald.Host{ID: "kept", GroupID: gid, TypeName: "PRIMARY", LastSeen: herald.At(now)}
	moved := herald.Host{ID: "moved", GroupID: gid, ReplicaSetName: "rs0", LastSeen: herald.At(old)}
	for _, h := range []herald.Host{gone, kept, moved} {
		write(h)
		if got, err := st.Host(ctx, gid, h.ID); err != nil || got != h {
			t.Errorf("old-layout host read as %+v, %v; want %+v", got, err, h)
		}
	}
	moved.LastSeen = herald.At(now)
	if err := st.RegisterHosts(ctx, gid, []herald.Host{moved}, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, oldDoc("moved")).Result(); err != nil || n != 0 {
		t.Errorf("a re-reported host keeps its old key (%d, %v)", n, err)
	}
	if err := rdb.ZScore(ctx, oldIndex, "moved").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a re-reported host stays in the old index (%v)", err)
	}
	n, more, err := st.PurgeHosts(ctx, gid, cutoff, 100)
	if err != nil || n != 1 || more {
		t.Fatalf("PurgeHosts = %d, %v, %v; want the one old-layout host last seen before the cutoff", n, more, err)
	}
	if _, err := st.Host(ctx, gid, "gone"); !herald.IsNotFound(err) {
		t.Errorf("purged old-layout host still read (%v)", err)
	}
	for _, h := range []herald.Host{kept, moved} {
		if got, err := st.Host(ctx, gid, h.ID); err != nil || got != h {
			t.Errorf("after the purge, host %s read as %+v, %v; want %+v", h.ID, got, err, h)
		}
	}
}

// A purge stops at its limit and says there is more; the next one takes the rest.
func TestPurgeHostsByLimit(t *testing.T) {
	ctx := t.Context()
	st := store.New(storetest.Redis(t))
	const gid = "5f0000000000000000000003"
	now := time.Now()
	old, cutoff := now.Add(-100*24*time.Hour), now.Add(-90*24*time.Hour)
	var hs []herald.Host
	for i := range 5 {
		hs = append(hs, herald.Host{ID: fmt.Sprintf("old-%d", i), GroupID: gid, LastSeen: herald.At(old)})
	}
	hs = append(hs, herald.Host{ID: "live", GroupID: gid, LastSeen: herald.At(now)})
	if err := st.RegisterHosts(ctx, gid, hs, nil); err != nil {
		t.Fatal(err)
	}
	if n, more, err := st.PurgeHosts(ctx, gid, cutoff, 3); err != nil || n != 3 || !more {
		t.Fatalf("first purge = %d, %v, %v; want 3 and more", n, more, err)
	}
	if n, more, err := st.PurgeHosts(ctx, gid, cutoff, 3); err != nil || n != 2 || more {
		t.Fatalf("second purge = %d, %v, %v; want 2 and no more", n, more, err)
	}
	if _, err := st.Host(ctx, gid, "live"); err != nil {
		t.Errorf("live host purged (%v)", err)
	}
}

// A host reported again between a purge's read and its deletion stays: the purge deletes a
// host only as it read it.
func TestPurgeKeepsHostReportedSinceRead(t *testing.T) {
	ctx := t.Context()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	const gid = "5f0000000000000000000004"
	const hash = "herald:{g:" + gid + "}:hostdocs"
	old := time.Now().Add(-100 * 24 * time.Hour)
	h := herald.Host{ID: "h1", GroupID: gid, LastSeen: herald.At(old)}
	if err := st.RegisterHosts(ctx, gid, []herald.Host{h}, map[string][]string{"h1": {"sda1"}}); err != nil {
		t.Fatal(err)
	}
	read := rdb.HGet(ctx, hash, "h1").Val()
	h.LastSeen = herald.At(time.Now())
	if err := st.RegisterHosts(ctx, gid, []herald.Host{h}, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := st.DropHosts(ctx, gid, "h1", read); err != nil || n != 0 {
		t.Errorf("dropped %d (%v) as read before its new report, want 0", n, err)
	}
	if got, err := st.Host(ctx, gid, "h1"); err != nil || !got.LastSeen.Equal(h.LastSeen.Time) {
		t.Errorf("host after the purge: %+v, %v; want %+v", got, err, h)
	}
	current := rdb.HGet(ctx, hash, "h1").Val()
	if n, err := st.DropHosts(ctx, gid, "h1", current); err != nil || n != 1 {
		t.Errorf("dropped %d (%v) as it is, want 1", n, err)
	}
	if ok, err := st.HasDisk(ctx, gid, "h1", "sda1"); err != nil || ok {
		t.Errorf("a dropped host's partition is kept (%v, %v)", ok, err)
	}
}
