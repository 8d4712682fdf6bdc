package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// saveTestAlert stores a as the alert engine would (global or of its project) and returns it.
func saveTestAlert(t *testing.T, e *env, global bool, a herald.Alert) herald.Alert {
	t.Helper()
	if err := e.Store.SaveAlert(context.Background(), a, global, ""); err != nil {
		t.Fatal(err)
	}
	return a
}

// hostDownAlert is a HOST_DOWN alert of project groupID created at created: the host fields
// that alert type carries, and none of the fields returned only under a condition.
func hostDownAlert(groupID, status string, created time.Time) herald.Alert {
	return herald.Alert{ID: herald.NewID(created), GroupID: groupID, AlertConfigID: herald.NewID(created),
		EventTypeName: "HOST_DOWN", Status: status, Created: herald.At(created), Updated: herald.At(created),
		HostID: "b3f5c0a1e2d4", HostnameAndPort: "db1.example.com:27017", ReplicaSetName: "rs0"}
}

// auditEvents is the events of type typ recorded in scope, newest first.
func auditEvents(t *testing.T, e *env, scope store.EventScope, typ string) []herald.Event {
	t.Helper()
	evs, _, err := e.Store.Events(context.Background(), scope, store.EventFilter{EventType: typ}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// wantErrorParameter checks that an error answer names name as its parameter.
func wantErrorParameter(r *response, name string) {
	r.t.Helper()
	if params, _ := r.Body["parameters"].([]any); len(params) == 0 || params[0] != name {
		r.t.Fatalf("error parameters do not name %s: %s", name, r.Raw)
	}
}

// iso is t as the API writes it.
func iso(t time.Time) string { return herald.At(t).String() }

// wantIDs checks the ids of a list answer's results, in order.
func wantIDs(t *testing.T, r *response, want ...string) {
	t.Helper()
	var got []string
	for _, it := range r.results() {
		got = append(got, it["id"].(string))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("results %v, want %v: %s", got, want, r.Raw)
	}
}

func TestProjectAlertRead(t *testing.T) {
	e, org, p := newProjectEnv(t)
	created := time.Now().Add(-time.Hour)
	down := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, created))
	metric := herald.Alert{ID: herald.NewID(created), GroupID: p, AlertConfigID: herald.NewID(created),
		EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Status: herald.StatusClosed, Created: herald.At(created),
		Updated: herald.At(created.Add(30 * time.Minute)), Resolved: herald.At(created.Add(30 * time.Minute)),
		LastNotified: herald.At(created.Add(5 * time.Minute)), HostID: "b3f5c0a1e2d4", HostnameAndPort: "db1.example.com:27017",
		ReplicaSetName: "rs0", MetricName: "CONNECTIONS", CurrentValue: &herald.CurrentValue{Number: 512, Units: "RAW"}}
	saveTestAlert(t, e, false, metric)

	r := e.Owner.do("GET", "/groups/"+p+"/alerts/"+down.ID, nil).wantStatus(200)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "links")
	for field, want := range map[string]string{"id": down.ID, "groupId": p, "alertConfigId": down.AlertConfigID,
		"eventTypeName": "HOST_DOWN", "status": "OPEN", "created": iso(created), "updated": iso(created),
		"hostId": "b3f5c0a1e2d4", "hostnameAndPort": "db1.example.com:27017", "replicaSetName": "rs0"} {
		if got := r.str(field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	if got, want := link(r.Body["links"], "self"), e.Base+"/groups/"+p+"/alerts/"+down.ID; got != want {
		t.Errorf("self link %q, want %q", got, want)
	}

	r = e.Owner.do("GET", "/groups/"+p+"/alerts/"+metric.ID, nil).wantStatus(200)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"resolved", "lastNotified", "hostId", "hostnameAndPort", "replicaSetName", "metricName", "currentValue", "links")
	if r.str("resolved") != iso(created.Add(30*time.Minute)) || r.str("lastNotified") != iso(created.Add(5*time.Minute)) ||
		r.str("metricName") != "CONNECTIONS" || r.str("status") != "CLOSED" {
		t.Errorf("closed metric alert: %s", r.Raw)
	}
	cv, _ := r.Body["currentValue"].(map[string]any)
	wantKeys(t, cv, "number", "units")
	if cv["number"] != 512.0 || cv["units"] != "RAW" {
		t.Errorf("currentValue %v", cv)
	}

	// Any role in the project reads; an unknown id, or another project's alert, is not found.
	reader := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	reader.do("GET", "/groups/"+p+"/alerts/"+down.ID, nil).wantStatus(200)
	unknown := herald.NewID(time.Now())
	wantErrorParameter(e.Owner.do("GET", "/groups/"+p+"/alerts/"+unknown, nil).wantError(404, "ALERT_NOT_FOUND"), unknown)
	e.Owner.do("GET", "/groups/"+p+"/alerts/not-an-id", nil).wantError(404, "ALERT_NOT_FOUND")
	other := e.project(org, "staging")
	e.Owner.do("GET", "/groups/"+other+"/alerts/"+down.ID, nil).wantError(404, "ALERT_NOT_FOUND")
	e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).
		do("GET", "/groups/"+p+"/alerts/"+down.ID, nil).wantError(401, "USER_UNAUTHORIZED")
}

