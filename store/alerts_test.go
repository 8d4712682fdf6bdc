package store_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The list of all alerts (the four status indexes merged) pages as one index would: newest
// first, ties within a second by id, descending; every page's total the whole range's.
func TestAllAlertsPageAsOneList(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	statuses := []string{herald.StatusTracking, herald.StatusOpen, herald.StatusClosed, herald.StatusCancelled}
	base := time.Unix(1_795_000_000, 0)
	var all []herald.Alert
	for i := range 57 {
		created := base.Add(time.Duration(i%5) * time.Second) // many alerts share a second
		a := herald.Alert{ID: herald.NewID(created), GroupID: gid, AlertConfigID: "cfg", EventTypeName: "HOST_DOWN",
			Status: statuses[(i*7)%4], Created: herald.At(created), Updated: herald.At(created)}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		all = append(all, a)
	}
	newestFirst := func(as []herald.Alert) []string {
		slices.SortFunc(as, func(a, b herald.Alert) int {
			if c := b.Created.Compare(a.Created.Time); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		var ids []string
		for _, a := range as {
			ids = append(ids, a.ID)
		}
		return ids
	}
	within := func(r store.TimeRange) []string {
		var in []herald.Alert
		for _, a := range all {
			if (r.Min.IsZero() || !a.Created.Before(r.Min)) && (r.Max.IsZero() || !a.Created.After(r.Max)) {
				in = append(in, a)
			}
		}
		return newestFirst(in)
	}
	for _, tc := range []struct {
		name  string
		r     store.TimeRange
		pages []store.Page
	}{
		{"first page", store.TimeRange{}, []store.Page{{Limit: 10}}},
		{"every page of 7", store.TimeRange{}, []store.Page{{0, 7}, {7, 7}, {14, 7}, {49, 7}, {56, 7}}},
		{"one at a time", store.TimeRange{}, []store.Page{{0, 1}, {1, 1}, {30, 1}, {56, 1}}},
		{"past the end", store.TimeRange{}, []store.Page{{57, 10}, {100, 10}}},
		{"all at once", store.TimeRange{}, []store.Page{{0, 500}}},
		{"deeper than a chunk", store.TimeRange{}, []store.Page{{20, 30}}},
		{"a time range", store.TimeRange{Min: base.Add(time.Second), Max: base.Add(3 * time.Second)}, []store.Page{{0, 5}, {5, 50}}},
	} {
		want := within(tc.r)
		for _, p := range tc.pages {
			got, total, err := st.Alerts(ctx, gid, store.AlertFilter{Created: tc.r}, p)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			end := min(p.Offset+p.Limit, len(want))
			exp := want[min(p.Offset, len(want)):end]
			if fmt.Sprint(ids) != fmt.Sprint(exp) || total != len(want) {
				t.Errorf("%s, page %+v: got %v (total %d), want %v (total %d)", tc.name, p, ids, total, exp, len(want))
			}
		}
	}
}

// Alert indexes list alerts by their ids' 12 bytes. Alerts the previous layout listed (whole
// ids) are listed with them, newest first, a page at a time, in every list (all, by status, by
// configuration); they stay listed once when they change without changing status, move (in
// the new form) when their status changes, and are purged with the new ones.
func TestAlertIndexesOfBothLayouts(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	gid, cfg := herald.NewID(time.Now()), herald.NewID(time.Now())
	prefix := "herald:{g:" + gid + "}:"
	open, config := prefix+"alerts:status:OPEN", prefix+"alerts:config:"+cfg
	base := time.Unix(1_795_000_000, 0)
	var want []string // newest first
	var before []herald.Alert
	for i := range 9 {
		created := base.Add(time.Duration(i/2) * time.Second) // two alerts a second
		a := herald.Alert{ID: herald.NewID(created), GroupID: gid, AlertConfigID: cfg, EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(created), Updated: herald.At(created)}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		want = append([]string{a.ID}, want...)
		if i >= 4 {
			continue
		}
		// The first four as the previous layout listed them: by their whole ids.
		before = append(before, a)
		b, _ := hex.DecodeString(a.ID)
		for _, index := range []string{open, config} {
			rdb.ZRem(ctx, index, string(b))
			rdb.ZAdd(ctx, index, redis.Z{Score: float64(created.Unix()), Member: a.ID})
		}
	}
	members, _ := rdb.ZRange(ctx, open, 0, -1).Result()
	short := 0
	for _, m := range members {
		if len(m) == 12 {
			short++
		}
	}
	if len(members) != 9 || short != 5 {
		t.Fatalf("the OPEN index holds %d members, %d of them 12 bytes; want 9 and 5", len(members), short)
	}
	lists := map[string]func(store.Page) ([]herald.Alert, int, error){
		"all": func(p store.Page) ([]herald.Alert, int, error) { return st.Alerts(ctx, gid, store.AlertFilter{}, p) },
		"OPEN": func(p store.Page) ([]herald.Alert, int, error) {
			return st.Alerts(ctx, gid, store.AlertFilter{Status: herald.StatusOpen}, p)
		},
		"configuration": func(p store.Page) ([]herald.Alert, int, error) { return st.ConfigAlerts(ctx, gid, cfg, p) },
	}
	listed := func(name string, want []string) {
		t.Helper()
		for _, size := range []int{2, 3, 100} {
			var got []string
			for off := 0; off < len(want)+size; off += size {
				page, total, err := lists[name](store.Page{Offset: off, Limit: size})
				if err != nil || total != len(want) {
					t.Fatalf("%s, page %d+%d: total %d, %v; want %d", name, off, size, total, err, len(want))
				}
				for _, a := range page {
					got = append(got, a.ID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s in pages of %d: %v, want %v", name, size, got, want)
			}
		}
	}
	for name := range lists {
		listed(name, want)
	}

	// An acknowledgement (no status change) leaves the entries as they were.
	acked, err := st.UpdateAlert(ctx, false, gid, before[0].ID, func(a *herald.Alert) ([]herald.Event, error) {
		a.AcknowledgementComment = "mine"
		return nil, nil
	})
	if err != nil || acked.AcknowledgementComment != "mine" {
		t.Fatalf("acknowledged: %+v, %v", acked, err)
	}
	for name := range lists {
		listed(name, want)
	}
	// Closing moves an alert of either form to the CLOSED index, by its 12 bytes.
	closed := map[string]bool{}
	for _, id := range []string{before[1].ID, want[0]} {
		if _, err := st.UpdateAlert(ctx, false, gid, id, func(a *herald.Alert) ([]herald.Event, error) {
			a.Status = herald.StatusClosed
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		closed[id] = true
	}
	var stillOpen []string
	for _, id := range want {
		if !closed[id] {
			stillOpen = append(stillOpen, id)
		}
	}
	listed("all", want)
	listed("OPEN", stillOpen)
	listed("configuration", stillOpen)
	if members, _ := rdb.ZRange(ctx, prefix+"alerts:status:CLOSED", 0, -1).Result(); len(members) != 2 || len(members[0]) != 12 || len(members[1]) != 12 {
		t.Errorf("CLOSED index members %q, want two of 12 bytes", members)
	}

	// Retention purges both forms, from every index.
	for _, id := range stillOpen {
		if _, err := st.UpdateAlert(ctx, false, gid, id, func(a *herald.Alert) ([]herald.Event, error) {
			a.Status, a.Resolved = herald.StatusClosed, herald.At(base)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	deleted, more, err := st.PurgeAlerts(ctx, false, gid, base.Add(time.Hour), 100)
	if err != nil || deleted != 9 || more {
		t.Fatalf("purged %d (more %v), %v", deleted, more, err)
	}
	keys, _ := rdb.Keys(ctx, prefix+"alert*").Result()
	if len(keys) != 0 {
		t.Errorf("left after the purge: %v", keys)
	}
}

// Alerts read by id come back in the order asked, without the missing, the
// malformed, or another collection's; each with its lastNotified.
func TestAlertsByID(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	base := time.Unix(1_795_000_000, 0)
	var ids []string
	for i := range 3 {
		created := base.Add(time.Duration(i) * time.Second)
		a := herald.Alert{ID: herald.NewID(created), GroupID: gid, AlertConfigID: "cfg", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(created), Updated: herald.At(created), LastNotified: herald.At(created)}
		if err := st.SaveAlert(ctx, a, i == 2, ""); err != nil { // the third is global
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	idsOf := func(as []herald.Alert, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range as {
			if a.LastNotified.IsZero() {
				t.Errorf("alert %s read without its lastNotified", a.ID)
			}
			out = append(out, a.ID)
		}
		return out
	}
	missing := herald.NewID(base)
	ask := []string{ids[1], missing, "not-an-id", ids[2], ids[0]}
	if got, want := idsOf(st.AlertsByID(ctx, gid, ask)), []string{ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Errorf("AlertsByID = %v, want %v", got, want)
	}
	if got, want := idsOf(st.GlobalAlertsByID(ctx, ask)), []string{ids[2]}; !slices.Equal(got, want) {
		t.Errorf("GlobalAlertsByID = %v, want %v", got, want)
	}
	if got := idsOf(st.AlertsByID(ctx, gid, nil)); len(got) != 0 {
		t.Errorf("AlertsByID(nil) = %v", got)
	}
}
