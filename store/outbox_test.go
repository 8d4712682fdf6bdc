package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// An outbox entry holds notices together, the same whatever their order; its notices come back
// out of it (sorted); one notice, as every outbox member was before entries, is its own entry.
func TestOutboxEntry(t *testing.T) {
	a, b, c := []byte(`{"deliveryId":"a","event":"x,y"}`), []byte(`{"deliveryId":"b"}`), []byte(`{"deliveryId":"c","fp":"[]"}`)
	for _, tc := range []struct {
		name    string
		notices [][]byte
		want    [][]byte // OutboxNotices of the entry
	}{
		{"one", [][]byte{b}, [][]byte{b}},
		{"several", [][]byte{c, a, b}, [][]byte{a, b, c}},
		{"in another order", [][]byte{b, c, a}, [][]byte{a, b, c}},
	} {
		entry := store.OutboxEntry(tc.notices)
		got, err := store.OutboxNotices(entry)
		if err != nil || !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("%s: entry %s holds %q %v, want %q", tc.name, entry, got, err, tc.want)
		}
	}
	if x, y := store.OutboxEntry([][]byte{a, b, c}), store.OutboxEntry([][]byte{c, b, a}); string(x) != string(y) {
		t.Errorf("the order of the notices changed the entry: %s, %s", x, y)
	}
	if _, err := store.OutboxNotices([]byte(`[{"a":1},`)); err == nil {
		t.Error("a damaged entry was read")
	}
}

// A transaction's notices held as long go to the outbox as one entry, and those held a different
// time as another: ClaimOutbox hands them out as entries, each with its notices.
func TestTransactWritesAnOutboxEntryAStep(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	sc := store.Scope{GroupID: herald.NewID(time.Now())}
	now := time.Now()
	until, later := now.Add(-time.Second), now.Add(-2*time.Second) // both ran out: claimable now
	var changes []store.Change
	var step, other [][]byte
	for i := range 3 {
		a := herald.Alert{ID: herald.NewID(now), GroupID: sc.GroupID, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: fmt.Sprint("h", i)}
		n := []byte(fmt.Sprintf(`{"deliveryId":"%s-0-1"}`, a.ID))
		c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: herald.Schedule{Detected: now, Next: []time.Time{{}}, Sent: []int{1}},
			Target: "t" + a.ID, Scope: sc}, Notices: [][]byte{n}, OutboxUntil: until}
		if i == 2 {
			c.OutboxUntil = later
			other = append(other, n)
		} else {
			step = append(step, n)
		}
		changes = append(changes, c)
	}
	if _, err := lease(t, st, sc.GroupID).Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return changes, nil }); err != nil {
		t.Fatal(err)
	}
	entries, err := lease(t, st, sc.GroupID).ClaimOutbox(ctx, sc, now, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{string(store.OutboxEntry(other)), string(store.OutboxEntry(step))} // earliest first
	if got := []string{}; len(entries) != 2 || string(entries[0]) != want[0] || string(entries[1]) != want[1] {
		for _, e := range entries {
			got = append(got, string(e))
		}
		t.Fatalf("outbox %q, want %q", got, want)
	}
	if err := lease(t, st, sc.GroupID).DoneOutbox(ctx, sc, entries...); err != nil {
		t.Fatal(err)
	}
	if left, err := lease(t, st, sc.GroupID).ClaimOutbox(ctx, sc, now.Add(time.Hour), time.Minute, 10); err != nil || len(left) != 0 {
		t.Errorf("after DoneOutbox: %q %v", left, err)
	}
}
