package store_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// alertAt writes an alert created at created in status, resolved at resolved (zero: none)
// and updated at updated, as it would be after its life: opened (into the configuration's
// index), then moved to status.
func alertAt(t *testing.T, st *store.Store, global bool, gid, status string, created, updated, resolved time.Time) herald.Alert {
	t.Helper()
	ctx := context.Background()
	a := herald.Alert{ID: herald.NewID(created), GroupID: gid, AlertConfigID: "cfg1", EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(created), Updated: herald.At(created)}
	if err := st.SaveAlert(ctx, a, global, ""); err != nil {
		t.Fatal(err)
	}
	a.Status, a.Updated = status, herald.At(updated)
	if !resolved.IsZero() {
		a.Resolved = herald.At(resolved)
	}
	if err := st.SaveAlert(ctx, a, global, herald.StatusOpen); err != nil {
		t.Fatal(err)
	}
	return a
}

func eventAt(t *testing.T, st *store.Store, sc store.EventScope, typ string, at time.Time) herald.Event {
	t.Helper()
	e := herald.NewEvent(typ, herald.Principal{}, herald.Scope{GroupID: sc.GroupID, OrgID: sc.OrgID}, at)
	e.Created = herald.At(at)
	if err := st.RecordEvent(context.Background(), sc, e); err != nil {
		t.Fatal(err)
	}
	return e
}

