package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// windowFields are the fields of a window with a description.
var windowFields = []string{"id", "groupId", "created", "updated", "startDate", "endDate", "alertTypeNames", "description", "links"}

// createTestWindow creates a window of project p through the API, ending in end from now.
func createTestWindow(e *env, p string, end time.Duration, types ...string) *response {
	e.t.Helper()
	now := time.Now()
	return e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", map[string]any{
		"alertTypeNames": types, "startDate": iso(now), "endDate": iso(now.Add(end)),
	}).wantStatus(200)
}

// storeEndedWindow stores a window of p that ended an hour ago: the API refuses to create one.
func storeEndedWindow(t *testing.T, e *env, p string) herald.MaintenanceWindow {
	t.Helper()
	now := time.Now()
	w := herald.MaintenanceWindow{ID: herald.NewID(now), GroupID: p, Created: herald.At(now.Add(-4 * time.Hour)), Updated: herald.At(now.Add(-4 * time.Hour)),
		StartDate: herald.At(now.Add(-3 * time.Hour)), EndDate: herald.At(now.Add(-time.Hour)), AlertTypeNames: []string{"HOST"}}
	ev := herald.NewEvent(herald.EventWindowAdded, herald.Principal{}, herald.Scope{GroupID: p}, now)
	if err := e.Store.CreateWindow(context.Background(), w, ev); err != nil {
		t.Fatal(err)
	}
	return w
}

func wantStrings(t *testing.T, v any, want ...string) {
	t.Helper()
	arr, _ := v.([]any)
	if len(arr) != len(want) {
		t.Fatalf("%v, want %v", v, want)
	}
	for i := range want {
		if arr[i] != want[i] {
			t.Fatalf("%v, want %v", v, want)
		}
	}
}

func TestWindowCreateAndRead(t *testing.T) {
	e, _, p := newProjectEnv(t)
	now := time.Now()
	start, end := now.Add(time.Hour), now.Add(3*time.Hour)

	r := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", map[string]any{
		"alertTypeNames": []string{"HOST", "REPLICA_SET", "HOST"},
		// Any offset is accepted and answered in UTC.
		"startDate":   start.In(time.FixedZone("CEST", 2*3600)).Format(time.RFC3339),
		"endDate":     iso(end),
		"description": "Upgrade of the replica set",
	}).wantStatus(200)
	wantKeys(t, r.Body, windowFields...)
	id := r.str("id")
	self := e.Base + "/groups/" + p + "/maintenanceWindows/" + id
	if r.str("groupId") != p || r.str("startDate") != iso(start) || r.str("endDate") != iso(end) ||
		r.str("description") != "Upgrade of the replica set" || link(r.Body["links"], "self") != self {
		t.Fatalf("created window: %s", r.Raw)
	}
	wantStrings(t, r.Body["alertTypeNames"], "HOST", "REPLICA_SET")
	if created, ok := herald.ParseTime(r.str("created")); !ok || created.Before(now.Add(-time.Minute)) || r.str("updated") != r.str("created") {
		t.Fatalf("created/updated: %s", r.Raw)
	}

	got := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows/"+id, nil).wantStatus(200)
	if string(got.Raw) != string(r.Raw) {
		t.Fatalf("read back %s, created %s", got.Raw, r.Raw)
	}

	// The trailing-slash form of the document; description only when one is given.
	r2 := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows/", map[string]any{
		"alertTypeNames": []string{"BACKUP"}, "startDate": iso(start), "endDate": iso(end),
	}).wantStatus(200)
	wantKeys(t, r2.Body, "id", "groupId", "created", "updated", "startDate", "endDate", "alertTypeNames", "links")

	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowAdded)
	if len(evs) != 2 || evs[0].MaintenanceWindowID != r2.str("id") || evs[1].MaintenanceWindowID != id ||
		evs[1].GroupID != p || evs[1].APIKeyID != e.Owner.KeyID {
		t.Fatalf("events %+v", evs)
	}

	e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows/"+herald.NewID(now), nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
	e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows/nonsense", nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
}

