package store_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The engine's key names, as store/engine.go documents them (the test reads Redis directly).
func dueKey(sc store.Scope) string {
	if sc.Global {
		return "herald:{global}:due:" + sc.GroupID
	}
	return "herald:{g:" + sc.GroupID + "}:due"
}

// holderKey is the key of project gid's lease: deleting it lapses the lease, as Redis expires it.
func holderKey(gid string) string { return "herald:{g:" + gid + "}:obs-lock" }

func outboxKey(sc store.Scope) string {
	if sc.Global {
		return "herald:{global}:outbox:" + sc.GroupID
	}
	return "herald:{g:" + sc.GroupID + "}:outbox"
}

// track writes an active alert as the engine does (document, indexes, schedule, due time
// wake unless zero) and returns it.
func track(t *testing.T, st *store.Store, sc store.Scope, status string, next []time.Time, wake time.Time) herald.Alert {
	t.Helper()
	now := time.Now()
	a := herald.Alert{ID: herald.NewID(now), GroupID: sc.GroupID, AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
		Status: status, Created: herald.At(now), Updated: herald.At(now), HostID: "h1"}
	sent := make([]int, len(next))
	c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: herald.Schedule{Detected: now, Next: next, Sent: sent},
		Target: "host:" + a.ID, Scope: sc}, Wake: wake}
	if _, err := lease(t, st, sc.GroupID).Transact(context.Background(), sc, nil, func([]store.Tracked) ([]store.Change, error) {
		return []store.Change{c}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// dueAt is an alert's due time in ms, or -1 without an entry.
func dueAt(t *testing.T, rdb *redis.Client, sc store.Scope, id string) float64 {
	t.Helper()
	b, _ := hex.DecodeString(id)
	at := float64(-1)
	for _, m := range []string{string(b), id} { // as written now, and before
		v, err := rdb.ZScore(context.Background(), dueKey(sc), m).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if at != -1 {
			t.Errorf("alert %s has two due entries", id)
		}
		at = v
	}
	return at
}

// The repair adds back exactly the active alerts with a next step and no due entry, due now,
// project and global, and never moves an existing due time.
func TestRepairDueAddsOnlyMissingEntries(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid, other := herald.NewID(time.Now()), herald.NewID(time.Now())
	proj, glob, otherGlob := store.Scope{GroupID: gid}, store.Scope{GroupID: gid, Global: true}, store.Scope{GroupID: other, Global: true}
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)

	kept := track(t, st, proj, herald.StatusOpen, []time.Time{later}, later)     // has its due time
	lostOpen := track(t, st, proj, herald.StatusOpen, []time.Time{later}, later) // lost it
	lostTracking := track(t, st, proj, herald.StatusTracking, []time.Time{later}, later)
	done := track(t, st, proj, herald.StatusOpen, []time.Time{{}}, time.Time{}) // nothing more to send: no due entry, rightly
	lostAck := track(t, st, proj, herald.StatusOpen, []time.Time{{}}, later)    // acknowledged: due when it expires
	if _, err := st.UpdateAlert(ctx, false, gid, lostAck.ID, func(a *herald.Alert) ([]herald.Event, error) {
		a.AcknowledgedUntil = herald.At(later)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	lostGlobal := track(t, st, glob, herald.StatusOpen, []time.Time{later}, later)
	keptGlobal := track(t, st, otherGlob, herald.StatusOpen, []time.Time{later}, later)
	lostOtherGlobal := track(t, st, otherGlob, herald.StatusOpen, []time.Time{later}, later)
	for _, l := range []struct {
		sc store.Scope
		id string
	}{{proj, lostOpen.ID}, {proj, lostTracking.ID}, {proj, lostAck.ID}, {glob, lostGlobal.ID}, {otherGlob, lostOtherGlobal.ID}} {
		if err := lease(t, st, l.sc.GroupID).ForgetDue(ctx, l.sc, l.id); err != nil {
			t.Fatal(err)
		}
	}
	// An ended alert: not active, never put back.
	closed := track(t, st, proj, herald.StatusOpen, []time.Time{later}, later)
	if _, err := lease(t, st, proj.GroupID).Transact(ctx, proj, []string{closed.ID}, func(ts []store.Tracked) ([]store.Change, error) {
		c := store.Change{Tracked: ts[0], PrevStatus: herald.StatusOpen}
		c.Tracked.Alert.Status = herald.StatusClosed
		return []store.Change{c}, nil
	}); err != nil {
		t.Fatal(err)
	}

	now := time.Now().Truncate(time.Millisecond)
	n, err := st.RepairDue(ctx, gid, now)
	if err != nil || n != 3 {
		t.Fatalf("RepairDue added %d (%v), want 3", n, err)
	}
	byProject, err := st.RepairGlobalDue(ctx, now)
	if err != nil || len(byProject) != 2 || byProject[gid] != 1 || byProject[other] != 1 {
		t.Fatalf("RepairGlobalDue added %v (%v), want one in each project", byProject, err)
	}
	ms := float64(now.UnixMilli())
	for _, c := range []struct {
		name string
		sc   store.Scope
		id   string
		want float64
	}{
		{"kept", proj, kept.ID, float64(later.UnixMilli())},
		{"lost open", proj, lostOpen.ID, ms},
		{"lost tracking", proj, lostTracking.ID, ms},
		{"lost acknowledged", proj, lostAck.ID, ms},
		{"nothing more to send", proj, done.ID, -1},
		{"closed", proj, closed.ID, -1},
		{"lost global", glob, lostGlobal.ID, ms},
		{"kept global", otherGlob, keptGlobal.ID, float64(later.UnixMilli())},
		{"lost global of another project", otherGlob, lostOtherGlobal.ID, ms},
	} {
		if got := dueAt(t, rdb, c.sc, c.id); got != c.want {
			t.Errorf("%s: due %v, want %v", c.name, got, c.want)
		}
	}

	// A second run finds nothing to do and moves nothing.
	if n, err := st.RepairDue(ctx, gid, now.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("second RepairDue added %d (%v)", n, err)
	}
	if m, err := st.RepairGlobalDue(ctx, now.Add(time.Minute)); err != nil || len(m) != 0 {
		t.Fatalf("second RepairGlobalDue added %v (%v)", m, err)
	}
	if got := dueAt(t, rdb, proj, lostOpen.ID); got != ms {
		t.Errorf("a repaired due time moved: %v, want %v", got, ms)
	}
	if at, ok, err := st.ProjectNextDue(ctx, gid); err != nil || !ok || !at.Equal(now) {
		t.Errorf("ProjectNextDue = %v %v %v, want %v", at, ok, err, now)
	}
}

// The repair pages through more alerts than one page holds.
func TestRepairDuePages(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	later := time.Now().Add(time.Hour)
	const n = 1203
	ids := make([]string, 0, n)
	for range n {
		ids = append(ids, track(t, st, sc, herald.StatusOpen, []time.Time{later}, later).ID)
	}
	if err := lease(t, st, sc.GroupID).ForgetDue(ctx, sc, ids...); err != nil {
		t.Fatal(err)
	}
	if got, err := st.RepairDue(ctx, gid, time.Now()); err != nil || got != n {
		t.Fatalf("RepairDue added %d (%v), want %d", got, err, n)
	}
}

// Alerts with nothing more to send rightly have no due entry; they do not hide an entry lost
// later: the run after the loss puts it back.
func TestRepairDueWithSettledAlerts(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	for range 3 {
		track(t, st, sc, herald.StatusOpen, []time.Time{{}}, time.Time{}) // nothing more to send
	}
	pending := []herald.Alert{
		track(t, st, sc, herald.StatusOpen, []time.Time{later}, later),
		track(t, st, sc, herald.StatusOpen, []time.Time{later}, later),
	}
	now := time.Now().Truncate(time.Millisecond)
	for run := range 2 {
		if n, err := st.RepairDue(ctx, gid, now.Add(time.Duration(run)*time.Second)); err != nil || n != 0 {
			t.Fatalf("run %d with nothing lost added %d (%v)", run, n, err)
		}
	}
	if err := lease(t, st, sc.GroupID).ForgetDue(ctx, sc, pending[1].ID); err != nil {
		t.Fatal(err)
	}
	repairedAt := now.Add(2 * time.Second)
	if n, err := st.RepairDue(ctx, gid, repairedAt); err != nil || n != 1 {
		t.Fatalf("after a lost entry RepairDue added %d (%v), want 1", n, err)
	}
	if got, want := dueAt(t, rdb, sc, pending[1].ID), float64(repairedAt.UnixMilli()); got != want {
		t.Errorf("lost entry: due %v, want %v", got, want)
	}
	if got, want := dueAt(t, rdb, sc, pending[0].ID), float64(later.UnixMilli()); got != want {
		t.Errorf("kept entry: due %v, want %v", got, want)
	}
}

// Waiting work: observation batches, and outbox notices whose lease ran out (not those still
// leased), project and global.
func TestWaiting(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	now := time.Now()
	if w, err := st.Waiting(ctx, gid, now); err != nil || w.Any() {
		t.Fatalf("empty project: %+v %v", w, err)
	}
	ms := func(t time.Time) float64 { return float64(t.UnixMilli()) }
	rdb.ZAdd(ctx, outboxKey(store.Scope{GroupID: gid}), redis.Z{Score: ms(now.Add(time.Minute)), Member: "leased"})
	if w, err := st.Waiting(ctx, gid, now); err != nil || w.Any() || !w.OutboxClaimedUntil.Equal(time.UnixMilli(now.Add(time.Minute).UnixMilli())) {
		t.Fatalf("a notice still leased is not waiting, but says when it comes back: %+v %v", w, err)
	}
	rdb.ZAdd(ctx, outboxKey(store.Scope{GroupID: gid}), redis.Z{Score: ms(now), Member: "abandoned"})
	rdb.ZAdd(ctx, outboxKey(store.Scope{GroupID: gid, Global: true}), redis.Z{Score: ms(now.Add(-time.Second)), Member: "abandoned"})
	if err := st.AppendObservations(ctx, gid, []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	w, err := st.Waiting(ctx, gid, now)
	if err != nil || w.Observations != 1 || w.Outbox != 2 || !w.Any() {
		t.Fatalf("Waiting = %+v %v, want 1 batch and 2 notices", w, err)
	}
	// What Waiting counts is what ClaimOutbox hands out.
	got, err := lease(t, st, gid).ClaimOutbox(ctx, store.Scope{GroupID: gid}, now, time.Minute, 10)
	if err != nil || len(got) != 1 || string(got[0]) != "abandoned" {
		t.Fatalf("ClaimOutbox = %q %v", got, err)
	}
}

// A project's next work, read as a session ends: the earliest due alert and the earliest
// claim after now, each the earlier of the project's and its global alerts'; a claim that ran
// out by now is not one (the session takes it over itself).
func TestProjectNextWork(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	now := time.UnixMilli(time.Now().UnixMilli())
	proj, glob := store.Scope{GroupID: gid}, store.Scope{GroupID: gid, Global: true}
	if w, err := st.ProjectNextWork(ctx, gid, now); err != nil || w != (store.NextWork{}) {
		t.Fatalf("empty project: %+v %v", w, err)
	}
	ms := func(d time.Duration) float64 { return float64(now.Add(d).UnixMilli()) }
	rdb.ZAdd(ctx, dueKey(proj), redis.Z{Score: ms(time.Hour), Member: "a"}, redis.Z{Score: ms(2 * time.Hour), Member: "b"})
	rdb.ZAdd(ctx, dueKey(glob), redis.Z{Score: ms(30 * time.Minute), Member: "g"})
	rdb.ZAdd(ctx, outboxKey(proj), redis.Z{Score: ms(-time.Second), Member: "ran out"}, redis.Z{Score: ms(8 * time.Second), Member: "claimed"})
	rdb.ZAdd(ctx, outboxKey(glob), redis.Z{Score: ms(5 * time.Second), Member: "claimed"})
	want := store.NextWork{Due: now.Add(30 * time.Minute), ClaimedUntil: now.Add(5 * time.Second)}
	if w, err := st.ProjectNextWork(ctx, gid, now); err != nil || !w.Due.Equal(want.Due) || !w.ClaimedUntil.Equal(want.ClaimedUntil) {
		t.Errorf("ProjectNextWork = %+v %v, want %+v", w, err, want)
	}
	if at, ok, err := st.ProjectNextDue(ctx, gid); err != nil || !ok || !at.Equal(want.Due) {
		t.Errorf("ProjectNextDue = %v %v %v, want %v", at, ok, err, want.Due)
	}
}

// One scheduler leads at a time; it renews its lease, another takes over once it resigns.
func TestSchedulerLeadership(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	for _, c := range []struct {
		token string
		want  bool
	}{{"a", true}, {"b", false}, {"a", true}, {"b", false}} {
		if ok, err := st.LeadScheduler(ctx, c.token, time.Minute); err != nil || ok != c.want {
			t.Fatalf("%s leads: %v %v, want %v", c.token, ok, err, c.want)
		}
	}
	if err := st.ResignScheduler(ctx, "b"); err != nil { // not the leader: changes nothing
		t.Fatal(err)
	}
	if ok, _ := st.LeadScheduler(ctx, "b", time.Minute); ok {
		t.Fatal("b resigned a lease it did not hold")
	}
	if err := st.ResignScheduler(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.LeadScheduler(ctx, "b", time.Minute); err != nil || !ok {
		t.Fatalf("b does not take over: %v %v", ok, err)
	}
}

// Open alerts and schedules written before ids and targets were kept as their 12 bytes (under
// the whole target, and the whole id, with the schedule as JSON) are still found by the engine,
// and leave with the alert.
func TestEngineStateOfTheLayoutBefore(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	now := time.Now().Truncate(time.Millisecond)
	a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: "h1"}
	target := store.TargetID("h1")
	prefix := "herald:{g:" + gid + "}:"
	doc, _ := json.Marshal(a)
	rdb.Set(ctx, prefix+"alert:"+a.ID, doc, 0)
	rdb.ZAdd(ctx, prefix+"alerts:status:OPEN", redis.Z{Score: float64(now.Unix()), Member: a.ID})
	rdb.HSet(ctx, prefix+"open:"+a.AlertConfigID, target, a.ID)
	next := now.Add(time.Hour)
	rdb.HSet(ctx, prefix+"sched", a.ID, fmt.Sprintf(`{"d":%d,"n":[%d],"s":[1],"t":%q}`, now.UnixMilli(), next.UnixMilli(), target))

	// Its due entry lost: the repair finds it by its whole id in the OPEN index.
	if added, err := st.RepairDue(ctx, gid, now); err != nil || added != 1 {
		t.Fatalf("repair added %d, %v; want the alert listed before", added, err)
	}
	ids, err := st.OpenAlertIDs(ctx, sc, [][2]string{{a.AlertConfigID, target}, {a.AlertConfigID, store.TargetID("h2")}})
	if err != nil || ids[0] != a.ID || ids[1] != "" {
		t.Fatalf("open alerts %q, %v", ids, err)
	}
	s, err := st.Schedule(ctx, sc, a.ID)
	if err != nil || !s.Detected.Equal(now) || !s.Next[0].Equal(next) || s.Sent[0] != 1 {
		t.Fatalf("schedule %+v, %v", s, err)
	}
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{a.ID}, func(loaded []store.Tracked) ([]store.Change, error) {
		if len(loaded) != 1 || loaded[0].Target != target {
			t.Fatalf("loaded %+v", loaded)
		}
		c := loaded[0]
		c.Alert.Status = herald.StatusClosed
		return []store.Change{{Tracked: c, PrevStatus: herald.StatusOpen}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{prefix + "open:" + a.AlertConfigID, prefix + "sched"} {
		if n, _ := rdb.HLen(ctx, k).Result(); n != 0 {
			t.Errorf("%s still has %d fields after the alert closed", k, n)
		}
	}
	if n, _ := rdb.ZCard(ctx, prefix+"alerts:status:OPEN").Result(); n != 0 {
		t.Errorf("the OPEN index still lists the closed alert")
	}
	if ids, _ := st.OpenAlertIDs(ctx, sc, [][2]string{{a.AlertConfigID, target}}); ids[0] != "" {
		t.Errorf("the closed alert is still open for its target: %q", ids[0])
	}
}

// Due entries written before due entries were the ids' 12 bytes (under the whole id) are still
// found by the repair, renewed, moved earlier, claimed, and replaced (never doubled) when the
// engine next commits the alert.
func TestDueEntriesOfTheLayoutBefore(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid, cfg := herald.NewID(time.Now()), herald.NewID(time.Now())
	sc := store.Scope{GroupID: gid}
	now := time.Now().Truncate(time.Millisecond)
	prefix := "herald:{g:" + gid + "}:"
	old := func(host string) herald.Alert {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: cfg, EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: host}
		doc, _ := json.Marshal(a)
		rdb.Set(ctx, prefix+"alert:"+a.ID, doc, 0)
		rdb.ZAdd(ctx, prefix+"alerts:status:OPEN", redis.Z{Score: float64(now.Unix()), Member: a.ID})
		rdb.HSet(ctx, prefix+"open:"+cfg, store.TargetID(host), a.ID)
		rdb.HSet(ctx, prefix+"sched", a.ID, fmt.Sprintf(`{"d":%d,"n":[%d],"s":[1],"t":%q}`, now.UnixMilli(), now.Add(time.Hour).UnixMilli(), store.TargetID(host)))
		return a
	}
	a, b := old("h1"), old("h2")
	expires := now.Add(4 * time.Minute)
	rdb.HSet(ctx, prefix+"expiring", a.ID, fmt.Sprintf("%d 0 %s", expires.UnixMilli(), a.RefreshDigest()))
	rdb.ZAdd(ctx, dueKey(sc), redis.Z{Score: float64(expires.UnixMilli()), Member: a.ID})

	// b has lost its entry: the repair adds it; a keeps its own.
	if added, err := st.RepairDue(ctx, gid, now); err != nil || added != 1 {
		t.Fatalf("repair added %d, %v; want 1", added, err)
	}
	if got := dueAt(t, rdb, sc, b.ID); got != float64(now.UnixMilli()) {
		t.Errorf("b due %v, want the repair's %v", got, now.UnixMilli())
	}
	// A renewal moves a's entry with its expiry, an acknowledgement moves it earlier.
	renewed := now.Add(5 * time.Minute)
	if done, err := lease(t, st, sc.GroupID).RenewExpiring(ctx, sc, []store.Renewal{{ConfigID: cfg, Target: store.TargetID("h1"), Expires: renewed, Digest: a.RefreshDigest()}}); err != nil || !done[0] {
		t.Fatalf("renewal applied %v, %v", done, err)
	}
	if got := dueAt(t, rdb, sc, a.ID); got != float64(renewed.UnixMilli()) {
		t.Errorf("renewed: a due %v, want %v", got, renewed.UnixMilli())
	}
	earlier := now.Add(time.Minute)
	if err := st.WakeNoLaterThan(ctx, sc, a.ID, earlier); err != nil {
		t.Fatal(err)
	}
	if got := dueAt(t, rdb, sc, a.ID); got != float64(earlier.UnixMilli()) {
		t.Errorf("woken earlier: a due %v, want %v", got, earlier.UnixMilli())
	}
	claimed, err := lease(t, st, sc.GroupID).ClaimDue(ctx, sc, now.Add(time.Hour), time.Minute, 10)
	if err != nil || len(claimed) != 2 || claimed[0].AlertID != b.ID || claimed[1].AlertID != a.ID {
		t.Fatalf("claimed %+v, %v; want b then a", claimed, err)
	}
	// The engine's next commit of a replaces its entry.
	wake := now.Add(2 * time.Hour)
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{a.ID}, func(loaded []store.Tracked) ([]store.Change, error) {
		return []store.Change{{Tracked: loaded[0], PrevStatus: herald.StatusOpen, Wake: wake}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := dueAt(t, rdb, sc, a.ID); got != float64(wake.UnixMilli()) {
		t.Errorf("committed: a due %v, want %v", got, wake.UnixMilli())
	}
	if n, _ := rdb.ZCard(ctx, dueKey(sc)).Result(); n != 2 {
		t.Errorf("the due set holds %d entries, want 2", n)
	}
	if err := lease(t, st, sc.GroupID).ForgetDue(ctx, sc, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, dueKey(sc)).Result(); n != 0 {
		t.Errorf("the due set holds %d entries after both were forgotten", n)
	}
}

// commandLog records the commands a client sends (name and first key), alone or pipelined.
type commandLog struct {
	mu   sync.Mutex
	cmds []string
}

func (l *commandLog) add(c redis.Cmder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := c.Name()
	if args := c.Args(); len(args) > 1 {
		s += " " + fmt.Sprint(args[1])
	}
	l.cmds = append(l.cmds, s)
}

func (l *commandLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.cmds
	l.cmds = nil
	return got
}

// The global repair reads counts, not every global alert, while they say nothing can be
// missing (as RepairDue does for a project): global alerts of a global configuration can be
// many, and the repair runs every few seconds. Alerts with nothing more to send do not make
// every run read them all, and an entry lost later is still put back by the next run.
func TestRepairGlobalDueReadsCountsWhileNothingIsMissing(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	log := &commandLog{}
	rdb.AddHook(eachCommand(log.add))
	onlyCounts := func(what string) {
		t.Helper()
		for _, c := range log.take() {
			if strings.HasPrefix(c, "hello ") || strings.HasPrefix(c, "client ") {
				continue // a new connection's handshake
			}
			if !strings.HasPrefix(c, "zcard ") && c != "zrange herald:{global}:groups" {
				t.Errorf("%s: the repair sent %q; want only counts (ZCARD) and the list of projects", what, c)
			}
		}
	}
	now := time.Now().Truncate(time.Millisecond)
	if m, err := st.RepairGlobalDue(ctx, now); err != nil || len(m) != 0 {
		t.Fatalf("no global alerts: added %v (%v)", m, err)
	}
	onlyCounts("no global alerts")

	gids := []string{herald.NewID(now), herald.NewID(now)}
	for _, gid := range gids { // listed as CreateProject lists a project
		if err := rdb.ZAdd(ctx, "herald:{global}:groups", redis.Z{Score: float64(now.Unix()), Member: gid}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(time.Hour)
	var pending []herald.Alert
	for _, gid := range gids {
		sc := store.Scope{GroupID: gid, Global: true}
		pending = append(pending, track(t, st, sc, herald.StatusOpen, []time.Time{later}, later))
		track(t, st, sc, herald.StatusOpen, []time.Time{{}}, time.Time{}) // nothing more to send
	}
	log.take()
	// The first run reads them (two active alerts have no entry), and finds none missing.
	if m, err := st.RepairGlobalDue(ctx, now); err != nil || len(m) != 0 {
		t.Fatalf("nothing lost: added %v (%v)", m, err)
	}
	log.take()
	for run := 1; run <= 2; run++ {
		if m, err := st.RepairGlobalDue(ctx, now.Add(time.Duration(run)*time.Second)); err != nil || len(m) != 0 {
			t.Fatalf("run %d, nothing lost: added %v (%v)", run, m, err)
		}
		onlyCounts(fmt.Sprintf("run %d, nothing lost", run))
	}

	lost := store.Scope{GroupID: gids[1], Global: true}
	if err := lease(t, st, lost.GroupID).ForgetDue(ctx, lost, pending[1].ID); err != nil {
		t.Fatal(err)
	}
	repairedAt := now.Add(3 * time.Second)
	if m, err := st.RepairGlobalDue(ctx, repairedAt); err != nil || len(m) != 1 || m[gids[1]] != 1 {
		t.Fatalf("after a lost entry RepairGlobalDue added %v (%v), want one in %s", m, err, gids[1])
	}
	if got, want := dueAt(t, rdb, lost, pending[1].ID), float64(repairedAt.UnixMilli()); got != want {
		t.Errorf("lost entry: due %v, want %v", got, want)
	}
	if got, want := dueAt(t, rdb, store.Scope{GroupID: gids[0], Global: true}, pending[0].ID), float64(later.UnixMilli()); got != want {
		t.Errorf("kept entry: due %v, want %v", got, want)
	}
}
