package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// lastNotified is set without overwriting anything that changed since the engine wrote the
// alert (an acknowledgement through the API), and it never moves back.
func TestMarkNotified(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	now := time.Now()
	mk := func() herald.Alert {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		return a
	}
	same, acked := mk(), mk()
	// The API acknowledges one after the engine wrote it.
	if _, err := st.UpdateAlert(ctx, false, gid, acked.ID, func(a *herald.Alert) ([]herald.Event, error) {
		_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	at := now.Add(2 * time.Second)
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{same.ID: at, acked.ID: at}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{same.ID, acked.ID} {
		a, err := st.Alert(ctx, gid, id)
		if err != nil {
			t.Fatal(err)
		}
		if !a.LastNotified.Equal(herald.At(at).Time) {
			t.Errorf("alert %s: lastNotified %s, want %s", id, a.LastNotified, herald.At(at))
		}
		if id == acked.ID && a.AcknowledgingUsername != "ann" {
			t.Errorf("the acknowledgement was overwritten: %+v", a)
		}
	}
	// An earlier delivery's time never moves it back.
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{same.ID: now}); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.Alert(ctx, gid, same.ID); !a.LastNotified.Equal(herald.At(at).Time) {
		t.Errorf("lastNotified moved back to %s", a.LastNotified)
	}
}

// lastNotified is kept apart from the alert's document: marking it leaves every document
// byte for byte as it was, in each layout written before (lastNotified first in a ten-byte
// slot, after the times, or in the API's form) and now, and the alert reads back with the
// later of the document's lastNotified and the mark.
func TestMarkNotifiedTouchesNoDocument(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	t0 := time.Unix(1_800_000_000, 0)
	at := t0.Add(90 * time.Second)
	base := herald.Alert{GroupID: gid, AlertConfigID: herald.NewID(t0), EventTypeName: "HOST_DOWN", Status: herald.StatusOpen,
		Created: herald.At(t0), Updated: herald.At(t0), HostID: "h1", HostnameAndPort: "h1:27017"}
	shapes := map[string]func(*herald.Alert){
		"never notified":   func(*herald.Alert) {},
		"notified before":  func(a *herald.Alert) { a.LastNotified = herald.At(t0.Add(time.Second)) },
		"notified since":   func(a *herald.Alert) { a.LastNotified = herald.At(at.Add(time.Second)) },
		"notified in 1990": func(a *herald.Alert) { a.LastNotified = herald.At(time.Unix(631_152_000, 0)) },
		"labelled":         func(a *herald.Alert) { a.Labels = herald.Labels{"n": "7"} },
	}
	layouts := map[string]func(key string, a herald.Alert) []byte{
		"now": func(key string, a herald.Alert) []byte {
			if err := st.SaveAlert(ctx, a, false, ""); err != nil {
				t.Fatal(err)
			}
			return []byte(rdb.Get(ctx, key).Val())
		},
		"slot first":      func(key string, a herald.Alert) []byte { return store.AlertDocOlder(t, key, a, true) },
		"after the times": func(key string, a herald.Alert) []byte { return store.AlertDocOlder(t, key, a, false) },
		"API form": func(key string, a herald.Alert) []byte {
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
	for name, shape := range shapes {
		for layout, write := range layouts {
			t.Run(name+", "+layout, func(t *testing.T) {
				a := base
				a.ID = herald.NewID(t0)
				shape(&a)
				key := alertKey(gid, a.ID)
				written := write(key, a)
				if err := rdb.Set(ctx, key, written, 0).Err(); err != nil {
					t.Fatal(err)
				}
				if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{a.ID: at}); err != nil {
					t.Fatal(err)
				}
				if got := rdb.Get(ctx, key).Val(); got != string(written) {
					t.Errorf("document after MarkNotified:\n%s\nwant it as written:\n%s", got, written)
				}
				want := a
				if layout == "now" {
					want.LastNotified = herald.Time{} // SaveAlert moved it to the notified set
					if !a.LastNotified.IsZero() {
						want.LastNotified = a.LastNotified
					}
				}
				if herald.At(at).After(want.LastNotified.Time) {
					want.LastNotified = herald.At(at)
				}
				if read, err := st.Alert(ctx, gid, a.ID); err != nil || !reflect.DeepEqual(read, want) {
					t.Errorf("read back: %+v, %v; want %+v", read, err, want)
				}
				list, _, err := st.Alerts(ctx, gid, store.AlertFilter{}, store.Page{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, read := range list {
					if read.ID == a.ID && !reflect.DeepEqual(read, want) {
						t.Errorf("listed: %+v; want %+v", read, want)
					}
				}
			})
		}
	}
}

// A document written before the notified set keeps its lastNotified when the API or the
// engine writes the alert again: the time moves to the set, and the document is written
// without it.
func TestLastNotifiedOfAnOlderDocumentIsKept(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	sc := store.Scope{GroupID: herald.NewID(time.Now())}
	opened := stormChanges(t, sc, 0, 2)
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return opened, nil }); err != nil {
		t.Fatal(err)
	}
	notified := herald.At(opened[0].Tracked.Alert.Created.Add(time.Minute))
	for _, c := range opened {
		a := c.Tracked.Alert
		a.LastNotified = notified
		key := alertKey(sc.GroupID, a.ID)
		if err := rdb.Set(ctx, key, store.AlertDocOlder(t, key, a, true), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	byAPI, byEngine := opened[0].Tracked.Alert, opened[1].Tracked.Alert
	if _, err := st.UpdateAlert(ctx, false, sc.GroupID, byAPI.ID, func(a *herald.Alert) ([]herald.Event, error) {
		a.AcknowledgingUsername = "ann"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{byEngine.ID}, func(loaded []store.Tracked) ([]store.Change, error) {
		c := store.Change{Tracked: loaded[0], PrevStatus: herald.StatusOpen}
		c.Tracked.Alert.Updated = herald.At(notified.Add(time.Minute))
		return []store.Change{c}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{byAPI.ID, byEngine.ID} {
		if doc := rdb.Get(ctx, alertKey(sc.GroupID, id)).Val(); strings.Contains(doc, `"n":`) {
			t.Errorf("the document written again still holds lastNotified: %s", doc)
		}
		if a, err := st.Alert(ctx, sc.GroupID, id); err != nil || !a.LastNotified.Equal(notified.Time) {
			t.Errorf("alert %s: lastNotified %s (%v), want %s", id, a.LastNotified, err, notified)
		}
	}
}

// lastNotified set between the engine's read of an alert and its write is kept: the engine
// writes the document, and lastNotified is not in it.
func TestMarkNotifiedBetweenTheEnginesReadAndWrite(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.Scope{GroupID: gid}
	opened := stormChanges(t, sc, 0, 1)
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return opened, nil }); err != nil {
		t.Fatal(err)
	}
	a := opened[0].Tracked.Alert
	now := a.Created.Time
	notified := now.Add(time.Minute)
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{a.ID}, func(loaded []store.Tracked) ([]store.Change, error) {
		if len(loaded) != 1 {
			return nil, fmt.Errorf("loaded %d alerts, want 1", len(loaded))
		}
		if err := st.MarkNotified(ctx, sc, map[string]time.Time{a.ID: notified}); err != nil {
			return nil, err
		}
		c := store.Change{Tracked: loaded[0], PrevStatus: herald.StatusOpen}
		c.Tracked.Alert.Updated = herald.At(now.Add(2 * time.Minute))
		return []store.Change{c}, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Alert(ctx, gid, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastNotified.Equal(herald.At(notified).Time) || !got.Updated.Equal(herald.At(now.Add(2*time.Minute)).Time) {
		t.Errorf("after the engine's write: lastNotified %s, updated %s; want %s, %s", got.LastNotified, got.Updated,
			herald.At(notified), herald.At(now.Add(2*time.Minute)))
	}
}

// Setting lastNotified sends Redis the alert's key and the time, not its document: a storm's
// deliveries each set one, and sending the document twice (to compare and set) cost the
// worker two encodings and some 400 bytes per delivery.
func TestMarkNotifiedSendsNoDocument(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	now := time.Now()
	at := map[string]time.Time{}
	for range 50 {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now),
			HostID: "a-host-of-some-length", HostnameAndPort: "a-host-of-some-length.example.com:27017"}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		at[a.ID] = now.Add(time.Second)
	}
	// The first call is not measured.
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{herald.NewID(now): now}); err != nil {
		t.Fatal(err)
	}
	sent := &argBytes{}
	rdb.AddHook(eachCommand(sent.count))
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, at); err != nil {
		t.Fatal(err)
	}
	key := len(alertKey(gid, herald.NewID(now)))
	if per := sent.n / int64(len(at)); per > int64(key)+40 {
		t.Errorf("MarkNotified sent Redis %d bytes of arguments per alert; a key is %d: it sends more than the key and the time", per, key)
	}
}

// argBytes sums the bytes of the string arguments of the commands sent through a client,
// less scripts' bodies and hashes.
type argBytes struct{ n int64 }

func (h *argBytes) count(cmd redis.Cmder) {
	args := cmd.Args()
	skip := 1
	if name := cmd.Name(); name == "evalsha" || name == "eval" {
		skip = 3 // the script, its number of keys
	}
	for _, a := range args[min(skip, len(args)):] {
		switch v := a.(type) {
		case string:
			h.n += int64(len(v))
		case []byte:
			h.n += int64(len(v))
		default:
			h.n += int64(len(fmt.Sprint(v)))
		}
	}
}

// alertKey is where the store keeps a project's alert's document (store/keys.go), for tests
// that look at the stored bytes.
func alertKey(groupID, id string) string { return "herald:{g:" + groupID + "}:alert:" + id }

// BenchmarkMarkNotified: a storm's first notices of 10,000 alerts (documents without a
// lastNotified), marked in groups of 500 as the engine's sender settles them. It reports the
// time per alert and Redis's own CPU time per alert (INFO commandstats).
//
//	go test ./store/ -run '^$' -bench MarkNotified -benchtime 5x
func BenchmarkMarkNotified(b *testing.B) {
	const alerts, group = 10000, 500
	ctx := context.Background()
	rdb, st, sc, l := leasedProject(b)
	cs := stormChanges(b, sc, 0, alerts) // each iteration commits them again, lastNotified unset
	notified := time.Now().Add(time.Second)
	redisUsec := func() float64 {
		var sum float64
		for _, usec := range commandUsec(b, rdb) {
			sum += usec
		}
		return sum
	}
	var usec float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for off := 0; off < alerts; off += group {
			if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return cs[off : off+group], nil }); err != nil {
				b.Fatal(err)
			}
		}
		before := redisUsec()
		b.StartTimer()
		for off := 0; off < alerts; off += group {
			at := make(map[string]time.Time, group)
			for _, c := range cs[off : off+group] {
				at[c.Tracked.Alert.ID] = notified
			}
			if err := st.MarkNotified(ctx, sc, at); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		usec += redisUsec() - before
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*alerts), "ns/alert")
	b.ReportMetric(usec*1000/float64(b.N*alerts), "redis-ns/alert")
	b.ReportMetric(0, "ns/op")
}

// An acknowledgement answers the alert with its lastNotified, read in the transaction that
// writes it: three round trips (the watch, the read, the commit), a project's or a global
// alert's.
func TestUpdateAlertReadsLastNotifiedInItsCommit(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	rdb, st, gid := newProject(t)
	trips := watchRoundTrips(rdb, false)
	for _, global := range []bool{false, true} {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, a, global, ""); err != nil {
			t.Fatal(err)
		}
		sent := now.Add(time.Minute)
		if err := st.MarkNotified(ctx, store.Scope{GroupID: gid, Global: global}, map[string]time.Time{a.ID: sent}); err != nil {
			t.Fatal(err)
		}
		before := len(trips.sent())
		got, err := st.UpdateAlert(ctx, global, gid, a.ID, func(a *herald.Alert) ([]herald.Event, error) {
			_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
			return nil, err
		})
		if err != nil || got.AcknowledgingUsername != "ann" || !got.LastNotified.Equal(herald.At(sent).Time) {
			t.Fatalf("global %v: %+v, %v; want acknowledged, notified at %s", global, got, err, sent)
		}
		if n := len(trips.sent()) - before; n != 3 {
			t.Errorf("global %v: an acknowledgement took %d round trips, want 3", global, n)
		}
	}
}
