package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Events kept in their scope's hash and events written before at keys of their own are read,
// listed and purged alike: an upgrade loses none and leaves none behind.
func TestEventsOfBothLayouts(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid := herald.NewID(time.Now())
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
	keys, _ := rdb.Keys(ctx, prefix+"event*").Result()
	if len(keys) != 0 {
		t.Errorf("left after the purge: %v", keys)
	}
}
