package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// CountActiveAlerts sums every project's TRACKING and OPEN alerts, past one page of projects,
// counts the global ones apart, leaves ended alerts out, and follows status changes.
func TestCountActiveAlerts(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	now := time.Now()
	const projects = 501 // one more than a round trip reads
	ids := make([]string, projects)
	for i := range ids {
		p, _ := herald.NewProject(fmt.Sprintf("p%d", i), "5f0000000000000000000001", nil, now)
		if err := st.CreateProject(ctx, p, nil, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: p.OrgID}, now)); err != nil {
			t.Fatal(err)
		}
		ids[i] = p.ID
	}
	save := func(groupID, status string, global bool) herald.Alert {
		t.Helper()
		a := herald.Alert{ID: herald.NewID(now), GroupID: groupID, AlertConfigID: "5f00000000000000000000c0",
			EventTypeName: "HOST_DOWN", Status: status, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, a, global, ""); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// Alerts in the first and the last project (the second page).
	tracking := save(ids[0], herald.StatusTracking, false)
	save(ids[0], herald.StatusOpen, false)
	save(ids[projects-1], herald.StatusOpen, false)
	save(ids[projects-1], herald.StatusClosed, false)
	save(ids[1], herald.StatusCancelled, false)
	save(ids[2], herald.StatusOpen, true)
	save(ids[3], herald.StatusOpen, true)
	save(ids[3], herald.StatusTracking, true)

	check := func(wantProject, wantGlobal map[string]int64) {
		t.Helper()
		got, err := st.CountActiveAlerts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Project) != fmt.Sprint(wantProject) || fmt.Sprint(got.Global) != fmt.Sprint(wantGlobal) {
			t.Fatalf("counts project %v global %v, want %v and %v", got.Project, got.Global, wantProject, wantGlobal)
		}
	}
	check(map[string]int64{"OPEN": 2, "TRACKING": 1}, map[string]int64{"OPEN": 2, "TRACKING": 1})

	tracking.Status = herald.StatusOpen
	if err := st.SaveAlert(ctx, tracking, false, herald.StatusTracking); err != nil {
		t.Fatal(err)
	}
	check(map[string]int64{"OPEN": 3, "TRACKING": 0}, map[string]int64{"OPEN": 2, "TRACKING": 1})
}

// With no project and no alert, every count is there, zero.
func TestCountActiveAlertsEmpty(t *testing.T) {
	got, err := store.New(storetest.Redis(t)).CountActiveAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"OPEN": 0, "TRACKING": 0}
	if fmt.Sprint(got.Project) != fmt.Sprint(want) || fmt.Sprint(got.Global) != fmt.Sprint(want) {
		t.Fatalf("counts project %v global %v, want zeros", got.Project, got.Global)
	}
}