func TestProjectAlertList(t *testing.T) {
	e, org, p := newProjectEnv(t)
	start := time.Now().Add(-3 * time.Hour)
	oldest := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusClosed, start))
	middle := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, start.Add(time.Hour)))
	newest := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, start.Add(2*time.Hour)))
	other := e.project(org, "staging")
	saveTestAlert(t, e, false, hostDownAlert(other, herald.StatusOpen, start))

	reader := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	r := reader.do("GET", "/groups/"+p+"/alerts", nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantIDs(t, r, newest.ID, middle.ID, oldest.ID)
	if r.num("totalCount") != 3 {
		t.Errorf("totalCount %v, want 3", r.Body["totalCount"])
	}
	item := r.results()[0]
	if got, want := link(item["links"], "self"), e.Base+"/groups/"+p+"/alerts/"+newest.ID; got != want {
		t.Errorf("item self link %q, want %q", got, want)
	}
	if !strings.HasPrefix(link(r.Body["links"], "self"), e.Base+"/groups/"+p+"/alerts?") {
		t.Errorf("list self link %q", link(r.Body["links"], "self"))
	}

	r = e.Owner.do("GET", "/groups/"+p+"/alerts?status=OPEN", nil).wantStatus(200)
	wantIDs(t, r, newest.ID, middle.ID)
	r = e.Owner.do("GET", "/groups/"+p+"/alerts?status=CANCELLED", nil).wantStatus(200)
	wantIDs(t, r)
	if r.num("totalCount") != 0 {
		t.Errorf("totalCount %v, want 0", r.Body["totalCount"])
	}

	r = e.Owner.do("GET", "/groups/"+p+"/alerts?itemsPerPage=2&pageNum=2", nil).wantStatus(200)
	wantIDs(t, r, oldest.ID)
	if r.num("totalCount") != 3 || link(r.Body["links"], "next") != "" || link(r.Body["links"], "previous") == "" {
		t.Errorf("second page links: %s", r.Raw)
	}
	r = e.Owner.do("GET", "/groups/"+p+"/alerts?status=OPEN&itemsPerPage=1", nil).wantStatus(200)
	wantIDs(t, r, newest.ID)
	if next := link(r.Body["links"], "next"); !strings.Contains(next, "status=OPEN") || !strings.Contains(next, "pageNum=2") {
		t.Errorf("next link %q keeps neither the filter nor the page", next)
	}

	wantErrorParameter(e.Owner.do("GET", "/groups/"+p+"/alerts?status=open", nil).wantError(400, "INVALID_QUERY_PARAMETER"), "status")
	wantErrorParameter(e.Owner.do("GET", "/groups/"+p+"/alerts?itemsPerPage=501", nil).wantError(400, "INVALID_QUERY_PARAMETER"), "itemsPerPage")
	e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupReadOnly}).
		do("GET", "/groups/"+p+"/alerts", nil).wantError(401, "USER_UNAUTHORIZED")
}

