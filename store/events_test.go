package store_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Events kept in their scope's hash and events written before at keys of their own are read,
// listed and purged alike: an upgrade loses none and leaves none behind.
func TestEventsOfBothLayouts(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	sc := store.EventScope{GroupID: gid}
	old := time.Now().Add(-time.Hour)
	before := herald.NewEvent("HOST_DOWN", herald.Principal{}, herald.Scope{GroupID: gid}, old)
	// As the store wrote events before: the API's JSON at a key of its own, and its index entries.
	doc, _ := json.Marshal(before)
	prefix := "herald:{g:" + gid + "}:"
	rdb.Set(ctx, prefix+"event:"+before.ID, doc, 0)
	for _, index := range []string{prefix + "events", prefix + "events:type:HOST_DOWN"} {
		rdb.ZAdd(ctx, index, redis.Z{Score: float64(old.Unix()), Member: before.ID})
	}
	now := herald.NewEvent("HOST_DOWN", herald.Principal{}, herald.Scope{GroupID: gid}, time.Now())
	now.Raw["status"] = "OPEN"
	if err := st.RecordEvent(ctx, sc, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(ctx, prefix+"event:"+now.ID).Result(); n != 0 {
		t.Error("a new event has a key of its own")
	}
	for _, want := range []herald.Event{before, now} {
		got, err := st.Event(ctx, sc, want.ID)
		if err != nil || got.ID != want.ID || got.Raw["source"] != "API" {
			t.Errorf("event %s read as %+v, %v", want.ID, got, err)
		}
	}
	list, total, err := st.Events(ctx, sc, store.EventFilter{EventType: "HOST_DOWN"}, store.Page{Limit: 10})
	if err != nil || total != 2 || len(list) != 2 || list[0].ID != now.ID || list[1].ID != before.ID {
		t.Fatalf("listed %+v (total %d), %v", list, total, err)
	}
	if _, err := st.Event(ctx, sc, herald.NewID(time.Now())); !herald.IsNotFound(err) {
		t.Errorf("an event that never was: %v", err)
	}
	deleted, _, err := st.PurgeEvents(ctx, sc, time.Now().Add(time.Hour), 10)
	if err != nil || deleted != 2 {
		t.Fatalf("purged %d, %v", deleted, err)
	}
	if keys := eventKeys(t, rdb, prefix); len(keys) != 0 {
		t.Errorf("left after the purge: %v", keys)
	}
}

// Events as this layout writes them: listed once, in their type's index, by their ids' 12
// bytes, with documents that leave the id to their hash field. Events the previous layout wrote (whole ids in the
// indexes, documents that carry their id) are listed with them newest first, by id within a
// second, a page at a time, and purged with them. (Within one second, whole ids sort before
// 12-byte ones: only events of the second of an upgrade could list out of id order.)
func TestEventIndexesHoldIDBytes(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	sc := store.EventScope{GroupID: gid}
	prefix := "herald:{g:" + gid + "}:"
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	var evs []herald.Event // oldest first
	for i := range 6 {
		e := herald.NewEvent("HOST_DOWN", herald.Principal{}, herald.Scope{GroupID: gid}, at.Add(time.Duration(i/3)*time.Second))
		evs = append(evs, e)
		if i >= 3 {
			if err := st.RecordEvent(ctx, sc, e); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// As the previous layout wrote it: the document with its id, under the id's 12 bytes,
		// and the whole id in both indexes.
		raw, _ := hex.DecodeString(e.ID)
		doc, _ := json.Marshal(map[string]any{"i": base64.RawURLEncoding.EncodeToString(raw), "t": e.Created.Unix(), "e": "HOST_DOWN",
			"g": base64.RawURLEncoding.EncodeToString(must(hex.DecodeString(gid))), "r": map[string]string{"source": "API"}})
		rdb.HSet(ctx, prefix+"eventdocs", string(raw), doc)
		for _, index := range []string{prefix + "events", prefix + "events:type:HOST_DOWN"} {
			rdb.ZAdd(ctx, index, redis.Z{Score: float64(e.Created.Unix()), Member: e.ID})
		}
	}
	if all := rdb.ZRange(ctx, prefix+"events", 0, -1).Val(); len(all) != 3 {
		t.Errorf("the index of all events lists %d, want only the 3 written before: %q", len(all), all)
	}
	members := rdb.ZRange(ctx, prefix+"events:of:HOST_DOWN", 0, -1).Val()
	var short int
	for _, m := range members {
		if len(m) == 12 {
			short++
		}
	}
	if short != 3 || len(members) != 3 {
		t.Errorf("the type's index lists %q, want the 3 new events by their ids' 12 bytes", members)
	}
	for _, e := range evs[3:] {
		raw, _ := hex.DecodeString(e.ID)
		if doc := rdb.HGet(ctx, prefix+"eventdocs", string(raw)).Val(); strings.Contains(doc, `"i":`) || strings.Contains(doc, `"g":`) {
			t.Errorf("a new event's document carries its id or its project: %s", doc)
		}
	}
	for _, filter := range []store.EventFilter{{}, {EventType: "HOST_DOWN"}} {
		var got []string
		for off := 0; off < len(evs); off += 4 {
			page, total, err := st.Events(ctx, sc, filter, store.Page{Offset: off, Limit: 4})
			if err != nil || total != len(evs) {
				t.Fatalf("%+v: page at %d: total %d, %v", filter, off, total, err)
			}
			for _, e := range page {
				got = append(got, e.ID)
				if e.GroupID != gid {
					t.Errorf("event %s of project %q, want %s", e.ID, e.GroupID, gid)
				}
			}
		}
		var want []string
		for i := len(evs) - 1; i >= 0; i-- {
			want = append(want, evs[i].ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: listed %v, want newest first %v", filter, got, want)
		}
	}
	if n, _, err := st.PurgeEvents(ctx, sc, time.Now(), 100); err != nil || n != len(evs) {
		t.Fatalf("purged %d (%v), want %d", n, err, len(evs))
	}
	if keys := eventKeys(t, rdb, prefix); len(keys) != 0 {
		t.Errorf("left after the purge: %v", keys)
	}
}

// eventKeys are the keys of a scope's events (prefix its keys' start) but its set of event
// types, a name a type that stays.
func eventKeys(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), prefix+"event*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(keys, func(k string) bool { return k == prefix+"eventtypes" })
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The list of all events merges the types' indexes: newest first, by id within a second,
// whatever their types, a page at a time, within a time range, with the total of the range;
// a type's list is its own events alone.
func TestEventsOfManyTypesListedAsOne(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.EventScope{GroupID: gid}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	types := []string{"HOST_DOWN", "ALERT_CONFIG_ADDED_AUDIT", "NO_PRIMARY"}
	var evs []herald.Event // oldest first
	for i := range 14 {
		e := herald.NewEvent(types[i*7%3], herald.Principal{}, herald.Scope{GroupID: gid}, at.Add(time.Duration(i/4)*time.Second))
		evs = append(evs, e)
	}
	// Recorded in an order of their own: the indexes, not the writes, give the order.
	for _, i := range []int{5, 0, 13, 2, 9, 1, 3, 12, 4, 6, 11, 7, 10, 8} {
		if err := st.RecordEvent(ctx, sc, evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	newestFirst := func(keep func(herald.Event) bool) []string {
		var ids []string
		for i := len(evs) - 1; i >= 0; i-- {
			if keep(evs[i]) {
				ids = append(ids, evs[i].ID)
			}
		}
		return ids
	}
	from, to := at.Add(time.Second), at.Add(2*time.Second)
	for _, tc := range []struct {
		filter store.EventFilter
		want   []string
	}{
		{store.EventFilter{}, newestFirst(func(herald.Event) bool { return true })},
		{store.EventFilter{EventType: "NO_PRIMARY"}, newestFirst(func(e herald.Event) bool { return e.EventTypeName == "NO_PRIMARY" })},
		{store.EventFilter{Created: store.TimeRange{Min: from, Max: to}}, newestFirst(func(e herald.Event) bool {
			return !e.Created.Before(from) && !e.Created.After(to)
		})},
	} {
		var got []string
		for off := 0; off <= len(tc.want); off += 5 {
			page, total, err := st.Events(ctx, sc, tc.filter, store.Page{Offset: off, Limit: 5})
			if err != nil || total != len(tc.want) {
				t.Fatalf("%+v at %d: total %d (%v), want %d", tc.filter, off, total, err, len(tc.want))
			}
			for _, e := range page {
				got = append(got, e.ID)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: listed\n %v\nwant\n %v", tc.filter, got, tc.want)
		}
	}
}

// Pages deep in the list of all events (merged by a script in Redis rather than here) hold
// what the first pages lead to: the same order, every event once.
func TestDeepPagesOfAllEvents(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	sc := store.EventScope{GroupID: gid}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	types := []string{"HOST_DOWN", "HOST_DOWN", "NO_PRIMARY", "ALERT_CONFIG_ADDED_AUDIT", "HOST_EXPOSED"}
	var want []string // newest first
	for i := range 1500 {
		e := herald.NewEvent(types[i%len(types)], herald.Principal{}, herald.Scope{GroupID: gid}, at.Add(time.Duration(i/40)*time.Second))
		want = append([]string{e.ID}, want...)
		if err := st.RecordEvent(ctx, sc, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []store.Page{{Offset: 0, Limit: 100}, {Offset: 950, Limit: 100}, {Offset: 1234, Limit: 200}, {Offset: 1400, Limit: 500}} {
		page, total, err := st.Events(ctx, sc, store.EventFilter{}, p)
		if err != nil || total != len(want) {
			t.Fatalf("%+v: total %d (%v), want %d", p, total, err, len(want))
		}
		var got []string
		for _, e := range page {
			got = append(got, e.ID)
		}
		if w := want[p.Offset:min(p.Offset+p.Limit, len(want))]; !slices.Equal(got, w) {
			t.Errorf("%+v: listed %d events, not the %d expected there (first %v, want %v)", p, len(got), len(w), got[:min(3, len(got))], w[:min(3, len(w))])
		}
	}
}

// An ALERT_CONFIG_UNDELIVERABLE_AUDIT keeps its undeliverable notifications in a field of its
// own; one written before, with them only in its raw record, reads the same.
func TestUndeliverableEventsReadTheirReasons(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	now := time.Now()
	us := []herald.Undeliverable{{Notification: 0, TypeName: "EMAIL", Why: "no mail server is configured", Setting: herald.SettingMail}}
	fresh := herald.NewEvent(herald.EventAlertConfigUndeliverable, herald.Principal{}, herald.Scope{GroupID: gid}, now)
	fresh.Undeliverable = us
	legacy := herald.NewEvent(herald.EventAlertConfigUndeliverable, herald.Principal{}, herald.Scope{GroupID: gid}, now)
	legacy.Raw["undeliverable"] = us
	for _, ev := range []herald.Event{fresh, legacy} {
		c := newConfig(gid, now)
		ev.AlertConfigID = c.ID
		if err := st.CreateAlertConfig(ctx, c, ev); err != nil {
			t.Fatal(err)
		}
	}
	evs, _, err := st.Events(ctx, store.EventScope{GroupID: gid}, store.EventFilter{EventType: herald.EventAlertConfigUndeliverable}, store.Page{Limit: 10})
	if err != nil || len(evs) != 2 {
		t.Fatalf("events: %d %v", len(evs), err)
	}
	for _, ev := range evs {
		if !slices.Equal(ev.Undeliverable, us) {
			t.Errorf("event %s: undeliverable %+v, want %+v", ev.ID, ev.Undeliverable, us)
		}
	}
}
