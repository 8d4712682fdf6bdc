package api_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// hostDownConfig is a valid body creating a project alert configuration.
var hostDownConfig = map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "notifications": []any{
	map[string]any{"typeName": "GROUP", "intervalMin": 60, "delayMin": 5, "emailEnabled": true, "smsEnabled": false, "roles": []string{herald.GroupOwner}},
}}

// recordAt records an event of typ in scope at the given time, straight in the store.
func recordAt(t *testing.T, e *env, scope herald.Scope, typ string, at time.Time) herald.Event {
	t.Helper()
	ev := herald.NewEvent(typ, herald.Principal{}, scope, at)
	if err := e.Store.RecordEvent(context.Background(), store.EventScope{GroupID: scope.GroupID, OrgID: scope.OrgID}, ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestProjectEventsRecordTheActor(t *testing.T) {
	e, org, p := newProjectEnv(t)
	cfg := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", hostDownConfig).wantStatus(201).str("id")

	r := e.Owner.do("GET", "/groups/"+p+"/events?eventType="+herald.EventAlertConfigAdded, nil).wantStatus(200)
	wantKeys(t, r.Body, "results", "links", "totalCount")
	if r.num("totalCount") != 1 {
		t.Fatalf("totalCount = %v: %s", r.Body["totalCount"], r.Raw)
	}
	ev := r.results()[0]
	// An API key acted: apiKeyId and publicKey, never userId or username; no raw unasked.
	wantKeys(t, ev, "id", "created", "eventTypeName", "groupId", "orgId", "alertConfigId", "apiKeyId", "publicKey",
		"remoteAddress", "isGlobalAdmin", "links")
	for field, want := range map[string]any{"eventTypeName": herald.EventAlertConfigAdded, "groupId": p, "orgId": org,
		"alertConfigId": cfg, "apiKeyId": e.Owner.KeyID, "publicKey": e.Owner.user, "remoteAddress": "127.0.0.1", "isGlobalAdmin": true} {
		if ev[field] != want {
			t.Errorf("%s = %v, want %v", field, ev[field], want)
		}
	}
	if created, ok := herald.ParseTime(ev["created"].(string)); !ok || time.Since(created.Time) > time.Minute {
		t.Errorf("created = %v", ev["created"])
	}
	if got, want := link(ev["links"], "self"), e.Base+"/groups/"+p+"/events/"+ev["id"].(string); got != want {
		t.Errorf("self = %q, want %q", got, want)
	}

	raw := e.Owner.do("GET", "/groups/"+p+"/events?includeRaw=true&eventType="+herald.EventAlertConfigAdded, nil).wantStatus(200).results()[0]
	rec, ok := raw["raw"].(map[string]any)
	if !ok || rec["_t"] != herald.EventAlertConfigAdded || rec["id"] != ev["id"] || rec["gid"] != p {
		t.Errorf("raw = %v", raw["raw"])
	}

	// A user acted: userId and username instead.
	e.Owner.do("POST", "/users", userBody("ops", role(herald.GlobalMonitoringAdmin))).wantStatus(201)
	ops := userClient(t, e, "ops", testPassword)
	byUser := ops.do("POST", "/groups/"+p+"/alertConfigs", hostDownConfig).wantStatus(201).str("id")
	u, _, err := e.Store.UserByUsername(context.Background(), "ops")
	if err != nil {
		t.Fatal(err)
	}
	r = ops.do("GET", "/groups/"+p+"/events?eventType="+herald.EventAlertConfigAdded, nil).wantStatus(200)
	ev = r.results()[0] // newest first
	wantKeys(t, ev, "id", "created", "eventTypeName", "groupId", "orgId", "alertConfigId", "userId", "username",
		"remoteAddress", "isGlobalAdmin", "links")
	if ev["alertConfigId"] != byUser || ev["userId"] != u.ID || ev["username"] != "ops" || ev["isGlobalAdmin"] != true {
		t.Errorf("event of the user's action = %v", ev)
	}
}

func TestProjectEventsFilterAndPage(t *testing.T) {
	e, org, p := newProjectEnv(t)
	scope := herald.Scope{OrgID: org, GroupID: p}
	day := func(s string) time.Time { tm, _ := herald.ParseTime(s); return tm.Time }
	a := recordAt(t, e, scope, herald.EventWindowAdded, day("2020-01-01T00:00:00Z"))
	b := recordAt(t, e, scope, herald.EventWindowChanged, day("2021-01-01T00:00:00Z"))
	c := recordAt(t, e, scope, herald.EventWindowAdded, day("2022-01-01T00:00:00Z"))
	path := "/groups/" + p + "/events"

	wantIDs(t, e.Owner.do("GET", path+"?maxDate=2022-01-01T00:00:00Z", nil).wantStatus(200), c.ID, b.ID, a.ID)
	wantIDs(t, e.Owner.do("GET", path+"?minDate=2021-01-01T00:00:00Z&maxDate=2021-01-01T00:00:00Z", nil).wantStatus(200), b.ID)
	wantIDs(t, e.Owner.do("GET", path+"?minDate=2020-06-01&maxDate=2022-01-01T01:00:00%2B01:00", nil).wantStatus(200), c.ID, b.ID)
	wantIDs(t, e.Owner.do("GET", path+"?eventType="+herald.EventWindowAdded, nil).wantStatus(200), c.ID, a.ID)
	wantIDs(t, e.Owner.do("GET", path+"?eventType=NO_SUCH_EVENT", nil).wantStatus(200))

	// Every page holds one, newest first, with next and previous where they lead somewhere.
	r := e.Owner.do("GET", path+"?maxDate=2023-01-01&itemsPerPage=1&pageNum=2", nil).wantStatus(200)
	wantIDs(t, r, b.ID)
	if r.num("totalCount") != 3 || link(r.Body["links"], "next") == "" || link(r.Body["links"], "previous") == "" {
		t.Errorf("page 2 of 3: %s", r.Raw)
	}
	if u, err := url.Parse(link(r.Body["links"], "self")); err != nil || u.Query().Get("maxDate") != "2023-01-01" || u.Query().Get("pageNum") != "2" {
		t.Errorf("self link %q does not keep the query", link(r.Body["links"], "self"))
	}
	if r.results()[0]["raw"] != nil {
		t.Error("raw shown without includeRaw")
	}

	for _, q := range []struct{ query, param string }{
		{"minDate=yesterday", "minDate"},
		{"maxDate=2021-13-01", "maxDate"},
		{"minDate=2022-01-01&maxDate=2021-01-01", "minDate"},
		{"eventType=host_down", "eventType"},
		{"includeRaw=yes", "includeRaw"},
		{"itemsPerPage=501", "itemsPerPage"},
		{"pageNum=0", "pageNum"},
	} {
		wantErrorParameter(e.Owner.do("GET", path+"?"+q.query, nil).wantError(400, herald.CodeInvalidQueryParameter), q.param)
	}
	e.Owner.do("GET", "/groups/5f0000000000000000000000/events", nil).wantError(404, herald.CodeGroupNotFound)
}

func TestProjectEventsNeedARoleThere(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("GET", "/groups/"+p+"/events", nil).wantStatus(200)
	e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgReadOnly}).do("GET", "/groups/"+p+"/events", nil).wantStatus(200)
	e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}).
		do("GET", "/groups/"+p+"/events", nil).wantError(401, herald.CodeUserUnauthorized) // sees the organization, not its projects
	e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).
		do("GET", "/groups/"+p+"/events", nil).wantError(401, herald.CodeUserUnauthorized)
}

