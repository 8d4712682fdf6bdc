package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Two sessions (of one process) never pass for each other: a session whose lease ran out and
// was taken cannot renew it or remove observations; the holder removes exactly the batch it
// read, and a batch it did not read stays.
func TestProjectLeaseIsPerSessionAndFenced(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	const g = "6b04e0000000000000000001"
	for _, b := range []string{"b1", "b2", "b3"} {
		if err := st.AppendObservations(ctx, g, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	first, ok, err := st.LockProject(ctx, g, 100*time.Millisecond)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, _ := st.LockProject(ctx, g, time.Second); ok {
		t.Fatal("a second session took a held lease")
	}
	time.Sleep(150 * time.Millisecond)
	second, ok, err := st.LockProject(ctx, g, time.Second)
	if err != nil || !ok {
		t.Fatal("the lease did not run out", err)
	}
	if err := first.Extend(ctx, time.Second); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session renewed a lease another holds: %v", err)
	}
	if err := first.DropObservation(ctx, g, []byte("b1")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session removed observations without its lease: %v", err)
	}
	if err := second.DropObservation(ctx, g, []byte("b2")); err != nil { // not the head: nothing
		t.Fatal(err)
	}
	if err := second.DropObservation(ctx, g, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	got, err := st.PendingObservations(ctx, g, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != "b2" || string(got[1]) != "b3" {
		t.Errorf("left %q, want b2 b3", got)
	}
	// Setting a batch aside is fenced and takes only the head, as dropping one is.
	if err := first.SetObservationsAside(ctx, g, []byte("b2")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session set observations aside without its lease: %v", err)
	}
	if err := second.SetObservationsAside(ctx, g, []byte("b3")); err != nil { // not the head: nothing
		t.Fatal(err)
	}
	if aside, err := st.ObservationsAside(ctx, g); err != nil || len(aside) != 0 {
		t.Errorf("set aside %q (%v) by a session without the lease, or off the head", aside, err)
	}
	if err := second.SetObservationsAside(ctx, g, []byte("b2")); err != nil {
		t.Fatal(err)
	}
	if aside, err := st.ObservationsAside(ctx, g); err != nil || len(aside) != 1 || aside[0] != "b2" {
		t.Errorf("set aside %q (%v), want b2", aside, err)
	}
	if got, err := st.PendingObservations(ctx, g, 10); err != nil || len(got) != 1 || string(got[0]) != "b3" {
		t.Errorf("left %q (%v), want b3", got, err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// leases are the tests' project leases (lease), by store and project.
var leases sync.Map

// lease is project groupID's lease on st, taken (for an hour) on a test's first engine write
// to the project and kept for its others.
func lease(tb testing.TB, st *store.Store, groupID string) *store.ProjectLock {
	tb.Helper()
	k := struct {
		st *store.Store
		g  string
	}{st, groupID}
	if l, ok := leases.Load(k); ok {
		return l.(*store.ProjectLock)
	}
	l, ok, err := st.LockProject(context.Background(), groupID, time.Hour)
	if err != nil || !ok {
		tb.Fatalf("take the lease of %s: %v %v", groupID, ok, err)
	}
	leases.Store(k, l)
	tb.Cleanup(func() { leases.Delete(k) })
	return l
}

// leasedProject is a store on a Redis of its own and a new project in it, whose lease the
// caller holds as the engine holds it when it commits: the storm benchmarks' set-up.
func leasedProject(tb testing.TB) (*redis.Client, *store.Store, store.Scope, *store.ProjectLock) {
	tb.Helper()
	rdb, st, gid := newProject(tb)
	sc := store.Scope{GroupID: gid}
	return rdb, st, sc, lease(tb, st, gid)
}

// snapshot is every key of rdb with its value, read whole by its type.
func snapshot(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		var v any
		var err error
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = rdb.SMembers(ctx, k).Result()
			slices.Sort(m)
			v = m
		default:
			v = typ
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		out[k] = fmt.Sprint(v)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// changedKeys are the keys whose values differ between two snapshots.
func changedKeys(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if w, ok := before[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Every write a session makes to the engine's state, of the project's alerts and of its
// global ones (and its unrouted Prometheus alerts), is fenced by its lease: once another session took the project (the first one's
// lease lapsed while it stalled), each fails with ErrLeaseLost and changes nothing in Redis,
// while the same write by the new holder goes through (and changes something: the check is
// not vacuous).
func TestEveryEngineWriteIsFenced(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	stale, ok, err := st.LockProject(ctx, gid, time.Hour)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	now := time.UnixMilli(time.Now().UnixMilli())
	entry := []byte(`{"deliveryId":"d1"}`) // the outbox entry of the step below (one notice)
	type state struct {
		sc     store.Scope
		a      herald.Alert // OPEN, due now, with an expiry and a notice in the outbox
		target string
		legacy string // an alert whose document is in the API's form
	}
	var scopes []*state
	for _, sc := range []store.Scope{{GroupID: gid}, {GroupID: gid, Global: true}} {
		s := &state{sc: sc, target: store.TargetID("h1")}
		s.a = herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: "h1"}
		sched := herald.Schedule{Detected: now, Next: []time.Time{now}, Sent: []int{0}, Expires: now.Add(time.Hour)}
		c := store.Change{Tracked: store.Tracked{Alert: s.a, Schedule: sched, Target: s.target, Scope: sc}, Wake: now,
			Notices: [][]byte{entry}, OutboxUntil: now.Add(-time.Second)}
		if _, err := stale.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
			t.Fatal(err)
		}
		legacy := s.a
		legacy.ID = herald.NewID(now)
		doc, err := json.Marshal(legacy)
		if err != nil {
			t.Fatal(err)
		}
		prefix := "herald:{g:" + gid + "}:alert:"
		if sc.Global {
			prefix = "herald:{global}:galert:"
		}
		if err := rdb.Set(ctx, prefix+legacy.ID, doc, 0).Err(); err != nil {
			t.Fatal(err)
		}
		s.legacy = legacy.ID
		scopes = append(scopes, s)
	}
	for _, b := range []string{"b1", "b2"} {
		if err := st.AppendObservations(ctx, gid, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	// The stale session's lease lapses (as Redis expires it) and another session takes the
	// project.
	if err := rdb.Del(ctx, holderKey(gid)).Err(); err != nil {
		t.Fatal(err)
	}
	holder, ok, err := st.LockProject(ctx, gid, time.Hour)
	if err != nil || !ok {
		t.Fatal("the new session could not take the project", ok, err)
	}

	type write struct {
		name string
		do   func(*store.ProjectLock) error
	}
	var writes []write
	for _, s := range scopes {
		sc := s.sc
		in := fmt.Sprintf(" (global %v)", sc.Global)
		writes = append(writes,
			write{"Transact opening an alert" + in, func(l *store.ProjectLock) error {
				a := s.a
				a.ID, a.HostID = herald.NewID(time.Now()), "h2"
				c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: herald.Schedule{Detected: now, Next: []time.Time{now}, Sent: []int{0}},
					Target: store.TargetID("h2"), Scope: sc}, Wake: now.Add(time.Minute)}
				_, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil })
				return err
			}},
			write{"Transact changing an alert" + in, func(l *store.ProjectLock) error {
				_, err := l.Transact(ctx, sc, []string{s.a.ID}, func(ts []store.Tracked) ([]store.Change, error) {
					if len(ts) != 1 {
						return nil, fmt.Errorf("loaded %d alerts", len(ts))
					}
					c := store.Change{Tracked: ts[0], PrevStatus: ts[0].Alert.Status, Wake: now}
					c.Tracked.Alert.Updated = herald.At(now.Add(time.Minute))
					return []store.Change{c}, nil
				})
				return err
			}},
			write{"RenewExpiring" + in, func(l *store.ProjectLock) error {
				done, err := l.RenewExpiring(ctx, sc, []store.Renewal{{ConfigID: "c1", Target: s.target, Expires: now.Add(2 * time.Hour), Digest: s.a.RefreshDigest()}})
				if err == nil && !done[0] {
					err = errors.New("the renewal was not applied")
				}
				return err
			}},
			write{"MarkNotified" + in, func(l *store.ProjectLock) error {
				return l.MarkNotified(ctx, sc, map[string]time.Time{s.a.ID: now.Add(time.Minute)})
			}},
			write{"MarkNotified of a document in the API's form" + in, func(l *store.ProjectLock) error {
				return l.MarkNotified(ctx, sc, map[string]time.Time{s.legacy: now.Add(time.Minute)})
			}},
			write{"ClaimDue" + in, func(l *store.ProjectLock) error {
				due, err := l.ClaimDue(ctx, sc, now, time.Minute, 10)
				if err == nil && len(due) == 0 {
					err = errors.New("nothing claimed")
				}
				return err
			}},
			write{"ForgetDue" + in, func(l *store.ProjectLock) error { return l.ForgetDue(ctx, sc, s.a.ID) }},
			write{"ClaimOutbox" + in, func(l *store.ProjectLock) error {
				got, err := l.ClaimOutbox(ctx, sc, now, time.Minute, 10)
				if err == nil && len(got) != 1 {
					err = fmt.Errorf("claimed %q", got)
				}
				return err
			}},
			write{"HoldOutbox" + in, func(l *store.ProjectLock) error { return l.HoldOutbox(ctx, sc, now.Add(time.Hour), entry) }},
			write{"DoneOutbox" + in, func(l *store.ProjectLock) error { return l.DoneOutbox(ctx, sc, entry) }},
			write{"SetAside" + in, func(l *store.ProjectLock) error { return l.SetAside(ctx, sc, []byte("unreadable")) }},
		)
	}
	writes = append(writes,
		write{"DropObservation", func(l *store.ProjectLock) error { return l.DropObservation(ctx, gid, []byte("b1")) }},
		write{"SetObservationsAside", func(l *store.ProjectLock) error { return l.SetObservationsAside(ctx, gid, []byte("b2")) }},
		write{"UpdateUnrouted", func(l *store.ProjectLock) error {
			u := herald.UnroutedAlert{Labels: herald.Labels{"alertname": "X"}, StartsAt: herald.At(now), UpdatedAt: herald.At(now), EndsAt: herald.At(now.Add(time.Hour))}
			_, err := l.UpdateUnrouted(ctx, gid, []store.UnroutedChange{{Target: store.TargetID("x"), Alert: &u}}, now)
			return err
		}},
	)
	for _, w := range writes {
		before := snapshot(t, rdb)
		if err := w.do(stale); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("%s by a session whose project another took: %v, want ErrLeaseLost", w.name, err)
		}
		if changed := changedKeys(before, snapshot(t, rdb)); len(changed) > 0 {
			t.Errorf("%s by a session whose project another took changed %q", w.name, changed)
		}
		if err := w.do(holder); err != nil {
			t.Errorf("%s by the holder: %v", w.name, err)
		}
		if changed := changedKeys(before, snapshot(t, rdb)); len(changed) == 0 {
			t.Errorf("%s by the holder changed nothing", w.name)
		}
	}
}

// A session that read its alerts and stalled before committing, while another took the
// project and wrote, commits nothing: its transaction watches the holder, and fails with
// ErrLeaseLost. A renewal of its own lease meanwhile is no reason to try again.
func TestTransactStalledPastItsLease(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	for _, global := range []bool{false, true} {
		gid := herald.NewID(time.Now())
		sc := store.Scope{GroupID: gid, Global: global}
		now := time.Now()
		open := func(host string) store.Change {
			a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
				Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: host}
			return store.Change{Tracked: store.Tracked{Alert: a, Schedule: herald.Schedule{Detected: now, Next: []time.Time{now}, Sent: []int{0}},
				Target: store.TargetID(host), Scope: sc}, Wake: now.Add(time.Minute)}
		}
		first, ok, err := st.LockProject(ctx, gid, time.Hour)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		// A renewal between the read and the commit.
		tries := 0
		if _, err := first.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) {
			tries++
			return []store.Change{open("h0")}, first.Extend(ctx, time.Hour)
		}); err != nil || tries != 1 {
			t.Fatalf("global %v: a transaction with a renewal meanwhile: %v after %d tries, want one", global, err, tries)
		}
		var before map[string]string
		var second *store.ProjectLock
		_, err = first.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) {
			if second == nil { // the first try: the lease lapses and another session takes over and writes
				if err := rdb.Del(ctx, holderKey(gid)).Err(); err != nil {
					return nil, err
				}
				var ok bool
				if second, ok, err = st.LockProject(ctx, gid, time.Hour); err != nil || !ok {
					return nil, fmt.Errorf("take over: %v %v", ok, err)
				}
				if _, err := second.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) {
					return []store.Change{open("h1")}, nil
				}); err != nil {
					return nil, err
				}
				before = snapshot(t, rdb)
			}
			return []store.Change{open("h1")}, nil
		})
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("global %v: a transaction that read before another session took over: %v, want ErrLeaseLost", global, err)
		}
		if changed := changedKeys(before, snapshot(t, rdb)); len(changed) > 0 {
			t.Errorf("global %v: the stalled session's transaction changed %q", global, changed)
		}
	}
}