func TestAcknowledgeProjectAlert(t *testing.T) {
	e, org, p := newProjectEnv(t)
	a := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, time.Now().Add(-time.Hour)))
	path := "/groups/" + p + "/alerts/" + a.ID
	projectEvents := store.EventScope{GroupID: p}
	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin})

	// Rejected requests change nothing and record nothing.
	reader := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	until := time.Now().Add(2 * time.Hour)
	reader.do("PATCH", path, map[string]any{"acknowledgedUntil": iso(until)}).wantError(401, "USER_UNAUTHORIZED")
	for _, bad := range []struct {
		body       any
		code, name string
	}{
		{map[string]any{"acknowledgementComment": "on it"}, "MISSING_ATTRIBUTE", "acknowledgedUntil"},
		{map[string]any{"acknowledgedUntil": nil}, "MISSING_ATTRIBUTE", "acknowledgedUntil"},
		{map[string]any{"acknowledgedUntil": "next tuesday"}, "INVALID_DATE", "acknowledgedUntil"},
		{map[string]any{"acknowledgedUntil": iso(until), "acknowledgementComment": strings.Repeat("x", 201)}, "INVALID_ATTRIBUTE", "acknowledgementComment"},
		{map[string]any{"acknowledgedUntil": iso(until), "acknowledgementComment": 7}, "INVALID_ATTRIBUTE", "acknowledgementComment"},
		{map[string]any{"acknowledgedUntil": iso(until), "status": "CLOSED"}, "INVALID_ATTRIBUTE", "status"},
	} {
		r := admin.do("PATCH", path, bad.body).wantError(400, bad.code)
		if bad.name != "" {
			wantErrorParameter(r, bad.name)
		}
	}
	admin.do("PATCH", path, "").wantError(400, "INVALID_JSON")
	admin.do("PATCH", "/groups/"+p+"/alerts/"+herald.NewID(time.Now()), map[string]any{"acknowledgedUntil": iso(until)}).
		wantError(404, "ALERT_NOT_FOUND")
	r := e.Owner.do("GET", path, nil).wantStatus(200)
	if _, ok := r.Body["acknowledgedUntil"]; ok || r.str("updated") != iso(a.Updated.Time) {
		t.Fatalf("a rejected acknowledgement changed the alert: %s", r.Raw)
	}
	if evs := auditEvents(t, e, projectEvents, herald.EventAlertAcknowledged); len(evs) != 0 {
		t.Fatalf("rejected acknowledgements recorded %d events", len(evs))
	}

	// Acknowledge: the time is read as ISO 8601 with any offset and shown in UTC.
	comment := strings.Repeat("é", 200)
	before := time.Now().Truncate(time.Second)
	r = admin.do("PATCH", path, map[string]any{"acknowledgedUntil": until.In(time.FixedZone("", 2*3600)).Format(time.RFC3339),
		"acknowledgementComment": comment}).wantStatus(200)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "acknowledgedUntil", "acknowledgementComment", "acknowledgingUsername", "links")
	if r.str("acknowledgedUntil") != iso(until) || r.str("acknowledgementComment") != comment ||
		r.str("acknowledgingUsername") != admin.user || r.str("status") != "OPEN" {
		t.Errorf("acknowledged alert: %s", r.Raw)
	}
	if updated, _ := herald.ParseTime(r.str("updated")); updated.Before(before) {
		t.Errorf("updated %s is before the request", r.str("updated"))
	}
	if got := link(r.Body["links"], "self"); got != e.Base+path {
		t.Errorf("self link %q", got)
	}
	if got := e.Owner.do("GET", path, nil).wantStatus(200); got.str("acknowledgedUntil") != iso(until) || got.str("acknowledgingUsername") != admin.user {
		t.Errorf("read back: %s", got.Raw)
	}
	evs := auditEvents(t, e, projectEvents, herald.EventAlertAcknowledged)
	if len(evs) != 1 || evs[0].AlertID != a.ID || evs[0].AlertConfigID != a.AlertConfigID || evs[0].GroupID != p ||
		evs[0].OrgID != org || evs[0].APIKeyID != admin.KeyID || evs[0].PublicKey != admin.user {
		t.Fatalf("acknowledged events: %+v", evs)
	}

	// A past time un-acknowledges; doing it again changes nothing.
	r = admin.do("PATCH", path, map[string]any{"acknowledgedUntil": iso(time.Now().Add(-time.Minute))}).wantStatus(200)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "links")
	evs = auditEvents(t, e, projectEvents, herald.EventAlertUnacknowledged)
	if len(evs) != 1 || evs[0].AlertID != a.ID || evs[0].AlertConfigID != a.AlertConfigID {
		t.Fatalf("unacknowledged events: %+v", evs)
	}
	fresh := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusTracking, time.Now().Add(-time.Hour)))
	r = admin.do("PATCH", "/groups/"+p+"/alerts/"+fresh.ID, map[string]any{"acknowledgedUntil": "2001-01-01"}).wantStatus(200)
	if r.str("updated") != iso(fresh.Updated.Time) {
		t.Errorf("un-acknowledging an unacknowledged alert changed it: %s", r.Raw)
	}
	if evs := auditEvents(t, e, projectEvents, herald.EventAlertUnacknowledged); len(evs) != 1 {
		t.Errorf("un-acknowledging an unacknowledged alert recorded an event: %+v", evs)
	}

	// A closed alert can no longer be acknowledged.
	closed := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusClosed, time.Now().Add(-time.Hour)))
	wantErrorParameter(admin.do("PATCH", "/groups/"+p+"/alerts/"+closed.ID, map[string]any{"acknowledgedUntil": iso(until)}).
		wantError(409, "ALERT_NOT_ACTIVE"), closed.ID)
	if r := e.Owner.do("GET", "/groups/"+p+"/alerts/"+closed.ID, nil); r.Body["acknowledgedUntil"] != nil {
		t.Errorf("closed alert was acknowledged: %s", r.Raw)
	}
	if evs := auditEvents(t, e, projectEvents, herald.EventAlertAcknowledged); len(evs) != 1 {
		t.Errorf("refused acknowledgement recorded an event: %+v", evs)
	}
}

