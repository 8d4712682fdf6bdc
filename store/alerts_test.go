package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The list of all alerts (the four status indexes merged) pages as one index would: newest
// first, ties within a second by id, descending; every page's total the whole range's.
func TestAllAlertsPageAsOneList(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	gid := herald.NewID(time.Now())
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