func TestWindowCreateRejected(t *testing.T) {
	e, _, p := newProjectEnv(t)
	now := time.Now()
	start, end := iso(now.Add(time.Hour)), iso(now.Add(2*time.Hour))
	tests := []struct {
		name        string
		body        any
		code, param string
	}{
		{"no alert types", map[string]any{"startDate": start, "endDate": end}, "MISSING_ATTRIBUTE", "alertTypeNames"},
		{"no start", map[string]any{"alertTypeNames": []string{"HOST"}, "endDate": end}, "MISSING_ATTRIBUTE", "startDate"},
		{"no end", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": start}, "MISSING_ATTRIBUTE", "endDate"},
		{"empty alert types", map[string]any{"alertTypeNames": []string{}, "startDate": start, "endDate": end}, "INVALID_ATTRIBUTE", "alertTypeNames"},
		{"unknown alert type", map[string]any{"alertTypeNames": []string{"HOST", "HOST_DOWN"}, "startDate": start, "endDate": end}, "INVALID_ENUM_VALUE", "alertTypeNames"},
		{"start after end", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": end, "endDate": start}, "MAINTENANCE_WINDOW_START_DATE_AFTER_END_DATE", end},
		{"start at end", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": start, "endDate": start}, "MAINTENANCE_WINDOW_START_DATE_AFTER_END_DATE", start},
		{"end passed", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": iso(now.Add(-2 * time.Hour)), "endDate": iso(now.Add(-time.Hour))}, "INVALID_ATTRIBUTE", "endDate"},
		{"not a date", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": "tomorrow", "endDate": end}, "INVALID_DATE", "startDate"},
		{"date as a number", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": 1767225600, "endDate": end}, "INVALID_DATE", "startDate"},
		{"unknown field", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": start, "endDate": end, "name": "x"}, "INVALID_ATTRIBUTE", "name"},
		{"alert types not an array", map[string]any{"alertTypeNames": "HOST", "startDate": start, "endDate": end}, "INVALID_ATTRIBUTE", "alertTypeNames"},
		{"not JSON", "alertTypeNames=HOST", "INVALID_JSON", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", tt.body).wantError(400, tt.code)
			if tt.param != "" {
				wantErrorParameter(r, tt.param)
			}
		})
	}
	r := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200)
	if r.num("totalCount") != 0 || len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowAdded)) != 0 {
		t.Fatalf("a rejected request created a window: %s", r.Raw)
	}
}

func TestWindowUpdate(t *testing.T) {
	e, _, p := newProjectEnv(t)
	created := createTestWindow(e, p, 2*time.Hour, "HOST")
	id := created.str("id")
	path := "/groups/" + p + "/maintenanceWindows/" + id
	now := time.Now()

	r := e.Owner.do("PATCH", path, map[string]any{"description": "Kernel patching"}).wantStatus(201)
	wantKeys(t, r.Body, windowFields...)
	if r.str("description") != "Kernel patching" || r.str("startDate") != created.str("startDate") || r.str("endDate") != created.str("endDate") ||
		r.str("created") != created.str("created") || link(r.Body["links"], "self") != e.Base+path {
		t.Fatalf("patched window: %s", r.Raw)
	}
	wantStrings(t, r.Body["alertTypeNames"], "HOST")

	newEnd := iso(now.Add(5 * time.Hour))
	r = e.Owner.do("PATCH", path, map[string]any{"alertTypeNames": []string{"AGENT", "BACKUP"}, "endDate": newEnd}).wantStatus(201)
	wantStrings(t, r.Body["alertTypeNames"], "AGENT", "BACKUP")
	if r.str("endDate") != newEnd || r.str("description") != "Kernel patching" {
		t.Fatalf("patched window: %s", r.Raw)
	}
	changed := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowChanged)
	if len(changed) != 2 || changed[0].MaintenanceWindowID != id || changed[0].APIKeyID != e.Owner.KeyID {
		t.Fatalf("events %+v", changed)
	}

	before := e.Owner.do("GET", path, nil).wantStatus(200)
	for _, bad := range []struct {
		body        any
		code, param string
	}{
		{map[string]any{}, "MISSING_ATTRIBUTE", "alertTypeNames"},
		{map[string]any{"alertTypeNames": []string{"SHARDED_CLUSTER"}}, "INVALID_ENUM_VALUE", "alertTypeNames"},
		{map[string]any{"description": "x", "startDate": iso(now.Add(6 * time.Hour))}, "MAINTENANCE_WINDOW_START_DATE_AFTER_END_DATE", iso(now.Add(6 * time.Hour))},
		{map[string]any{"endDate": "2026-13-45"}, "INVALID_DATE", "endDate"},
		{map[string]any{"id": id}, "INVALID_ATTRIBUTE", "id"},
	} {
		wantErrorParameter(e.Owner.do("PATCH", path, bad.body).wantError(400, bad.code), bad.param)
	}
	if after := e.Owner.do("GET", path, nil).wantStatus(200); string(after.Raw) != string(before.Raw) {
		t.Fatalf("a rejected update changed the window: %s, was %s", after.Raw, before.Raw)
	}
	if n := len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowChanged)); n != 2 {
		t.Fatalf("%d change events after rejected updates, want 2", n)
	}

	e.Owner.do("PATCH", "/groups/"+p+"/maintenanceWindows/"+herald.NewID(now), map[string]any{"description": "x"}).
		wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
}