func TestGlobalAlertRead(t *testing.T) {
	e, _, p := newProjectEnv(t)
	created := time.Now().Add(-time.Hour)
	a := hostDownAlert(p, herald.StatusOpen, created)
	a.Tags = []string{"production"}
	saveTestAlert(t, e, true, a)
	projectAlert := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, created))

	r := e.Owner.do("GET", "/globalAlerts/"+a.ID, nil).wantStatus(200)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "tags", "links")
	if r.str("id") != a.ID || r.str("groupId") != p || r.str("alertConfigId") != a.AlertConfigID ||
		r.str("status") != "OPEN" || r.str("created") != iso(created) {
		t.Errorf("global alert: %s", r.Raw)
	}
	if tags, _ := r.Body["tags"].([]any); len(tags) != 1 || tags[0] != "production" {
		t.Errorf("tags %v", r.Body["tags"])
	}
	if got := link(r.Body["links"], "self"); got != e.Base+"/globalAlerts/"+a.ID {
		t.Errorf("self link %q", got)
	}

	e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}).do("GET", "/globalAlerts/"+a.ID, nil).wantStatus(200)
	e.Owner.do("GET", "/globalAlerts/"+projectAlert.ID, nil).wantError(404, "ALERT_NOT_FOUND")
	e.Owner.do("GET", "/globalAlerts/"+herald.NewID(time.Now()), nil).wantError(404, "ALERT_NOT_FOUND")
	readOnly := e.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	readOnly.do("GET", "/globalAlerts/"+a.ID, nil).wantError(401, "USER_UNAUTHORIZED")
	readOnly.do("GET", "/globalAlerts", nil).wantError(401, "USER_UNAUTHORIZED")
}

