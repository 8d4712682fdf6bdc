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
	st := store.New(storetest.Redis(t))
	gid := herald.NewID(time.Now())
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

// The script that sets lastNotified in place leaves each document exactly as the store
// writes an alert with that lastNotified (compared byte for byte with the same alert written
// whole, in another project: the document names neither its id nor its project, its key
// does), whatever other times, labels (one named "n") or escaped strings it holds, in the
// layout it was in: lastNotified's slot first (as written now), or after the times (as
// written before the slot, or now for a time of other than ten digits: an older Herald may
// still write that layout during a rolling upgrade). An earlier time changes no byte; a
// document in the API's form (written before the compact one) gets its lastNotified too, and
// is read as before.
func TestMarkNotifiedEditsTheDocumentInPlace(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid, other := herald.NewID(time.Now()), herald.NewID(time.Now())
	t0 := time.Unix(1_800_000_000, 0)
	at := t0.Add(90 * time.Second)
	base := herald.Alert{GroupID: gid, AlertConfigID: herald.NewID(t0), EventTypeName: "HOST_DOWN", Status: herald.StatusOpen,
		Created: herald.At(t0), Updated: herald.At(t0), HostID: "h1", HostnameAndPort: "h1:27017"}
	shapes := map[string]func(*herald.Alert){
		"never notified":        func(*herald.Alert) {},
		"notified before":       func(a *herald.Alert) { a.LastNotified = herald.At(t0.Add(time.Second)) },
		"notified since":        func(a *herald.Alert) { a.LastNotified = herald.At(at.Add(time.Second)) },
		"notified in 1990":      func(a *herald.Alert) { a.LastNotified = herald.At(time.Unix(631_152_000, 0)) },
		"updated since created": func(a *herald.Alert) { a.Updated = herald.At(t0.Add(5 * time.Second)) },
		"resolved":              func(a *herald.Alert) { a.Status, a.Resolved = herald.StatusClosed, herald.At(t0.Add(9*time.Second)) },
		"updated, resolved, noted": func(a *herald.Alert) {
			a.Updated, a.Resolved, a.LastNotified = herald.At(t0.Add(3*time.Second)), herald.At(t0.Add(4*time.Second)), herald.At(t0.Add(2*time.Second))
		},
		"acknowledged, labelled": func(a *herald.Alert) {
			a.AcknowledgedUntil, a.AcknowledgementComment = herald.At(t0.Add(time.Hour)), `,"n":1,"t":2 {"i":`
			a.Labels, a.Annotations = herald.Labels{"n": "7", "t": "8"}, herald.Labels{"n": "9"}
			a.CurrentValue = &herald.CurrentValue{Number: 3, Units: "RAW"}
		},
		"escaped host": func(a *herald.Alert) { a.HostnameAndPort = "a\"b\\c<d>,\"n\":5" },
	}
	// Each layout writes alert a at key, as the store writes it now or as it did before.
	layouts := map[string]func(key string, a herald.Alert) []byte{
		"now": func(key string, a herald.Alert) []byte {
			if err := st.SaveAlert(ctx, a, false, ""); err != nil {
				t.Fatal(err)
			}
			return []byte(rdb.Get(ctx, key).Val())
		},
		"before the slot": func(key string, a herald.Alert) []byte {
			b, err := store.AlertDocBefore(key, a)
			if err != nil {
				t.Fatal(err)
			}
			if err := rdb.Set(ctx, key, b, 0).Err(); err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
	// mark sets lastNotified of alert id to at, and checks the document is then exp (unless
	// nil) and reads back as want.
	mark := func(t *testing.T, id string, at time.Time, exp []byte, want herald.Alert) {
		t.Helper()
		if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{id: at}); err != nil {
			t.Fatal(err)
		}
		if got := rdb.Get(ctx, alertKey(gid, id)).Val(); exp != nil && got != string(exp) {
			t.Errorf("document after MarkNotified:\n%s\nwant (the alert written whole):\n%s", got, exp)
		}
		if read, err := st.Alert(ctx, gid, id); err != nil || !reflect.DeepEqual(read, want) {
			t.Errorf("read back: %+v, %v; want %+v", read, err, want)
		}
	}
	for name, shape := range shapes {
		for layout, write := range layouts {
			t.Run(name+", "+layout, func(t *testing.T) {
				a := base
				a.ID = herald.NewID(t0)
				shape(&a)
				written := write(alertKey(gid, a.ID), a)
				if layout == "now" && !strings.HasPrefix(string(written), `{"n":`) && name != "notified in 1990" {
					t.Errorf("written without lastNotified's slot first: %s", written)
				}
				want := a
				if herald.At(at).After(a.LastNotified.Time) {
					want.LastNotified = herald.At(at)
				}
				whole := want
				whole.GroupID = other
				exp := write(alertKey(other, a.ID), whole)
				if name == "notified in 1990" && layout == "now" {
					// a time of nine digits is written after the others, and edited there
					exp, _ = store.AlertDocBefore(alertKey(other, a.ID), whole)
				}
				mark(t, a.ID, at, exp, want)
			})
		}
	}
	// A time of other than ten digits is not written in the slot: the document is read,
	// changed and written whole, where such a time goes.
	t.Run("a time of nine digits", func(t *testing.T) {
		a := base
		a.ID = herald.NewID(t0)
		a.Created, a.Updated = herald.At(time.Unix(631_000_000, 0)), herald.At(time.Unix(631_000_000, 0))
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		old := time.Unix(631_152_000, 0)
		want := a
		want.LastNotified = herald.At(old)
		exp, _ := store.AlertDocBefore(alertKey(gid, a.ID), want)
		mark(t, a.ID, old, exp, want)
	})
	t.Run("API form", func(t *testing.T) {
		a := base
		a.ID = herald.NewID(t0)
		old, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, alertKey(gid, a.ID), old, 0).Err(); err != nil {
			t.Fatal(err)
		}
		want := a
		want.LastNotified = herald.At(at)
		mark(t, a.ID, at, nil, want)
	})
}

