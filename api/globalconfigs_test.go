package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Secrets a global configuration is created with; they must never be read back.
const (
	testWebhookURL    = "https://hooks.example.com/herald/9f8e7d6c5b4a"
	testWebhookSecret = "whsec-Qm4v8Lz2Rt6Yp1Nk"
	testServiceKey    = "pgsvc-7Hc2Kd9Xw3Jr5Tb0"
)

// allProjectsConfig is a valid request for a global configuration over all projects tagged
// production, telling a webhook and a pager; change edits it for one test case.
func allProjectsConfig(change func(body map[string]any)) map[string]any {
	body := map[string]any{
		"eventTypeName": "HOST_DOWN",
		"enabled":       true,
		"forAllGroups":  true,
		"tags":          []string{"production"},
		"matchers":      []map[string]any{{"fieldName": "HOSTNAME", "operator": "STARTS_WITH", "value": "db"}},
		"notifications": []map[string]any{
			{"typeName": "WEBHOOK", "webhookUrl": testWebhookURL, "webhookSecret": testWebhookSecret},
			{"typeName": "PAGING", "serviceKey": testServiceKey, "delayMin": 5},
		},
	}
	if change != nil {
		change(body)
	}
	return body
}

// projectsConfig is a valid request for a global configuration over the projects ids.
func projectsConfig(ids ...string) map[string]any {
	return map[string]any{
		"eventTypeName": "NO_PRIMARY",
		"groupIds":      ids,
		"notifications": []map[string]any{{"typeName": "EMAIL", "emailAddress": "ops@example.com"}},
	}
}

// wantMaskedSecrets checks the notifications of a configuration made by allProjectsConfig.
func wantMaskedSecrets(t *testing.T, cfg map[string]any) {
	t.Helper()
	ns, _ := cfg["notifications"].([]any)
	if len(ns) != 2 {
		t.Fatalf("notifications %v", cfg["notifications"])
	}
	webhook, _ := ns[0].(map[string]any)
	wantKeys(t, webhook, "typeName", "delayMin", "intervalMin", "webhookUrl", "webhookSecret")
	if webhook["typeName"] != "WEBHOOK" || webhook["delayMin"] != 0.0 || webhook["intervalMin"] != 60.0 ||
		webhook["webhookUrl"] != "https://hooks.example.com/"+strings.Repeat("*", len("herald/9f8e7d6c5b4a")) ||
		webhook["webhookSecret"] != "******" {
		t.Errorf("webhook notification %v", webhook)
	}
	paging, _ := ns[1].(map[string]any)
	wantKeys(t, paging, "typeName", "delayMin", "intervalMin", "serviceKey")
	if paging["typeName"] != "PAGING" || paging["delayMin"] != 5.0 ||
		paging["serviceKey"] != strings.Repeat("*", len(testServiceKey)-4)+testServiceKey[len(testServiceKey)-4:] {
		t.Errorf("paging notification %v", paging)
	}
}

// wantNoSecrets checks that none of the secrets appears in s.
func wantNoSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{testWebhookSecret, testServiceKey, "9f8e7d6c5b4a"} {
		if strings.Contains(s, secret) {
			t.Errorf("%s shows the secret %s", what, secret)
		}
	}
}

