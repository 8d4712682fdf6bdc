package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// selfLinks collects every href of a link with rel self anywhere in v.
func selfLinks(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if x["rel"] == "self" {
			if h, ok := x["href"].(string); ok {
				out[h] = true
			}
		}
		for _, y := range x {
			selfLinks(y, out)
		}
	case []any:
		for _, y := range x {
			selfLinks(y, out)
		}
	}
}

// Every self link in every answer of a session that touches each resource leads somewhere:
// a GET of it by the global owner answers 200.
func TestEverySelfLinkResolves(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	org := e.org("acme")
	p := e.project(org, "prod")
	now := time.Now()
	seen := map[string]bool{}
	keep := func(r *response) { r.t.Helper(); selfLinks(map[string]any(r.Body), seen) }

	cfg := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN",
		"notifications": []map[string]any{{"typeName": "EMAIL", "emailAddress": "ops@example.com"}}}).wantStatus(201)
	keep(cfg)
	a := herald.Alert{ID: herald.NewID(now), GroupID: p, AlertConfigID: cfg.str("id"), EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
	if err := e.Store.SaveAlert(ctx, a, false, ""); err != nil {
		t.Fatal(err)
	}
	gcfg := e.Owner.do("POST", "/globalAlertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "forAllGroups": true,
		"notifications": []map[string]any{{"typeName": "ADMIN"}}}).wantStatus(201)
	keep(gcfg)
	ga := a
	ga.ID, ga.AlertConfigID = herald.NewID(now), gcfg.str("id")
	if err := e.Store.SaveAlert(ctx, ga, true, ""); err != nil {
		t.Fatal(err)
	}
	e.Owner.do("POST", "/groups/"+p+"/observations", []map[string]any{{"eventTypeName": "HOST_DOWN", "active": true,
		"hostId": "h1", "disks": []map[string]any{{"partitionName": "data"}}}}).wantStatus(202)
	key := e.Owner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "ci", "roles": []string{"ORG_MEMBER"}}).wantStatus(201)
	keep(key)
	keep(e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+key.str("id"), map[string]any{"roles": []string{"GROUP_READ_ONLY"}}).wantStatus(200))
	keep(e.Owner.do("POST", "/admin/apiKeys", map[string]any{"desc": "ops", "roles": []string{"GLOBAL_READ_ONLY"}}).wantStatus(201))
	keep(e.Owner.do("POST", "/users", map[string]any{"username": "ann@example.com", "password": "correct horse", "emailAddress": "ann@example.com",
		"firstName": "Ann", "lastName": "Lee", "roles": []map[string]any{{"groupId": p, "roleName": "GROUP_OWNER"}}}).wantStatus(201))
	keep(e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"},
		"startDate": now.Format(time.RFC3339), "endDate": now.Add(time.Hour).Format(time.RFC3339)}).wantStatus(200))
	keep(e.Owner.do("PUT", "/groups/"+p+"/integrations/PAGING", map[string]any{"type": "PAGING", "serviceKey": "0123456789abcdef"}).wantStatus(200))

	for _, path := range []string{
		"/groups/" + p + "/alertConfigs", "/groups/" + p + "/alerts", "/groups/" + p + "/alertConfigs/" + cfg.str("id") + "/alerts",
		"/globalAlerts", "/globalAlertConfigs", "/globalAlertConfigs/" + gcfg.str("id") + "/alerts", "/admin/apiKeys",
		"/groups/" + p + "/maintenanceWindows", "/groups/" + p + "/integrations", "/groups/" + p + "/events", "/globalEvents",
		"/groups/" + p + "/hosts/h1/disks/data", "/orgs/" + org, "/groups/" + p,
	} {
		keep(e.Owner.do("GET", path, nil).wantStatus(200))
	}
	evs := e.Owner.do("GET", "/groups/"+p+"/events", nil).results()
	if len(evs) == 0 {
		t.Fatal("no project events")
	}

	kinds := map[string]bool{}
	for href := range seen {
		if !strings.HasPrefix(href, e.Base+"/") {
			t.Errorf("self link %s is not under %s", href, e.Base)
			continue
		}
		path := strings.TrimPrefix(href, e.Base)
		e.Owner.do("GET", path, nil).wantStatus(200)
		kinds[strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]] = true
	}
	for _, k := range []string{"groups", "orgs", "admin", "users", "globalAlerts", "globalAlertConfigs", "globalEvents"} {
		if !kinds[k] {
			t.Errorf("no self link under /%s was checked (%d links)", k, len(seen))
		}
	}
}
