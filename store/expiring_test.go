package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// A renewal moves an expiring alert's expiry and, while the due time is the one the engine
// committed, its due time, without touching the alert; it never moves a claimed due time, nor
// one past an acknowledgement's end; and it refuses what only the engine may decide.
func TestRenewExpiring(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	t0 := time.UnixMilli(time.Now().UnixMilli())
	m := func(x int) time.Time { return t0.Add(time.Duration(x) * time.Minute) }
	labels := herald.Labels{"alertname": "X"}

	open := func(target string, next, expires time.Time) herald.Alert {
		t.Helper()
		a := herald.Alert{ID: herald.NewID(t0), GroupID: gid, AlertConfigID: "c1", EventTypeName: herald.EventTypePrometheusAlert,
			Status: herald.StatusOpen, Created: herald.At(t0), Updated: herald.At(t0), Labels: labels, Fingerprint: labels.Fingerprint(),
			Annotations: herald.Labels{"summary": "s"}}
		sched := herald.Schedule{Detected: t0, Next: []time.Time{next}, Sent: []int{1}, Expires: expires}
		c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: target, Scope: sc}, Wake: herald.Wake(a, sched)}
		if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
			t.Fatal(err)
		}
		return a
	}
	due := func() time.Time {
		t.Helper()
		at, ok, err := st.ProjectNextDue(ctx, gid)
		if err != nil || !ok {
			t.Fatalf("ProjectNextDue: %v %v", ok, err)
		}
		return at
	}
	renew := func(target string, expires time.Time, digest string) bool {
		t.Helper()
		done, err := lease(t, st, sc.GroupID).RenewExpiring(ctx, sc, []store.Renewal{{ConfigID: "c1", Target: target, Expires: expires, Digest: digest}})
		if err != nil {
			t.Fatal(err)
		}
		return done[0]
	}
	expiresOf := func(id string) time.Time {
		t.Helper()
		s, err := st.Schedule(ctx, sc, id)
		if err != nil {
			t.Fatal(err)
		}
		return s.Expires
	}

	a := open("T1", m(60), m(4))
	digest := a.RefreshDigest()
	if !due().Equal(m(4)) || !expiresOf(a.ID).Equal(m(4)) {
		t.Fatalf("opened: due %v, expires %v; want both at minute 4", due(), expiresOf(a.ID))
	}
	before, _ := st.Alert(ctx, gid, a.ID)
	if !renew("T1", m(5), digest) {
		t.Fatal("a renewal with the alert's digest was not applied")
	}
	if !due().Equal(m(5)) || !expiresOf(a.ID).Equal(m(5)) {
		t.Errorf("renewed to minute 5: due %v, expires %v", due(), expiresOf(a.ID))
	}
	if after, _ := st.Alert(ctx, gid, a.ID); after.Updated != before.Updated || after.Status != before.Status {
		t.Errorf("the renewal changed the alert: %+v", after)
	}
	// The engine sees the renewed expiry when it loads the alert.
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{a.ID}, func(ts []store.Tracked) ([]store.Change, error) {
		if len(ts) != 1 || !ts[0].Schedule.Expires.Equal(m(5)) {
			t.Errorf("loaded %+v, want the expiry at minute 5", ts)
		}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}

	if renew("T1", m(6), herald.RefreshDigest(herald.Labels{"summary": "other"}, "")) {
		t.Error("a renewal with other annotations was applied: the engine must record them")
	}
	if renew("T-unknown", m(6), digest) {
		t.Error("a renewal of no alert was applied")
	}
	if !expiresOf(a.ID).Equal(m(5)) {
		t.Errorf("a refused renewal moved the expiry to %v", expiresOf(a.ID))
	}

	// Claimed by a session: the due time stays the claim's, the expiry moves.
	claimed, err := lease(t, st, sc.GroupID).ClaimDue(ctx, sc, m(5), time.Minute, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if !renew("T1", m(8), digest) || !due().Equal(m(6)) || !expiresOf(a.ID).Equal(m(8)) {
		t.Errorf("renewing a claimed alert: due %v (want the claim's minute 6), expires %v", due(), expiresOf(a.ID))
	}

	// Acknowledged until minute 10 while the expiry (minute 4) comes first: a renewal to minute
	// 20 wakes the alert at minute 10, when its acknowledgement ends, not at 20.
	if err := lease(t, st, sc.GroupID).ForgetDue(ctx, sc, a.ID); err != nil {
		t.Fatal(err)
	}
	b := open("T2", m(60), m(4))
	if err := st.WakeNoLaterThan(ctx, sc, b.ID, m(10)); err != nil {
		t.Fatal(err)
	}
	if !due().Equal(m(4)) {
		t.Errorf("an acknowledgement ending after the expiry moved the due time to %v", due())
	}
	if !renew("T2", m(20), digest) || !due().Equal(m(10)) {
		t.Errorf("renewed past the acknowledgement's end: due %v, want minute 10", due())
	}

	// Closed: the entry is gone and a renewal is the engine's again.
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{b.ID}, func(ts []store.Tracked) ([]store.Change, error) {
		st := herald.Clear(ts[0].Alert, ts[0].Schedule, false, m(21))
		return []store.Change{{Tracked: store.Tracked{Alert: st.Alert, Schedule: st.Schedule, Target: ts[0].Target, Scope: sc}, PrevStatus: herald.StatusOpen}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if renew("T2", m(30), digest) {
		t.Error("a closed alert was renewed")
	}
}

// An alert from Prometheus with nothing more to send still closes at its expiry: if its due
// entry is lost, the repair puts it back.
func TestRepairDueKeepsExpiringAlerts(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	now := time.Now()
	a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c1", EventTypeName: herald.EventTypePrometheusAlert,
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), Labels: herald.Labels{"alertname": "X"}}
	sched := herald.Schedule{Detected: now, Next: []time.Time{{}}, Sent: []int{1}, Expires: now.Add(time.Minute)}
	c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: "T", Scope: sc}, Wake: herald.Wake(a, sched)}
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := lease(t, st, sc.GroupID).ForgetDue(ctx, sc, a.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := st.RepairDue(ctx, gid, now); err != nil || n != 1 {
		t.Fatalf("RepairDue added %d (%v), want the expiring alert", n, err)
	}
}