// An ended window is gone to the API: not read, changed, deleted or listed.
func TestWindowEnded(t *testing.T) {
	e, _, p := newProjectEnv(t)
	ended := storeEndedWindow(t, e, p)
	current := createTestWindow(e, p, time.Hour, "HOST")
	path := "/groups/" + p + "/maintenanceWindows/" + ended.ID

	e.Owner.do("GET", path, nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
	e.Owner.do("PATCH", path, map[string]any{"endDate": iso(time.Now().Add(time.Hour))}).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
	e.Owner.do("DELETE", path, nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")

	r := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200)
	if r.num("totalCount") != 1 {
		t.Fatalf("totalCount %v, want 1: %s", r.Body["totalCount"], r.Raw)
	}
	wantIDs(t, r, current.str("id"))

	w, err := e.Store.Window(context.Background(), p, ended.ID)
	if err != nil || !w.EndDate.Equal(ended.EndDate.Time) {
		t.Fatalf("ended window changed: %+v, %v", w, err)
	}
	scope := store.EventScope{GroupID: p}
	if len(auditEvents(t, e, scope, herald.EventWindowChanged)) != 0 || len(auditEvents(t, e, scope, herald.EventWindowDeleted)) != 0 {
		t.Fatal("a refused request on an ended window recorded an event")
	}
}

func TestWindowList(t *testing.T) {
	e, org, p := newProjectEnv(t)
	late := createTestWindow(e, p, 3*time.Hour, "HOST").str("id")
	soon := createTestWindow(e, p, time.Hour, "AGENT").str("id")
	middle := createTestWindow(e, p, 2*time.Hour, "BACKUP").str("id")
	createTestWindow(e, e.project(org, "staging"), time.Hour, "HOST")

	r := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantIDs(t, r, soon, middle, late)
	if r.num("totalCount") != 3 {
		t.Fatalf("totalCount: %s", r.Raw)
	}
	first := r.results()[0]
	wantKeys(t, first, "id", "groupId", "created", "updated", "startDate", "endDate", "alertTypeNames", "links")
	if link(first["links"], "self") != e.Base+"/groups/"+p+"/maintenanceWindows/"+soon {
		t.Fatalf("item self link: %v", first["links"])
	}

	r = e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows?itemsPerPage=2&pageNum=2", nil).wantStatus(200)
	wantIDs(t, r, late)
	if r.num("totalCount") != 3 || link(r.Body["links"], "previous") == "" || link(r.Body["links"], "next") != "" ||
		link(r.Body["links"], "self") != e.Base+"/groups/"+p+"/maintenanceWindows?itemsPerPage=2&pageNum=2" {
		t.Fatalf("second page: %s", r.Raw)
	}
	e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows?itemsPerPage=501", nil).wantError(400, "INVALID_QUERY_PARAMETER")
	e.Owner.do("GET", "/groups/"+herald.NewID(time.Now())+"/maintenanceWindows", nil).wantError(404, "GROUP_NOT_FOUND")
}

func TestWindowDelete(t *testing.T) {
	e, _, p := newProjectEnv(t)
	id := createTestWindow(e, p, time.Hour, "HOST").str("id")
	path := "/groups/" + p + "/maintenanceWindows/" + id

	r := e.Owner.do("DELETE", path, nil).wantStatus(204)
	if len(r.Raw) != 0 {
		t.Fatalf("204 with a body: %s", r.Raw)
	}
	e.Owner.do("GET", path, nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
	e.Owner.do("DELETE", path, nil).wantError(404, "MAINTENANCE_WINDOW_NOT_FOUND")
	if list := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200); list.num("totalCount") != 0 {
		t.Fatalf("deleted window listed: %s", list.Raw)
	}
	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowDeleted)
	if len(evs) != 1 || evs[0].MaintenanceWindowID != id || evs[0].APIKeyID != e.Owner.KeyID {
		t.Fatalf("events %+v", evs)
	}
}