func TestGlobalAlertList(t *testing.T) {
	e, _, p := newProjectEnv(t)
	day := func(d int) time.Time { return time.Date(2026, 1, d, 12, 0, 0, 0, time.UTC) }
	jan1 := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusClosed, day(1)))
	jan2 := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusOpen, day(2)))
	jan3 := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusClosed, day(3)))
	jan4 := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusTracking, day(4)))
	saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, day(5)))

	r := e.Owner.do("GET", "/globalAlerts", nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantIDs(t, r, jan4.ID, jan3.ID, jan2.ID, jan1.ID)
	if got, want := link(r.results()[0]["links"], "self"), e.Base+"/globalAlerts/"+jan4.ID; got != want {
		t.Errorf("item self link %q, want %q", got, want)
	}

	for query, want := range map[string][]string{
		"status=CLOSED":                          {jan3.ID, jan1.ID},
		"status=TRACKING":                        {jan4.ID},
		"createdOnOrAfter=2026-01-02":            {jan4.ID, jan3.ID, jan2.ID},
		"createdOnOrBefore=2026-01-02T12:00:00Z": {jan2.ID, jan1.ID},
		"createdOnOrAfter=2026-01-02T12:00:00Z&createdOnOrBefore=2026-01-03T12:00:00Z": {jan3.ID, jan2.ID},
		"createdOnOrAfter=2026-01-02T13:00:00%2B01:00&createdOnOrBefore=2026-01-04":    {jan3.ID, jan2.ID},
		"status=CLOSED&createdOnOrAfter=2026-01-02":                                    {jan3.ID},
		"createdOnOrAfter=2026-02-01":                                                  {},
	} {
		r := e.Owner.do("GET", "/globalAlerts?"+query, nil).wantStatus(200)
		wantIDs(t, r, want...)
		if int(r.num("totalCount")) != len(want) {
			t.Errorf("%s: totalCount %v, want %d", query, r.Body["totalCount"], len(want))
		}
	}

	r = e.Owner.do("GET", "/globalAlerts?itemsPerPage=1&pageNum=2&status=CLOSED", nil).wantStatus(200)
	wantIDs(t, r, jan1.ID)
	if r.num("totalCount") != 2 || link(r.Body["links"], "next") != "" || !strings.Contains(link(r.Body["links"], "previous"), "pageNum=1") {
		t.Errorf("last page: %s", r.Raw)
	}
	r = e.Owner.do("GET", "/globalAlerts?itemsPerPage=2", nil).wantStatus(200)
	wantIDs(t, r, jan4.ID, jan3.ID)
	if next := link(r.Body["links"], "next"); !strings.HasPrefix(next, e.Base+"/globalAlerts?") || !strings.Contains(next, "pageNum=2") {
		t.Errorf("next link %q", next)
	}

	for query, name := range map[string]string{
		"status=RESOLVED":              "status",
		"createdOnOrAfter=yesterday":   "createdOnOrAfter",
		"createdOnOrBefore=2026-13-01": "createdOnOrBefore",
		"pageNum=0":                    "pageNum",
	} {
		wantErrorParameter(e.Owner.do("GET", "/globalAlerts?"+query, nil).wantError(400, "INVALID_QUERY_PARAMETER"), name)
	}
}