// lastNotified edited in place is not lost to the engine's rewrite of the document: the
// engine watches the documents it read, and the edit (SETRANGE) is a write that fails the
// engine's transaction, which reads the document again, lastNotified with it.
func TestMarkNotifiedBetweenTheEnginesReadAndWrite(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	gid := herald.NewID(time.Now())
	sc := store.Scope{GroupID: gid}
	opened := stormChanges(t, sc, 0, 1)
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return opened, nil }); err != nil {
		t.Fatal(err)
	}
	a := opened[0].Tracked.Alert
	now := a.Created.Time
	notified := now.Add(time.Minute)
	var seen []herald.Time
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, []string{a.ID}, func(loaded []store.Tracked) ([]store.Change, error) {
		if len(loaded) != 1 {
			return nil, fmt.Errorf("loaded %d alerts, want 1", len(loaded))
		}
		seen = append(seen, loaded[0].Alert.LastNotified)
		if len(seen) == 1 { // a delivery settles after the engine read the alert
			if err := st.MarkNotified(ctx, sc, map[string]time.Time{a.ID: notified}); err != nil {
				return nil, err
			}
		}
		c := store.Change{Tracked: loaded[0], PrevStatus: herald.StatusOpen}
		c.Tracked.Alert.Updated = herald.At(now.Add(2 * time.Minute))
		return []store.Change{c}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || !seen[1].Equal(herald.At(notified).Time) {
		t.Errorf("the engine read lastNotified as %v, want zero then %s", seen, herald.At(notified))
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
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid := herald.NewID(time.Now())
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
	// The first call loads the script (EVALSHA, then EVAL): the one measured does not.
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
// time per alert and Redis's own CPU time per alert (INFO commandstats: the script's time
// holds the commands it ran).
//
//	go test ./store/ -run '^$' -bench MarkNotified -benchtime 5x
func BenchmarkMarkNotified(b *testing.B) {
	const alerts, group = 10000, 500
	ctx := context.Background()
	rdb := storetest.Redis(b)
	st := store.New(rdb)
	gid := herald.NewID(time.Now())
	sc := store.Scope{GroupID: gid}
	l := lease(b, st, gid)
	cs := stormChanges(b, sc, 0, alerts) // each iteration commits them again, lastNotified unset
	notified := time.Now().Add(time.Second)
	redisUsec := func() float64 { return scriptsUsec(b, rdb) }
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