// BenchmarkRenewExpiring: 50,000 firing alerts from Prometheus re-sent once per iteration, in
// batches of 500 (one script call each), as the engine renews them. It reports the time per
// re-sent alert and Redis's own CPU time per alert (from INFO commandstats).
//
//	go test ./store/ -run '^$' -bench RenewExpiring -benchtime 5x
func BenchmarkRenewExpiring(b *testing.B) {
	const alerts, batch = 50000, 500
	ctx := context.Background()
	rdb, _, sc, l := leasedProject(b)
	gid := sc.GroupID
	now := time.UnixMilli(time.Now().UnixMilli())
	digest := herald.RefreshDigest(herald.Labels{"summary": "s"}, "")
	rs := make([]store.Renewal, alerts)
	for off := 0; off < alerts; off += batch {
		var cs []store.Change
		for i := off; i < off+batch; i++ {
			labels := herald.Labels{"alertname": "X", "i": strconv.Itoa(i)}
			a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c1", EventTypeName: herald.EventTypePrometheusAlert,
				Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), Labels: labels, Fingerprint: labels.Fingerprint(),
				Annotations: herald.Labels{"summary": "s"}}
			sched := herald.Schedule{Detected: now, Next: []time.Time{now.Add(time.Hour)}, Sent: []int{1}, Expires: now.Add(time.Minute)}
			target := store.TargetID(labels.Fingerprint())
			cs = append(cs, store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: target, Scope: sc}, Wake: herald.Wake(a, sched)})
			rs[i] = store.Renewal{ConfigID: "c1", Target: target, Digest: digest}
		}
		if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return cs, nil }); err != nil {
			b.Fatal(err)
		}
	}
	redisUsec := func() float64 { return scriptsUsec(b, rdb) }
	before := redisUsec()
	b.ResetTimer()
	for n := range b.N {
		for i := range rs {
			rs[i].Expires = now.Add(time.Duration(2+n) * time.Minute)
		}
		for off := 0; off < alerts; off += batch {
			done, err := l.RenewExpiring(ctx, sc, rs[off:off+batch])
			if err != nil || !done[0] || !done[batch-1] {
				b.Fatalf("renewal: %v %v", done[:1], err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*alerts), "ns/alert")
	b.ReportMetric((redisUsec()-before)*1000/float64(b.N*alerts), "redis-ns/alert")
	b.ReportMetric(0, "ns/op")
}

// scriptsUsec is the CPU time Redis spent so far running scripts, in µs (INFO commandstats:
// a script's time holds the commands it ran).
func scriptsUsec(tb testing.TB, rdb *redis.Client) float64 {
	tb.Helper()
	usec := commandUsec(tb, rdb)
	return usec["evalsha"] + usec["eval"]
}