func TestGlobalEvents(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	e.Owner.do("POST", "/users", userBody("jane", role(herald.GlobalReadOnly))).wantStatus(201)

	reader := userClient(t, e, "jane", testPassword)
	r := reader.do("GET", "/globalEvents", nil).wantStatus(200)
	wantKeys(t, r.Body, "results", "links", "totalCount")
	if r.num("totalCount") != 2 {
		t.Fatalf("totalCount = %v, want 2 (ORG_CREATED, USER_CREATED_AUDIT): %s", r.Body["totalCount"], r.Raw)
	}
	created := r.results()[0]
	wantKeys(t, created, "id", "created", "eventTypeName", "apiKeyId", "publicKey", "remoteAddress", "isGlobalAdmin", "targetUsername", "links")
	if created["eventTypeName"] != herald.EventUserCreated || created["targetUsername"] != "jane" || created["apiKeyId"] != e.Owner.KeyID {
		t.Errorf("newest global event = %v", created)
	}
	if got, want := link(created["links"], "self"), e.Base+"/globalEvents/"+created["id"].(string); got != want {
		t.Errorf("self = %q, want %q", got, want)
	}

	r = reader.do("GET", "/globalEvents?includeRaw=true&eventType="+herald.EventOrgCreated, nil).wantStatus(200)
	if r.num("totalCount") != 1 {
		t.Fatalf("ORG_CREATED events: %s", r.Raw)
	}
	orgCreated := r.results()[0]
	if rec, _ := orgCreated["raw"].(map[string]any); rec["orgId"] != org || rec["_t"] != herald.EventOrgCreated {
		t.Errorf("raw = %v", orgCreated["raw"])
	}
	reader.do("GET", "/globalEvents?minDate=2030-01-01&maxDate=2029-01-01", nil).wantError(400, herald.CodeInvalidQueryParameter)
	reader.do("GET", "/globalEvents?maxDate=soon", nil).wantError(400, herald.CodeInvalidQueryParameter)
	wantIDs(t, reader.do("GET", "/globalEvents?maxDate=2000-01-01", nil).wantStatus(200))

	e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}).do("GET", "/globalEvents", nil).wantError(401, herald.CodeUserUnauthorized)
}