func TestAcknowledgeGlobalAlert(t *testing.T) {
	e, _, p := newProjectEnv(t)
	a := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusOpen, time.Now().Add(-time.Hour)))
	path := "/globalAlerts/" + a.ID
	until := time.Now().Add(time.Hour)

	e.key("", herald.Role{RoleName: herald.GlobalReadOnly}).
		do("PATCH", path, map[string]any{"acknowledgedUntil": iso(until)}).wantError(401, "USER_UNAUTHORIZED")
	wantErrorParameter(e.Owner.do("PATCH", path, map[string]any{"acknowledgementComment": "on it"}).wantError(400, "MISSING_ATTRIBUTE"), "acknowledgedUntil")
	wantErrorParameter(e.Owner.do("PATCH", path, map[string]any{"acknowledgedUntil": iso(until), "acknowledgementComment": strings.Repeat("x", 201)}).
		wantError(400, "INVALID_ATTRIBUTE"), "acknowledgementComment")
	e.Owner.do("PATCH", "/globalAlerts/"+herald.NewID(time.Now()), map[string]any{"acknowledgedUntil": iso(until)}).wantError(404, "ALERT_NOT_FOUND")
	if r := e.Owner.do("GET", path, nil); r.Body["acknowledgedUntil"] != nil || r.str("updated") != iso(a.Updated.Time) {
		t.Fatalf("a rejected acknowledgement changed the alert: %s", r.Raw)
	}

	admin := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	r := admin.do("PATCH", path, map[string]any{"acknowledgedUntil": iso(until), "acknowledgementComment": "failover in progress"}).wantStatus(201)
	wantKeys(t, r.Body, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "acknowledgedUntil", "acknowledgementComment", "acknowledgingUsername", "links")
	if r.str("acknowledgedUntil") != iso(until) || r.str("acknowledgementComment") != "failover in progress" || r.str("acknowledgingUsername") != admin.user {
		t.Errorf("acknowledged global alert: %s", r.Raw)
	}
	if got := link(r.Body["links"], "self"); got != e.Base+path {
		t.Errorf("self link %q", got)
	}
	global := store.EventScope{}
	evs := auditEvents(t, e, global, herald.EventAlertAcknowledged)
	if len(evs) != 1 || evs[0].AlertID != a.ID || evs[0].AlertConfigID != a.AlertConfigID || evs[0].PublicKey != admin.user {
		t.Fatalf("global acknowledged events: %+v", evs)
	}
	if evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertAcknowledged); len(evs) != 0 {
		t.Errorf("a global acknowledgement was recorded in the project: %+v", evs)
	}

	// A far-future time keeps it acknowledged; a past time un-acknowledges.
	r = e.Owner.do("PATCH", path, map[string]any{"acknowledgedUntil": "2999-12-31T00:00:00Z"}).wantStatus(201)
	if r.str("acknowledgedUntil") != "2999-12-31T00:00:00Z" || r.str("acknowledgingUsername") != e.Owner.user || r.Body["acknowledgementComment"] != nil {
		t.Errorf("re-acknowledged global alert: %s", r.Raw)
	}
	r = e.Owner.do("PATCH", path, map[string]any{"acknowledgedUntil": "2020-01-01T00:00:00Z"}).wantStatus(201)
	for _, field := range []string{"acknowledgedUntil", "acknowledgementComment", "acknowledgingUsername"} {
		if _, ok := r.Body[field]; ok {
			t.Errorf("un-acknowledged alert still has %s: %s", field, r.Raw)
		}
	}
	if evs := auditEvents(t, e, global, herald.EventAlertUnacknowledged); len(evs) != 1 || evs[0].AlertID != a.ID {
		t.Errorf("global unacknowledged events: %+v", evs)
	}

	cancelled := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusCancelled, time.Now().Add(-time.Hour)))
	e.Owner.do("PATCH", "/globalAlerts/"+cancelled.ID, map[string]any{"acknowledgedUntil": iso(until)}).wantError(409, "ALERT_NOT_ACTIVE")
	if evs := auditEvents(t, e, global, herald.EventAlertAcknowledged); len(evs) != 2 {
		t.Errorf("global acknowledged events: %d, want 2", len(evs))
	}
}