// references lists every key of Redis that still holds id: a document key naming it, or a
// sorted set or list with it as a member.
func references(t *testing.T, rdb *redis.Client, id string) []string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "herald:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if strings.Contains(k, id) {
			out = append(out, k)
			continue
		}
		// Indexes and hashes name an id of herald's form by its 12 bytes (or their base64),
		// or else whole.
		raw, _ := hex.DecodeString(id)
		for _, m := range []string{id, string(raw), base64.RawURLEncoding.EncodeToString(raw)} {
			switch typ, _ := rdb.Type(ctx, k).Result(); typ {
			case "zset":
				if _, err := rdb.ZScore(ctx, k, m).Result(); err == nil {
					out = append(out, k)
				}
			case "hash":
				if ok, _ := rdb.HExists(ctx, k, m).Result(); ok {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// Retention deletes exactly what is older than the cutoff, with every index entry of it, keeps
// the rest, and a second run deletes nothing.
func TestPurgeDeletesExactlyWhatIsOld(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	now := time.Now()
	cutoff := now.Add(-90 * 24 * time.Hour)
	old, recent := cutoff.Add(-time.Hour), cutoff.Add(time.Hour)
	ancient := cutoff.Add(-48 * time.Hour)
	gid, orgID := herald.NewID(ancient), herald.NewID(ancient)

	type item struct {
		name string
		id   string
	}
	var gone, kept []item
	// Alerts of the project and global ones.
	gone = append(gone,
		item{"closed before the cutoff", alertAt(t, st, false, gid, herald.StatusClosed, ancient, old, old).ID},
		item{"cancelled before the cutoff", alertAt(t, st, false, gid, herald.StatusCancelled, ancient, old, time.Time{}).ID},
		item{"global closed before the cutoff", alertAt(t, st, true, gid, herald.StatusClosed, ancient, old, old).ID})
	kept = append(kept,
		item{"created long ago, closed after the cutoff", alertAt(t, st, false, gid, herald.StatusClosed, ancient, recent, recent).ID},
		item{"cancelled after the cutoff", alertAt(t, st, false, gid, herald.StatusCancelled, ancient, recent, time.Time{}).ID},
		item{"still open", alertAt(t, st, false, gid, herald.StatusOpen, ancient, ancient, time.Time{}).ID},
		item{"global closed after the cutoff", alertAt(t, st, true, gid, herald.StatusClosed, ancient, recent, recent).ID})
	// Each alert was told of in a digest: its record of digests goes with it.
	for i, it := range append(gone[:3:3], kept[:4]...) {
		a := store.Attempt{At: herald.At(old), AlertID: it.id, Global: i == 2 || i == 6, DeliveryID: it.id + "-0-1", Kind: "CHAT_B",
			Outcome: store.OutcomeDigested, DigestID: "0123456789abcdef01234567"}
		if err := st.RecordAttempts(ctx, gid, []store.Attempt{a}); err != nil {
			t.Fatal(err)
		}
	}
	// Events of the project, the organization and the platform.
	for _, sc := range []store.EventScope{{GroupID: gid}, {OrgID: orgID}, {}} {
		gone = append(gone,
			item{"old event", eventAt(t, st, sc, herald.EventAlertConfigAdded, old).ID},
			item{"old event of another type", eventAt(t, st, sc, herald.EventAlertConfigChanged, ancient).ID})
		kept = append(kept, item{"recent event", eventAt(t, st, sc, herald.EventAlertConfigAdded, recent).ID})
	}
	// Maintenance windows: by their end.
	for _, w := range []struct {
		end  time.Time
		gone bool
	}{{old, true}, {recent, false}, {now.Add(time.Hour), false}} {
		mw := herald.MaintenanceWindow{ID: herald.NewID(ancient), GroupID: gid, Created: herald.At(ancient), Updated: herald.At(ancient),
			StartDate: herald.At(w.end.Add(-time.Hour)), EndDate: herald.At(w.end), AlertTypeNames: []string{"HOST"}}
		ev := herald.NewEvent(herald.EventWindowAdded, herald.Principal{}, herald.Scope{GroupID: gid}, now)
		if err := st.CreateWindow(ctx, mw, ev); err != nil {
			t.Fatal(err)
		}
		if w.gone {
			gone = append(gone, item{"window ended before the cutoff", mw.ID})
		} else {
			kept = append(kept, item{"window ended after the cutoff", mw.ID})
		}
	}

	purgeAll := func() [4]int {
		var n [4]int
		for _, f := range []func() (int, bool, error){
			func() (int, bool, error) { return st.PurgeAlerts(ctx, false, gid, cutoff, 100) },
			func() (int, bool, error) { return st.PurgeAlerts(ctx, true, "", cutoff, 100) },
		} {
			d, more, err := f()
			if err != nil || more {
				t.Fatalf("purging alerts: %v (more %v)", err, more)
			}
			n[0] += d
		}
		for _, sc := range []store.EventScope{{GroupID: gid}, {OrgID: orgID}, {}} {
			d, more, err := st.PurgeEvents(ctx, sc, cutoff, 100)
			if err != nil || more {
				t.Fatalf("purging events: %v (more %v)", err, more)
			}
			n[1] += d
		}
		d, more, err := st.PurgeWindows(ctx, gid, cutoff, 100)
		if err != nil || more {
			t.Fatalf("purging windows: %v (more %v)", err, more)
		}
		n[2] = d
		return n
	}
	if got, want := purgeAll(), [4]int{3, 6, 1}; got != want {
		t.Fatalf("deleted alerts, events, windows %v, want %v", got, want)
	}
	for _, it := range gone {
		if refs := references(t, rdb, it.id); len(refs) > 0 {
			t.Errorf("%s: still in %v", it.name, refs)
		}
	}
	for _, it := range kept {
		if refs := references(t, rdb, it.id); len(refs) == 0 {
			t.Errorf("%s: deleted", it.name)
		}
	}
	// What is kept is still listed where it was.
	if _, n, err := st.Alerts(ctx, gid, store.AlertFilter{}, store.Page{Limit: 100}); err != nil || n != 3 {
		t.Errorf("%d project alerts left (%v), want 3", n, err)
	}
	if _, n, err := st.Alerts(ctx, gid, store.AlertFilter{Status: herald.StatusClosed}, store.Page{Limit: 100}); err != nil || n != 1 {
		t.Errorf("%d closed project alerts left (%v), want 1", n, err)
	}
	if _, n, err := st.ConfigAlerts(ctx, gid, "cfg1", store.Page{Limit: 100}); err != nil || n != 1 {
		t.Errorf("%d active alerts of the configuration (%v), want 1", n, err)
	}
	if _, n, err := st.Events(ctx, store.EventScope{OrgID: orgID}, store.EventFilter{EventType: herald.EventAlertConfigAdded}, store.Page{Limit: 100}); err != nil || n != 1 {
		t.Errorf("%d organization events of the type left (%v), want 1", n, err)
	}
	if _, n, err := st.Events(ctx, store.EventScope{OrgID: orgID}, store.EventFilter{EventType: herald.EventAlertConfigChanged}, store.Page{Limit: 100}); err != nil || n != 0 {
		t.Errorf("%d deleted events still listed by type (%v)", n, err)
	}

	if got := purgeAll(); got != [4]int{} {
		t.Fatalf("a second run deleted %v", got)
	}
}

// A purge stops at its limit, says there is more, and the next one goes on from there.
func TestPurgeIsBounded(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	now := time.Now()
	cutoff := now.Add(-time.Hour)
	gid := herald.NewID(now)
	sc := store.EventScope{GroupID: gid}
	const old = 450 // more than two pages
	for i := range old {
		eventAt(t, st, sc, herald.EventAlertConfigAdded, cutoff.Add(-time.Duration(i+1)*time.Second))
	}
	eventAt(t, st, sc, herald.EventAlertConfigAdded, now)
	n, more, err := st.PurgeEvents(ctx, sc, cutoff, 250)
	if err != nil || n != 250 || !more {
		t.Fatalf("first purge: %d %v %v, want 250 and more", n, more, err)
	}
	n, more, err = st.PurgeEvents(ctx, sc, cutoff, 250)
	if err != nil || n != old-250 || more {
		t.Fatalf("second purge: %d %v %v, want %d and no more", n, more, err, old-250)
	}
	if _, total, err := st.Events(ctx, sc, store.EventFilter{}, store.Page{Limit: 10}); err != nil || total != 1 {
		t.Fatalf("%d events left (%v), want 1", total, err)
	}
}

// Hosts no observation named within the retention go, with their partitions; a host still
// reported stays, without the partitions it stopped reporting.
func TestPurgeHosts(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	const gid = "5f0000000000000000000001"
	now := time.Now()
	old, cutoff := now.Add(-100*24*time.Hour), now.Add(-90*24*time.Hour)
	register := func(id string, at time.Time, disks ...string) {
		t.Helper()
		h := herald.Host{ID: id, GroupID: gid, LastSeen: herald.At(at)}
		if err := st.RegisterHosts(ctx, gid, []herald.Host{h}, map[string][]string{id: disks}); err != nil {
			t.Fatal(err)
		}
	}
	register("gone", old, "sda1")
	register("live", old, "sdb1")
	register("live", now, "sda1")
	n, more, err := st.PurgeHosts(ctx, gid, cutoff, 100)
	if err != nil || n != 1 || more {
		t.Fatalf("PurgeHosts = %d, %v, %v; want 1 host", n, more, err)
	}
	if _, err := st.Host(ctx, gid, "gone"); !herald.IsNotFound(err) {
		t.Errorf("an unreported host is kept (%v)", err)
	}
	for _, d := range []struct {
		host, disk string
		want       bool
	}{{"gone", "sda1", false}, {"live", "sda1", true}, {"live", "sdb1", false}} {
		if ok, err := st.HasDisk(ctx, gid, d.host, d.disk); err != nil || ok != d.want {
			t.Errorf("HasDisk(%s, %s) = %v, %v; want %v", d.host, d.disk, ok, err, d.want)
		}
	}
	if _, err := st.Host(ctx, gid, "live"); err != nil {
		t.Errorf("a reported host is purged (%v)", err)
	}
}