func TestWindowRoles(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	created := createTestWindow(e, p, time.Hour, "HOST")
	path := "/groups/" + p + "/maintenanceWindows/" + created.str("id")
	body := map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": iso(time.Now()), "endDate": iso(time.Now().Add(time.Hour))}

	reader := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	reader.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200)
	if r := reader.do("GET", path, nil).wantStatus(200); string(r.Raw) != string(created.Raw) {
		t.Fatalf("reader sees %s, want %s", r.Raw, created.Raw)
	}
	reader.do("POST", "/groups/"+p+"/maintenanceWindows", body).wantError(401, "USER_UNAUTHORIZED")
	reader.do("PATCH", path, map[string]any{"description": "x"}).wantError(401, "USER_UNAUTHORIZED")
	reader.do("DELETE", path, nil).wantError(401, "USER_UNAUTHORIZED")

	outsider := e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner})
	outsider.do("GET", path, nil).wantError(401, "USER_UNAUTHORIZED")
	outsider.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantError(401, "USER_UNAUTHORIZED")

	if r := e.Owner.do("GET", path, nil).wantStatus(200); string(r.Raw) != string(created.Raw) {
		t.Fatalf("refused requests changed the window: %s", r.Raw)
	}
	scope := store.EventScope{GroupID: p}
	if len(auditEvents(t, e, scope, herald.EventWindowAdded)) != 1 || len(auditEvents(t, e, scope, herald.EventWindowChanged)) != 0 ||
		len(auditEvents(t, e, scope, herald.EventWindowDeleted)) != 0 {
		t.Fatal("refused requests recorded events")
	}

	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin})
	admin.do("PATCH", path, map[string]any{"description": "by the monitoring admin"}).wantStatus(201)
}

// The document's trailing-slash form of creating a window is that path only: a POST to a
// window's own path (a client updating with the wrong method) or to any path under it is 405
// (404 when nothing is there) and creates nothing, rather than a new window that silences
// alerts.
func TestWindowCreateOnlyAtTheCollection(t *testing.T) {
	e, _, p := newProjectEnv(t)
	id := createTestWindow(e, p, time.Hour, "HOST").str("id")
	now := time.Now()
	body := map[string]any{"alertTypeNames": []string{"BACKUP"}, "startDate": iso(now), "endDate": iso(now.Add(time.Hour))}
	e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows/"+id, body).wantError(405, "METHOD_NOT_ALLOWED")
	e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows/"+id+"/more", body).wantError(404, "RESOURCE_NOT_FOUND")
	r := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200)
	wantIDs(t, r, id)
	if evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventWindowAdded); len(evs) != 1 {
		t.Fatalf("%d windows recorded added, want the one created", len(evs))
	}
}