// openChange is the change opening an alert of sc on host, due in a minute.
func openChange(sc store.Scope, host string, now time.Time) store.Change {
	a := herald.Alert{ID: herald.NewID(now), GroupID: sc.GroupID, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: host}
	return store.Change{Tracked: store.Tracked{Alert: a, Schedule: herald.Schedule{Detected: now, Next: []time.Time{now}, Sent: []int{0}},
		Target: store.TargetID(host), Scope: sc}, Wake: now.Add(time.Minute), Notices: [][]byte{[]byte(`{"deliveryId":"d-` + host + `"}`)},
		OutboxUntil: now.Add(time.Minute)}
}

// A step's commit costs two round trips, its reads (the watch of the holder, the due set and
// the documents with them) and its MULTI/EXEC, whether it opens alerts or changes loaded ones.
func TestTransactCommitsInTwoRoundTrips(t *testing.T) {
	ctx := context.Background()
	rdb, _, project, l := leasedProject(t)
	gid := project.GroupID
	trips := watchRoundTrips(rdb, false)
	for _, global := range []bool{false, true} {
		sc := store.Scope{GroupID: gid, Global: global}
		now := time.Now()
		c := openChange(sc, "h1", now)
		before := len(trips.sent())
		if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
			t.Fatal(err)
		}
		if n := len(trips.sent()) - before; n != 2 {
			t.Errorf("global %v: opening an alert took %d round trips, want 2", global, n)
		}
		before = len(trips.sent())
		if _, err := l.Transact(ctx, sc, []string{c.Tracked.Alert.ID}, func(ts []store.Tracked) ([]store.Change, error) {
			if len(ts) != 1 {
				return nil, errors.New("the alert was not loaded")
			}
			ch := store.Change{Tracked: ts[0], PrevStatus: ts[0].Alert.Status, Wake: now.Add(2 * time.Minute)}
			ch.Tracked.Alert.Updated = herald.At(now.Add(time.Second))
			return []store.Change{ch}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if n := len(trips.sent()) - before; n != 2 {
			t.Errorf("global %v: changing a loaded alert took %d round trips, want 2", global, n)
		}
	}
}

// A transaction that ends before its commit (nothing to change, the lease lost, decide's
// error) leaves no watch on its connection: the next MULTI/EXEC on it, which watches nothing,
// commits though the keys that transaction watched changed since.
func TestTransactEndedBeforeItsCommitLeavesNoWatch(t *testing.T) {
	ctx := context.Background()
	base := storetest.Redis(t)
	opt := *base.Options()
	opt.PoolSize = 1 // every command on the one connection
	rdb := redis.NewClient(&opt)
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb)
	gid := herald.NewID(time.Now())
	sc := store.Scope{GroupID: gid}
	l := lease(t, st, gid)
	now := time.Now()
	if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) {
		return []store.Change{openChange(sc, "h1", now)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ends := []struct {
		name   string
		decide func([]store.Tracked) ([]store.Change, error)
		want   error
	}{
		{"with nothing to change", func([]store.Tracked) ([]store.Change, error) { return nil, nil }, nil},
		{"with decide's error", func([]store.Tracked) ([]store.Change, error) { return nil, errBoom }, errBoom},
	}
	for _, e := range ends {
		if _, err := l.Transact(ctx, sc, nil, e.decide); !errors.Is(err, e.want) {
			t.Fatalf("%s: %v, want %v", e.name, err, e.want)
		}
		unwatched(t, base, rdb, sc, e.name)
	}
	// Another session takes the project: the first one's transaction ends lost.
	if err := base.Del(ctx, holderKey(gid)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.LockProject(ctx, gid, time.Hour); err != nil || !ok {
		t.Fatal("the new session could not take the project", ok, err)
	}
	if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) {
		return []store.Change{openChange(sc, "h2", now)}, nil
	}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a transaction of a session another replaced: %v, want ErrLeaseLost", err)
	}
	unwatched(t, base, rdb, sc, "with the lease lost")
}