func TestOrgEvent(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	other := e.org("globex")
	p := e.project(org, "prod")
	otherProject := e.project(other, "prod")

	evs := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventGroupCreated)
	if len(evs) != 1 {
		t.Fatalf("GROUP_CREATED events of the org: %+v", evs)
	}
	id := evs[0].ID
	path := "/orgs/" + org + "/events/" + id

	r := e.Owner.do("GET", path, nil).wantStatus(200)
	wantKeys(t, r.Body, "id", "created", "eventTypeName", "groupId", "orgId", "apiKeyId", "publicKey", "remoteAddress", "isGlobalAdmin", "links")
	for field, want := range map[string]any{"id": id, "eventTypeName": herald.EventGroupCreated, "groupId": p, "orgId": org,
		"apiKeyId": e.Owner.KeyID, "publicKey": e.Owner.user, "remoteAddress": "127.0.0.1"} {
		if r.Body[field] != want {
			t.Errorf("%s = %v, want %v", field, r.Body[field], want)
		}
	}
	if got := link(r.Body["links"], "self"); got != e.Base+path {
		t.Errorf("self = %q", got)
	}

	r = e.Owner.do("GET", path+"?includeRaw=true&envelope=true", nil).wantStatus(200)
	wantKeys(t, r.Body, "status", "content")
	content, _ := r.Body["content"].(map[string]any)
	if rec, _ := content["raw"].(map[string]any); rec["name"] != "prod" || rec["_t"] != herald.EventGroupCreated {
		t.Errorf("raw = %v", content["raw"])
	}

	otherID := auditEvents(t, e, store.EventScope{OrgID: other}, herald.EventGroupCreated)[0].ID
	for _, tc := range []struct{ path, code string }{
		{"/orgs/5f0000000000000000000000/events/" + id, herald.CodeOrgNotFound},
		{"/orgs/" + org + "/events/5f0000000000000000000000", herald.CodeEventNotFound},
		{"/orgs/" + org + "/events/" + otherID, herald.CodeEventNotFound}, // another org's
		{"/orgs/" + org + "/events/not-an-id", herald.CodeEventNotFound},
	} {
		e.Owner.do("GET", tc.path, nil).wantError(404, tc.code)
	}
	e.Owner.do("GET", path+"?includeRaw=1x", nil).wantError(400, herald.CodeInvalidQueryParameter)

	e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}).do("GET", path, nil).wantStatus(200)
	e.key("", herald.Role{RoleName: herald.GlobalReadOnly}).do("GET", path, nil).wantStatus(200)
	for name, c := range map[string]*client{
		"another org's owner":      e.key(other, herald.Role{OrgID: other, RoleName: herald.OrgOwner}),
		"a project owner":          e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}),
		"another project's reader": e.key(other, herald.Role{GroupID: otherProject, RoleName: herald.GroupReadOnly}),
	} {
		t.Run(name, func(t *testing.T) {
			c := c.boundTo(t)
			c.do("GET", path, nil).wantError(401, herald.CodeUserUnauthorized)
			// Whether an organization exists is not told to those without a role in it.
			c.do("GET", "/orgs/5f0000000000000000000000/events/"+id, nil).wantError(401, herald.CodeUserUnauthorized)
		})
	}
}