func TestCreateGlobalAlertConfig(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	p1, p2 := e.project(org, "prod"), e.project(org, "staging")
	global := store.EventScope{}

	// Rejected requests create nothing.
	e.key("", herald.Role{RoleName: herald.GlobalReadOnly}).
		do("POST", "/globalAlertConfigs", allProjectsConfig(nil)).wantError(401, "USER_UNAUTHORIZED")
	e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}).
		do("POST", "/globalAlertConfigs", projectsConfig(p1)).wantError(401, "USER_UNAUTHORIZED")
	for _, bad := range []struct {
		body       map[string]any
		code, name string
	}{
		{allProjectsConfig(func(b map[string]any) { b["groupId"] = p1 }), "INVALID_ATTRIBUTE", "groupId"},
		{allProjectsConfig(func(b map[string]any) { b["id"] = herald.NewID(time.Now()) }), "ATTRIBUTE_READ_ONLY", "id"},
		{allProjectsConfig(func(b map[string]any) { b["created"] = "2020-01-01T00:00:00Z" }), "ATTRIBUTE_READ_ONLY", "created"},
		{allProjectsConfig(func(b map[string]any) { b["groupIds"] = []string{p1} }), "INVALID_ATTRIBUTE", "groupIds"},
		{allProjectsConfig(func(b map[string]any) { b["tags"] = []string{" "} }), "INVALID_ATTRIBUTE", "tags"},
		{allProjectsConfig(func(b map[string]any) { b["forAllGroups"] = "yes" }), "INVALID_ATTRIBUTE", "forAllGroups"},
		{allProjectsConfig(func(b map[string]any) { delete(b, "forAllGroups") }), "INVALID_ATTRIBUTE", "tags"},
		{allProjectsConfig(func(b map[string]any) { b["forAllGroups"] = false; delete(b, "tags") }), "MISSING_ATTRIBUTE", "groupIds"},
		{allProjectsConfig(func(b map[string]any) {
			b["forAllGroups"] = false
			b["groupIds"] = []string{p1}
			b["tags"] = []string{"x"}
		}), "INVALID_ATTRIBUTE", "tags"},
		{allProjectsConfig(func(b map[string]any) { delete(b, "eventTypeName") }), "MISSING_ATTRIBUTE", "eventTypeName"},
		{allProjectsConfig(func(b map[string]any) { b["eventTypeName"] = "HOST_GONE" }), "INVALID_ENUM_VALUE", "eventTypeName"},
		{allProjectsConfig(func(b map[string]any) { b["notifications"] = []any{} }), "MISSING_NOTIFICATIONS", "notifications"},
		{allProjectsConfig(func(b map[string]any) { b["color"] = "red" }), "INVALID_ATTRIBUTE", "color"},
		{projectsConfig(), "MISSING_ATTRIBUTE", "groupIds"},
		{projectsConfig(p1, herald.NewID(time.Now())), "INVALID_ATTRIBUTE", "groupIds"},
		{projectsConfig("not-a-project"), "INVALID_ATTRIBUTE", "groupIds"},
		// Global notifications have their own kinds: no ORG, CHATA rather than CHAT_A, and no
		// project integration to take a pager's key from.
		{allProjectsConfig(func(b map[string]any) { b["notifications"] = []map[string]any{{"typeName": "ORG"}} }), "INVALID_ENUM_VALUE", "notifications[0].typeName"},
		{allProjectsConfig(func(b map[string]any) {
			b["notifications"] = []map[string]any{{"typeName": "CHAT_A", "notificationToken": "t0ken-abcdef-123", "roomName": "ops"}}
		}), "INVALID_ENUM_VALUE", "notifications[0].typeName"},
		{allProjectsConfig(func(b map[string]any) { b["notifications"] = []map[string]any{{"typeName": "PAGING"}} }), "MISSING_ATTRIBUTE", "notifications[0].serviceKey"},
	} {
		wantErrorParameter(e.Owner.do("POST", "/globalAlertConfigs", bad.body).wantError(400, bad.code), bad.name)
	}
	if r := e.Owner.do("GET", "/globalAlertConfigs", nil).wantStatus(200); r.num("totalCount") != 0 {
		t.Fatalf("rejected requests created configurations: %s", r.Raw)
	}
	if evs := auditEvents(t, e, global, herald.EventAlertConfigAdded); len(evs) != 0 {
		t.Fatalf("rejected requests recorded %d events", len(evs))
	}

	// For all projects tagged production: created enabled, secrets masked in the answer.
	admin := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	before := time.Now().Truncate(time.Second)
	r := admin.do("POST", "/globalAlertConfigs", allProjectsConfig(nil)).wantStatus(201)
	wantKeys(t, r.Body, "id", "created", "updated", "enabled", "eventTypeName", "forAllGroups", "tags", "matchers", "notifications", "links")
	id := r.str("id")
	if created, _ := herald.ParseTime(r.str("created")); created.Before(before) || r.str("updated") != r.str("created") {
		t.Errorf("created %s, updated %s", r.str("created"), r.str("updated"))
	}
	if r.Body["enabled"] != true || r.Body["forAllGroups"] != true || r.str("eventTypeName") != "HOST_DOWN" {
		t.Errorf("created configuration %s", r.Raw)
	}
	if tags, _ := r.Body["tags"].([]any); len(tags) != 1 || tags[0] != "production" {
		t.Errorf("tags %v", r.Body["tags"])
	}
	matchers, _ := r.Body["matchers"].([]any)
	if len(matchers) != 1 {
		t.Fatalf("matchers %v", r.Body["matchers"])
	}
	m, _ := matchers[0].(map[string]any)
	wantKeys(t, m, "fieldName", "operator", "value")
	if m["fieldName"] != "HOSTNAME" || m["operator"] != "STARTS_WITH" || m["value"] != "db" {
		t.Errorf("matcher %v", m)
	}
	wantMaskedSecrets(t, r.Body)
	wantNoSecrets(t, "the created configuration", string(r.Raw))
	if got := link(r.Body["links"], "self"); got != e.Base+"/globalAlertConfigs/"+id {
		t.Errorf("self link %q", got)
	}
	evs := auditEvents(t, e, global, herald.EventAlertConfigAdded)
	if len(evs) != 1 || evs[0].AlertConfigID != id || evs[0].PublicKey != admin.user || evs[0].GroupID != "" {
		t.Fatalf("added events: %+v", evs)
	}
	if evs := auditEvents(t, e, store.EventScope{GroupID: p1}, herald.EventAlertConfigAdded); len(evs) != 0 {
		t.Errorf("a global configuration was recorded in a project: %+v", evs)
	}

	// For two named projects: forAllGroups defaults to false, enabled to disabled.
	r = e.Owner.do("POST", "/globalAlertConfigs", projectsConfig(p1, p2)).wantStatus(201)
	wantKeys(t, r.Body, "id", "created", "updated", "enabled", "eventTypeName", "forAllGroups", "groupIds", "matchers", "notifications", "links")
	if r.Body["enabled"] != false || r.Body["forAllGroups"] != false {
		t.Errorf("created configuration %s", r.Raw)
	}
	if ids, _ := r.Body["groupIds"].([]any); len(ids) != 2 || ids[0] != p1 || ids[1] != p2 {
		t.Errorf("groupIds %v", r.Body["groupIds"])
	}
	if ms, ok := r.Body["matchers"].([]any); !ok || len(ms) != 0 {
		t.Errorf("matchers %v, want []", r.Body["matchers"])
	}
	if evs := auditEvents(t, e, global, herald.EventAlertConfigAdded); len(evs) != 2 {
		t.Errorf("added events: %d, want 2", len(evs))
	}

	// What is read back is masked too, and a secret shows up nowhere.
	got := e.Owner.do("GET", "/globalAlertConfigs/"+id, nil).wantStatus(200)
	wantMaskedSecrets(t, got.Body)
	wantNoSecrets(t, "the configuration read back", string(got.Raw))
	all, _, err := e.Store.Events(t.Context(), global, store.EventFilter{}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	evJSON, _ := json.Marshal(all)
	wantNoSecrets(t, "the global events", string(evJSON))
	wantNoSecrets(t, "the log", e.Logs())
}