var errBoom = errors.New("boom")

// unwatched fails t unless a MULTI/EXEC on rdb's connection commits after other changed the keys a
// transaction of scope sc watches (the holder and the due set).
func unwatched(t *testing.T, other, rdb *redis.Client, sc store.Scope, name string) {
	t.Helper()
	ctx := context.Background()
	due := dueKey(sc)
	if err := other.ZAdd(ctx, due, redis.Z{Score: 1, Member: "x"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.ZRem(ctx, due, "x").Err(); err != nil {
		t.Fatal(err)
	}
	// A transaction of its own (Client.Watch, watching no key): the next to take the
	// connection from the pool.
	if err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "probe", name, 0)
			return nil
		})
		return err
	}); err != nil {
		t.Errorf("a transaction ended %s: the next MULTI/EXEC on its connection: %v", name, err)
	}
}

// On a real Redis Cluster, a fenced transaction commits, and one whose lease was taken
// commits nothing.
func TestTransactOnACluster(t *testing.T) {
	ctx := context.Background()
	_, st, slotErrs := newCluster(t)
	gid := herald.NewID(time.Now())
	l, ok, err := st.LockProject(ctx, gid, time.Hour)
	if err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	sc := store.Scope{GroupID: gid}
	c := openChange(sc, "h1", time.Now())
	if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
		t.Fatalf("Transact on a Cluster: %v", err)
	}
	if _, err := st.Alert(ctx, gid, c.Tracked.Alert.ID); err != nil {
		t.Fatalf("the opened alert: %v", err)
	}
	if errs := slotErrs.Errors(); len(errs) > 0 {
		t.Errorf("slot errors: %v", errs)
	}
}
