package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/obsjson"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The due set holds each heartbeat's deadline: DueHeartbeats hands out only those at or before
// now, earliest first, at most limit; a change moves the deadline or (none) takes it out, and
// queues its observations in the same step; names stay unique; tokens are found by hash and a
// re-issued one replaces the old.
func TestHeartbeatDueSet(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := herald.NewID(now)
	mk := func(name string, due time.Duration) herald.Heartbeat {
		h := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: name, PeriodMin: 1, GraceMin: 1,
			Status: herald.HeartbeatNew, Created: herald.At(now), Updated: herald.At(now), TokenHash: "hash-" + name, Since: now}
		if err := st.CreateHeartbeat(ctx, h, now.Add(due), herald.NewEvent(herald.EventHeartbeatAdded, herald.Principal{}, herald.Scope{GroupID: g}, now)); err != nil {
			t.Fatal(err)
		}
		return h
	}
	late, soon := mk("late", 2*time.Minute), mk("soon", time.Minute)
	mk("later", 3*time.Minute)
	dup := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "soon", TokenHash: "x", Created: herald.At(now)}
	if err := st.CreateHeartbeat(ctx, dup, now, herald.Event{}); herald.ErrorOf(err) == nil || herald.ErrorOf(err).Code != herald.CodeHeartbeatAlreadyExists {
		t.Fatalf("a duplicate name: %v", err)
	}
	due := func(at time.Time, limit int) []string {
		t.Helper()
		refs, err := st.DueHeartbeats(ctx, at, limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range refs {
			if r.GroupID != g {
				t.Fatalf("ref %+v", r)
			}
			ids = append(ids, r.ID)
		}
		return ids
	}
	if got := due(now.Add(time.Minute-time.Millisecond), 10); len(got) != 0 {
		t.Fatalf("before any deadline: %v", got)
	}
	if got := due(now.Add(time.Minute), 10); len(got) != 1 || got[0] != soon.ID {
		t.Fatalf("at the first deadline: %v", got)
	}
	if got := due(now.Add(time.Hour), 2); len(got) != 2 || got[0] != soon.ID || got[1] != late.ID {
		t.Fatalf("limit 2, earliest first: %v (the duplicate must not be there)", got)
	}

	// A ping moves the deadline and queues its observation in the same step.
	active := false
	_, err = st.UpdateHeartbeat(ctx, g, soon.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		h.TokenHash = "hash-new"
		return store.HeartbeatWrite{Due: now.Add(5 * time.Minute),
			Observations: []herald.Observation{{EventTypeName: herald.EventTypeHeartbeatMissed, Active: &active, HeartbeatName: "soon"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := due(now.Add(4*time.Minute), 10); len(got) != 2 {
		t.Fatalf("after moving soon past the others: %v", got)
	}
	batches, err := st.PendingObservations(ctx, g, 10)
	if err != nil || len(batches) != 1 {
		t.Fatalf("queued batches %d, %v", len(batches), err)
	}
	obs, err := obsjson.Decode(batches[0])
	if err != nil || len(obs) != 1 || obs[0].HeartbeatName != "soon" || *obs[0].Active {
		t.Fatalf("queued %+v, %v", obs, err)
	}
	if ref, ok, _ := st.HeartbeatByToken(ctx, "hash-new"); !ok || ref.ID != soon.ID {
		t.Errorf("the new token finds %+v %v", ref, ok)
	}
	if _, ok, _ := st.HeartbeatByToken(ctx, "hash-soon"); ok {
		t.Error("the re-issued token still finds the heartbeat")
	}
	// No deadline (paused): out of the set. A name taken: refused, nothing written.
	if _, err := st.UpdateHeartbeat(ctx, g, late.ID, func(*herald.Heartbeat) (store.HeartbeatWrite, error) { return store.HeartbeatWrite{}, nil }); err != nil {
		t.Fatal(err)
	}
	if got := due(now.Add(4*time.Minute), 10); len(got) != 1 {
		t.Fatalf("after taking late out: %v", got)
	}
	_, err = st.UpdateHeartbeat(ctx, g, late.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		h.Name = "later"
		return store.HeartbeatWrite{Due: now}, nil
	})
	if herald.ErrorOf(err) == nil || herald.ErrorOf(err).Code != herald.CodeHeartbeatAlreadyExists {
		t.Fatalf("renaming to a taken name: %v", err)
	}
	if h, _ := st.Heartbeat(ctx, g, late.ID); h.Name != "late" {
		t.Errorf("a refused rename wrote %q", h.Name)
	}
	if err := st.DeleteHeartbeat(ctx, g, soon.ID, nil, herald.NewEvent(herald.EventHeartbeatDeleted, herald.Principal{}, herald.Scope{GroupID: g}, now)); err != nil {
		t.Fatal(err)
	}
	if got := due(now.Add(time.Hour), 10); len(got) != 1 {
		t.Fatalf("after deleting soon: %v", got)
	}
	if _, ok, _ := st.HeartbeatByToken(ctx, "hash-new"); ok {
		t.Error("a deleted heartbeat's token still finds it")
	}
	if _, n, _ := st.Heartbeats(ctx, g, store.Page{Limit: 10}); n != 2 {
		t.Errorf("%d heartbeats listed, want 2", n)
	}
}

// A heartbeat renamed while it is being deleted leaves no name behind: the name it had last is
// free again once it is gone.
func TestDeleteHeartbeatRenamedMeanwhile(t *testing.T) {
	ctx := context.Background()
	rdb, st, g := newProject(t)
	now := time.Now()
	h := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "nightly", PeriodMin: 1, GraceMin: 1,
		Status: herald.HeartbeatNew, Created: herald.At(now), Updated: herald.At(now), TokenHash: "hash", Since: now}
	if err := st.CreateHeartbeat(ctx, h, now.Add(time.Hour), herald.Event{}); err != nil {
		t.Fatal(err)
	}
	// The rename lands between the delete's read of the heartbeat and its commit.
	opt := *rdb.Options()
	otherRdb := redis.NewClient(&opt) // without the hook
	t.Cleanup(func() { _ = otherRdb.Close() })
	other := store.New(otherRdb)
	renamed := false
	rdb.AddHook(eachCommand(func(cmd redis.Cmder) {
		if renamed || cmd.Name() != "multi" {
			return
		}
		renamed = true
		if _, err := other.UpdateHeartbeat(ctx, g, h.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
			h.Name = "weekly"
			return store.HeartbeatWrite{Due: now.Add(time.Hour)}, nil
		}); err != nil {
			t.Error(err)
		}
	}))
	if err := st.DeleteHeartbeat(ctx, g, h.ID, nil, herald.Event{}); err != nil {
		t.Fatal(err)
	}
	if !renamed {
		t.Fatal("the rename never came")
	}
	again := h
	again.ID, again.Name, again.TokenHash = herald.NewID(now), "weekly", "hash2"
	if err := st.CreateHeartbeat(ctx, again, now.Add(time.Hour), herald.Event{}); err != nil {
		t.Errorf("the deleted heartbeat's last name: %v", err)
	}
}

// WatchdogHeartbeats are exactly the project's heartbeats with label matchers, however many
// the project has: a change of matchers moves a heartbeat in or out, a delete takes it out.
func TestWatchdogHeartbeats(t *testing.T) {
	ctx := context.Background()
	_, st, g := newProject(t)
	now := time.Now()
	watchdog := []herald.LabelMatcher{{Name: "alertname", Value: "Watchdog", IsEqual: true}}
	var plain, dog herald.Heartbeat
	for i := range 1100 {
		h := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: fmt.Sprintf("job-%d", i), PeriodMin: 1, GraceMin: 1,
			Status: herald.HeartbeatNew, Created: herald.At(now), Updated: herald.At(now), TokenHash: fmt.Sprintf("hash-%d", i), Since: now}
		if i == 1099 { // the last one created: past any first page of the project's heartbeats
			h.LabelMatchers = watchdog
			dog = h
		} else if i == 0 {
			plain = h
		}
		if err := st.CreateHeartbeat(ctx, h, now.Add(time.Hour), herald.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		t.Helper()
		hs, err := st.WatchdogHeartbeats(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(); !slices.Equal(got, []string{dog.ID}) {
		t.Fatalf("watchdogs %v, want only %s", got, dog.ID)
	}
	set := func(id string, ms []herald.LabelMatcher) {
		t.Helper()
		if _, err := st.UpdateHeartbeat(ctx, g, id, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
			h.LabelMatchers = ms
			return store.HeartbeatWrite{Due: now.Add(time.Hour)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(plain.ID, watchdog)
	set(dog.ID, nil)
	if got := ids(); !slices.Equal(got, []string{plain.ID}) {
		t.Fatalf("after the matchers moved: %v, want %s", got, plain.ID)
	}
	if err := st.DeleteHeartbeat(ctx, g, plain.ID, nil, herald.Event{}); err != nil {
		t.Fatal(err)
	}
	if got := ids(); len(got) != 0 {
		t.Fatalf("after the delete: %v", got)
	}
}

// Heartbeats written by the layout before (the API's JSON at hb:<id>, the id in hex in hbs, a
// key of its own per token at hbtoken:<hash>) are read, listed, pinged and deleted: the token
// is found and moved to its field of hbtokens, the document rewritten in the stored form at
// its next change, and nothing of it left once it is deleted.
func TestHeartbeatsWrittenBefore(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now = now.UTC() // as documents are read back
	g := herald.NewID(now)
	sum := sha256.Sum256([]byte("old token"))
	old := herald.Heartbeat{ID: herald.NewID(now.Add(-time.Hour)), GroupID: g, Name: "old", PeriodMin: 1, GraceMin: 1,
		Status: herald.HeartbeatUp, Created: herald.At(now.Add(-time.Hour)), Updated: herald.At(now.Add(-time.Hour)),
		LastPing: herald.At(now), TokenHash: hex.EncodeToString(sum[:]), TokenTail: "oldT", Since: now}
	doc, _ := json.Marshal(old)
	tag := "herald:{g:" + g + "}:"
	legacyToken := "herald:{keys}:hbtoken:" + old.TokenHash
	if _, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, tag+"hb:"+old.ID, doc, 0)
		pipe.ZAdd(ctx, tag+"hbs", redis.Z{Score: float64(old.Created.Unix()), Member: old.ID})
		pipe.HSet(ctx, tag+"hbnames", old.Name, old.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, legacyToken, g+"/"+old.ID, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Heartbeat(ctx, g, old.ID); err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("read %+v, %v; want %+v", got, err, old)
	}
	for range 2 { // found at its key, then at its field
		if ref, ok, err := st.HeartbeatByToken(ctx, old.TokenHash); err != nil || !ok || ref != (store.HeartbeatRef{GroupID: g, ID: old.ID}) {
			t.Fatalf("the old token finds %+v %v %v", ref, ok, err)
		}
		if n := rdb.Exists(ctx, legacyToken).Val(); n != 0 {
			t.Fatal("the old token's key is still there once found")
		}
	}
	newer := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "new", PeriodMin: 1, GraceMin: 1, Status: herald.HeartbeatNew,
		Created: herald.At(now), Updated: herald.At(now), TokenHash: "new-hash", Since: now}
	if err := st.CreateHeartbeat(ctx, newer, now.Add(2*time.Minute), herald.NewEvent(herald.EventHeartbeatAdded, herald.Principal{}, herald.Scope{GroupID: g}, now)); err != nil {
		t.Fatal(err)
	}
	if hs, n, err := st.Heartbeats(ctx, g, store.Page{Limit: 10}); err != nil || n != 2 || len(hs) != 2 || hs[0].ID != old.ID || hs[1].ID != newer.ID {
		t.Fatalf("listed %d: %+v, %v; want the old one, then the new one", n, hs, err)
	}
	pinged, err := st.UpdateHeartbeat(ctx, g, old.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		h.Ping(herald.PingSuccess, "", now.Add(time.Second))
		return store.HeartbeatWrite{Due: now.Add(time.Minute)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if raw := rdb.Get(ctx, tag+"hb:"+old.ID).Val(); strings.HasPrefix(raw, `{"id":`) || len(raw) >= len(doc) {
		t.Errorf("rewritten as %s", raw)
	}
	if got, err := st.Heartbeat(ctx, g, old.ID); err != nil || !reflect.DeepEqual(got, pinged) {
		t.Fatalf("read after the ping %+v, %v; want %+v", got, err, pinged)
	}
	if err := st.DeleteHeartbeat(ctx, g, old.ID, nil, herald.NewEvent(herald.EventHeartbeatDeleted, herald.Principal{}, herald.Scope{GroupID: g}, now)); err != nil {
		t.Fatal(err)
	}
	if n := rdb.ZCard(ctx, tag+"hbs").Val(); n != 1 {
		t.Errorf("%d members left in the index, want the new one's", n)
	}
	if _, ok, _ := st.HeartbeatByToken(ctx, old.TokenHash); ok {
		t.Error("a deleted heartbeat's old token still finds it")
	}
	if n := rdb.HLen(ctx, "herald:{keys}:hbtokens").Val(); n != 1 {
		t.Errorf("%d token refs, want the new one's", n)
	}

	// A token of the layout before, re-issued before it was ever pinged, stops working.
	other := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: "other", PeriodMin: 1, GraceMin: 1, TokenHash: "other-old",
		Created: herald.At(now), Updated: herald.At(now), Since: now}
	if err := st.CreateHeartbeat(ctx, other, now.Add(time.Minute), herald.Event{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.HDel(ctx, "herald:{keys}:hbtokens", "~other-old")
		pipe.Set(ctx, "herald:{keys}:hbtoken:other-old", g+"/"+other.ID, 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateHeartbeat(ctx, g, other.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		h.TokenHash = "other-new"
		return store.HeartbeatWrite{Due: now.Add(time.Minute)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.HeartbeatByToken(ctx, "other-old"); ok {
		t.Error("a re-issued token of the layout before still finds its heartbeat")
	}
	if ref, ok, _ := st.HeartbeatByToken(ctx, "other-new"); !ok || ref.ID != other.ID {
		t.Errorf("the new token finds %+v %v", ref, ok)
	}
}

// Heartbeats made at once in one project (a Terraform apply with parallelism, a fleet
// registering its jobs) are all made, and pings of the project's heartbeats meanwhile all
// succeed: neither waits on the project's other heartbeats. Two made at once with the same
// name: one is, the other is refused.
func TestHeartbeatsMadeAtOnce(t *testing.T) {
	ctx := context.Background()
	_, st, g := newProject(t)
	now := time.Now()
	mk := func(name string) herald.Heartbeat {
		return herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: name, PeriodMin: 1, GraceMin: 1,
			Status: herald.HeartbeatNew, Created: herald.At(now), Updated: herald.At(now), TokenHash: "hash-" + name, Since: now}
	}
	pinged := mk("pinged")
	if err := st.CreateHeartbeat(ctx, pinged, now.Add(time.Hour), herald.Event{}); err != nil {
		t.Fatal(err)
	}
	const makers, each = 16, 15
	errs := make(chan error, makers*each+1)
	done := make(chan struct{})
	go func() { // pings while the others are made
		defer close(done)
		for range 200 {
			if _, err := st.UpdateHeartbeat(ctx, g, pinged.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
				h.Ping(herald.PingSuccess, "", time.Now())
				return store.HeartbeatWrite{Due: time.Now().Add(time.Hour)}, nil
			}); err != nil {
				errs <- fmt.Errorf("a ping: %w", err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for m := range makers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := herald.NewEvent(herald.EventHeartbeatAdded, herald.Principal{}, herald.Scope{GroupID: g}, now)
				if err := st.CreateHeartbeat(ctx, mk(fmt.Sprintf("job-%d-%d", m, i)), now.Add(time.Hour), ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, n, err := st.Heartbeats(ctx, g, store.Page{Limit: 1}); err != nil || n != makers*each+1 {
		t.Errorf("%d heartbeats listed (%v), want %d", n, err, makers*each+1)
	}

	results := make(chan error, 8)
	for i := range 8 {
		go func() {
			h := mk("same name")
			h.ID, h.TokenHash = herald.NewID(now), fmt.Sprintf("same-%d", i)
			results <- st.CreateHeartbeat(ctx, h, now.Add(time.Hour), herald.Event{})
		}()
	}
	made := 0
	for range 8 {
		switch err := <-results; {
		case err == nil:
			made++
		case herald.ErrorOf(err) == nil || herald.ErrorOf(err).Code != herald.CodeHeartbeatAlreadyExists:
			t.Errorf("a second of the same name: %v", err)
		}
	}
	if made != 1 {
		t.Errorf("%d heartbeats made with the same name, want 1", made)
	}
	if n := st.Redis().HLen(ctx, "herald:{keys}:hbtokens").Val(); n != makers*each+2 {
		t.Errorf("%d token refs, want one for each heartbeat made (%d)", n, makers*each+2)
	}
}

// Changes of heartbeats (pings) at once, more of them than the client has connections, all
// succeed: a change holds its watched connection only for its own transaction, not while its
// change reads Redis' clock or the due set is written (the API deadlocked on its pool under 32
// pings at once, and answered 503 after the pool's timeout).
func TestHeartbeatChangesBeyondThePool(t *testing.T) {
	ctx := context.Background()
	opt := *storetest.Redis(t).Options()
	opt.PoolSize, opt.PoolTimeout = 4, time.Second
	rdb := redis.NewClient(&opt)
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb)
	g, now := herald.NewID(time.Now()), time.Now()
	const n = 16
	ids := make([]string, n)
	for i := range ids {
		h := herald.Heartbeat{ID: herald.NewID(now), GroupID: g, Name: fmt.Sprintf("job-%d", i), PeriodMin: 1, GraceMin: 1,
			Status: herald.HeartbeatNew, Created: herald.At(now), Updated: herald.At(now), TokenHash: fmt.Sprintf("hash-%d", i), Since: now}
		if err := st.CreateHeartbeat(ctx, h, now.Add(time.Hour), herald.Event{}); err != nil {
			t.Fatal(err)
		}
		ids[i] = h.ID
	}
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			_, err := st.UpdateHeartbeat(ctx, g, id, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
				at, err := st.Now(ctx) // as the API's ping does
				if err != nil {
					return store.HeartbeatWrite{}, err
				}
				h.Ping(herald.PingSuccess, "", at)
				return store.HeartbeatWrite{Due: at.Add(2 * time.Minute)}, nil
			})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, id := range ids {
		if h, err := st.Heartbeat(ctx, g, id); err != nil || h.Status != herald.HeartbeatUp {
			t.Errorf("%s after its ping: %s, %v", id, h.Status, err)
		}
	}
}