func TestReadGlobalAlertConfigs(t *testing.T) {
	e, _, p := newProjectEnv(t)
	first := e.Owner.do("POST", "/globalAlertConfigs", allProjectsConfig(nil)).wantStatus(201).str("id")
	second := e.Owner.do("POST", "/globalAlertConfigs", projectsConfig(p)).wantStatus(201).str("id")

	reader := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	r := reader.do("GET", "/globalAlertConfigs/"+first, nil).wantStatus(200)
	wantKeys(t, r.Body, "id", "created", "updated", "enabled", "eventTypeName", "forAllGroups", "tags", "matchers", "notifications", "links")
	wantMaskedSecrets(t, r.Body)
	if r.str("id") != first || link(r.Body["links"], "self") != e.Base+"/globalAlertConfigs/"+first {
		t.Errorf("configuration %s", r.Raw)
	}

	r = reader.do("GET", "/globalAlertConfigs", nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantIDs(t, r, first, second)
	if r.num("totalCount") != 2 {
		t.Errorf("totalCount %v", r.Body["totalCount"])
	}
	wantMaskedSecrets(t, r.results()[0])
	if got := link(r.results()[1]["links"], "self"); got != e.Base+"/globalAlertConfigs/"+second {
		t.Errorf("item self link %q", got)
	}
	r = reader.do("GET", "/globalAlertConfigs?itemsPerPage=1", nil).wantStatus(200)
	wantIDs(t, r, first)
	if next := link(r.Body["links"], "next"); !strings.HasPrefix(next, e.Base+"/globalAlertConfigs?") || !strings.Contains(next, "pageNum=2") {
		t.Errorf("next link %q", next)
	}
	wantNoSecrets(t, "the list", string(r.Raw))

	wantErrorParameter(reader.do("GET", "/globalAlertConfigs?itemsPerPage=0", nil).wantError(400, "INVALID_QUERY_PARAMETER"), "itemsPerPage")
	unknown := herald.NewID(time.Now())
	wantErrorParameter(reader.do("GET", "/globalAlertConfigs/"+unknown, nil).wantError(404, "ALERT_CONFIG_NOT_FOUND"), unknown)

	// Global Read Only is not enough for anything global about alerts (docs/decisions.md#roles).
	readOnly := e.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	for _, req := range []struct{ method, path string }{
		{"GET", "/globalAlertConfigs"},
		{"GET", "/globalAlertConfigs/" + first},
		{"PATCH", "/globalAlertConfigs/" + first},
		{"DELETE", "/globalAlertConfigs/" + first},
		{"GET", "/globalAlertConfigs/" + first + "/alerts"},
	} {
		var body any
		if req.method == "PATCH" {
			body = map[string]any{"enabled": false}
		}
		readOnly.do(req.method, req.path, body).wantError(401, "USER_UNAUTHORIZED")
	}
	if r := e.Owner.do("GET", "/globalAlertConfigs/"+first, nil).wantStatus(200); r.Body["enabled"] != true {
		t.Errorf("a refused request changed the configuration: %s", r.Raw)
	}
}

func TestPatchGlobalAlertConfig(t *testing.T) {
	e := newEnv(t)
	id := e.Owner.do("POST", "/globalAlertConfigs", allProjectsConfig(func(b map[string]any) { b["enabled"] = false })).
		wantStatus(201).str("id")
	path := "/globalAlertConfigs/" + id
	global := store.EventScope{}

	for _, bad := range []struct {
		body       any
		code, name string
	}{
		{map[string]any{}, "MISSING_ATTRIBUTE", "enabled"},
		{map[string]any{"enabled": "yes"}, "INVALID_ATTRIBUTE", "enabled"},
		{map[string]any{"enabled": true, "eventTypeName": "NO_PRIMARY"}, "INVALID_ATTRIBUTE", "eventTypeName"},
	} {
		wantErrorParameter(e.Owner.do("PATCH", path, bad.body).wantError(400, bad.code), bad.name)
	}
	e.Owner.do("PATCH", "/globalAlertConfigs/"+herald.NewID(time.Now()), map[string]any{"enabled": true}).wantError(404, "ALERT_CONFIG_NOT_FOUND")
	if r := e.Owner.do("GET", path, nil); r.Body["enabled"] != false {
		t.Fatalf("a rejected request changed the configuration: %s", r.Raw)
	}

	r := e.Owner.do("PATCH", path, map[string]any{"enabled": true}).wantStatus(200)
	wantKeys(t, r.Body, "id", "created", "updated", "enabled", "eventTypeName", "forAllGroups", "tags", "matchers", "notifications", "links")
	if r.Body["enabled"] != true || r.str("id") != id || link(r.Body["links"], "self") != e.Base+path {
		t.Errorf("enabled configuration %s", r.Raw)
	}
	wantMaskedSecrets(t, r.Body)
	if got := e.Owner.do("GET", path, nil); got.Body["enabled"] != true {
		t.Errorf("read back %s", got.Raw)
	}
	evs := auditEvents(t, e, global, herald.EventAlertConfigEnabled)
	if len(evs) != 1 || evs[0].AlertConfigID != id || evs[0].PublicKey != e.Owner.user {
		t.Fatalf("enabled events: %+v", evs)
	}

	// Enabling an enabled configuration is no change and records nothing.
	e.Owner.do("PATCH", path, map[string]any{"enabled": true}).wantStatus(200)
	if evs := auditEvents(t, e, global, herald.EventAlertConfigEnabled); len(evs) != 1 {
		t.Errorf("enabled events: %d, want 1", len(evs))
	}

	if r := e.Owner.do("PATCH", path, map[string]any{"enabled": false}).wantStatus(200); r.Body["enabled"] != false {
		t.Errorf("disabled configuration %s", r.Raw)
	}
	if evs := auditEvents(t, e, global, herald.EventAlertConfigDisabled); len(evs) != 1 || evs[0].AlertConfigID != id {
		t.Errorf("disabled events: %+v", evs)
	}
	wantNoSecrets(t, "the log", e.Logs())
}

func TestDeleteGlobalAlertConfig(t *testing.T) {
	e := newEnv(t)
	id := e.Owner.do("POST", "/globalAlertConfigs", allProjectsConfig(nil)).wantStatus(201).str("id")
	path := "/globalAlertConfigs/" + id

	e.Owner.do("DELETE", "/globalAlertConfigs/"+herald.NewID(time.Now()), nil).wantError(404, "ALERT_CONFIG_NOT_FOUND")
	e.Owner.do("GET", path, nil).wantStatus(200)

	admin := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	if r := admin.do("DELETE", path, nil).wantStatus(204); len(r.Raw) != 0 {
		t.Errorf("204 with a body: %s", r.Raw)
	}
	e.Owner.do("GET", path, nil).wantError(404, "ALERT_CONFIG_NOT_FOUND")
	if r := e.Owner.do("GET", "/globalAlertConfigs", nil).wantStatus(200); r.num("totalCount") != 0 {
		t.Errorf("deleted configuration still listed: %s", r.Raw)
	}
	evs := auditEvents(t, e, store.EventScope{}, herald.EventAlertConfigDeleted)
	if len(evs) != 1 || evs[0].AlertConfigID != id || evs[0].PublicKey != admin.user {
		t.Fatalf("deleted events: %+v", evs)
	}
	admin.do("DELETE", path, nil).wantError(404, "ALERT_CONFIG_NOT_FOUND")
}

func TestGlobalConfigAlerts(t *testing.T) {
	e, _, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/globalAlertConfigs", allProjectsConfig(nil)).wantStatus(201).str("id")
	otherID := e.Owner.do("POST", "/globalAlertConfigs", projectsConfig(p)).wantStatus(201).str("id")
	start := time.Now().Add(-3 * time.Hour)
	ofConfig := func(configID, status string, created time.Time) herald.Alert {
		a := hostDownAlert(p, status, created)
		a.AlertConfigID = configID
		return saveTestAlert(t, e, true, a)
	}
	open := ofConfig(id, herald.StatusOpen, start)
	tracking := ofConfig(id, herald.StatusTracking, start.Add(time.Hour))
	ofConfig(id, herald.StatusClosed, start.Add(2*time.Hour))
	ofConfig(otherID, herald.StatusOpen, start)

	path := "/globalAlertConfigs/" + id + "/alerts"
	r := e.Owner.do("GET", path, nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantIDs(t, r, tracking.ID, open.ID)
	if r.num("totalCount") != 2 {
		t.Errorf("totalCount %v", r.Body["totalCount"])
	}
	item := r.results()[1]
	wantKeys(t, item, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated",
		"hostId", "hostnameAndPort", "replicaSetName", "links")
	if item["alertConfigId"] != id || item["status"] != "OPEN" || link(item["links"], "self") != e.Base+"/globalAlerts/"+open.ID {
		t.Errorf("alert %v", item)
	}
	r = e.Owner.do("GET", path+"?itemsPerPage=1&pageNum=2", nil).wantStatus(200)
	wantIDs(t, r, open.ID)
	if link(r.Body["links"], "next") != "" || link(r.Body["links"], "previous") == "" {
		t.Errorf("last page links: %s", r.Raw)
	}

	wantErrorParameter(e.Owner.do("GET", path+"?pageNum=x", nil).wantError(400, "INVALID_QUERY_PARAMETER"), "pageNum")
	unknown := herald.NewID(time.Now())
	wantErrorParameter(e.Owner.do("GET", "/globalAlertConfigs/"+unknown+"/alerts", nil).wantError(404, "ALERT_CONFIG_NOT_FOUND"), unknown)
}
