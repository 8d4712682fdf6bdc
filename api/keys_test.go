package api_test

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

var (
	publicKeyForm  = regexp.MustCompile(`^[a-z]{8}$`)
	privateKeyForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	maskedKeyForm  = regexp.MustCompile(`^\*{8}-\*{4}-\*{4}-\*{4}-\*{8}[0-9a-f]{4}$`)
)

// keyFields are the fields of an API key as the API shows it.
var keyFields = []string{"desc", "id", "privateKey", "publicKey", "roles", "links"}

// createdKey checks the answer to a key creation and returns a client that uses the new key.
func createdKey(t *testing.T, e *env, r *response, desc string, roles []any) *client {
	t.Helper()
	r.wantStatus(201)
	wantKeys(t, r.Body, keyFields...)
	if r.str("desc") != desc || !herald.ValidID(r.str("id")) || !publicKeyForm.MatchString(r.str("publicKey")) ||
		!privateKeyForm.MatchString(r.str("privateKey")) || !reflect.DeepEqual(r.Body["roles"], roles) {
		t.Fatalf("created key: %s, want desc %q and roles %v", r.Raw, desc, roles)
	}
	return &client{t: t, base: e.Base, user: r.str("publicKey"), pass: r.str("privateKey"), KeyID: r.str("id")}
}

// globalKeyCount is how many global keys there are.
func globalKeyCount(t *testing.T, e *env) int {
	t.Helper()
	_, total, err := e.Store.GlobalAPIKeys(context.Background(), store.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func TestCreateGlobalAPIKey(t *testing.T) {
	e := newEnv(t)
	r := e.Owner.do("POST", "/admin/apiKeys", map[string]any{"desc": " reporting ", "roles": []string{"GLOBAL_READ_ONLY", "GLOBAL_READ_ONLY"}})
	reader := createdKey(t, e, r, "reporting", []any{map[string]any{"roleName": "GLOBAL_READ_ONLY"}})
	wantSelf(t, r.Body, e.Base+"/admin/apiKeys/"+reader.KeyID)

	// The key works, with its roles and no others.
	list := reader.do("GET", "/admin/apiKeys", nil).wantStatus(200)
	wantUnauthorized(reader.do("POST", "/orgs", map[string]any{"name": "acme"}))

	// The private key is never shown again.
	var shown map[string]any
	for _, k := range list.results() {
		if k["id"] == reader.KeyID {
			shown = k
		}
	}
	if shown == nil {
		t.Fatalf("the new key is not listed: %s", list.Raw)
	}
	wantKeys(t, shown, keyFields...)
	if want := "********-****-****-****-********" + reader.pass[len(reader.pass)-4:]; shown["privateKey"] != want || shown["publicKey"] != reader.user {
		t.Errorf("listed as %v, want privateKey %s", shown, want)
	}
	wantNoSecret(t, "the list", string(list.Raw), reader.pass)
	wantNoSecret(t, "the log", e.Logs(), reader.pass)

	evs := auditEvents(t, e, store.EventScope{}, herald.EventAPIKeyCreated)
	if len(evs) != 1 || evs[0].TargetPublicKey != reader.user || evs[0].APIKeyID != e.Owner.KeyID || evs[0].Raw["keyId"] != reader.KeyID {
		t.Errorf("events %+v, want one naming the new key, made by the owner", evs)
	}
	event, _ := json.Marshal(evs)
	wantNoSecret(t, "the event", string(event), reader.pass)

	before := globalKeyCount(t, e)
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"no desc", herald.CodeMissingAttribute, "desc", map[string]any{"roles": []string{"GLOBAL_OWNER"}}},
		{"blank desc", herald.CodeMissingAttribute, "desc", map[string]any{"desc": "  ", "roles": []string{"GLOBAL_OWNER"}}},
		{"long desc", herald.CodeInvalidAttribute, "desc", map[string]any{"desc": strings.Repeat("d", 251), "roles": []string{"GLOBAL_OWNER"}}},
		{"no roles", herald.CodeMissingAttribute, "roles", map[string]any{"desc": "x"}},
		{"empty roles", herald.CodeMissingAttribute, "roles", map[string]any{"desc": "x", "roles": []string{}}},
		{"an org role", herald.CodeInvalidEnumValue, "roles", map[string]any{"desc": "x", "roles": []string{"ORG_OWNER"}}},
		{"an unknown role", herald.CodeInvalidEnumValue, "roles", map[string]any{"desc": "x", "roles": []string{"GLOBAL_OWNER", "GLOBAL_EMPEROR"}}},
		{"roles as objects", herald.CodeInvalidAttribute, "roles", map[string]any{"desc": "x", "roles": []any{map[string]any{"roleName": "GLOBAL_OWNER"}}}},
		{"an unknown field", herald.CodeInvalidAttribute, "expires", map[string]any{"desc": "x", "roles": []string{"GLOBAL_OWNER"}, "expires": "never"}},
		{"a private key", herald.CodeInvalidAttribute, "privateKey", map[string]any{"desc": "x", "roles": []string{"GLOBAL_OWNER"}, "privateKey": "mine"}},
		{"malformed JSON", herald.CodeInvalidJSON, "", `{"desc":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.do("POST", "/admin/apiKeys", tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	org := e.org("acme")
	for name, c := range map[string]*client{
		"GLOBAL_READ_ONLY":        reader,
		"GLOBAL_USER_ADMIN":       e.key("", herald.Role{RoleName: herald.GlobalUserAdmin}),
		"GLOBAL_MONITORING_ADMIN": e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}),
		"ORG_OWNER":               e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
	} {
		t.Run(name, func(t *testing.T) {
			wantUnauthorized(c.do("POST", "/admin/apiKeys", map[string]any{"desc": "x", "roles": []string{"GLOBAL_OWNER"}}))
		})
	}
	if after := globalKeyCount(t, e); after != before+2 { // the two global keys the refused callers use
		t.Errorf("%d global keys after refused requests, want %d", after, before+2)
	}
}

func TestCreateOrgAPIKey(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	other := e.org("umbrella")
	p := e.project(org, "prod")
	owner := e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner})

	r := owner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "deploy", "roles": []string{"ORG_MEMBER"}})
	deploy := createdKey(t, e, r, "deploy", []any{map[string]any{"orgId": org, "roleName": "ORG_MEMBER"}})
	wantSelf(t, r.Body, e.Base+"/orgs/"+org+"/apiKeys/"+deploy.KeyID)
	// The key works: ORG_MEMBER gives nothing in the organization's projects until assigned.
	wantUnauthorized(deploy.do("GET", "/groups/"+p+"/alertConfigs", nil))
	// It is an organization key: not among the global ones.
	for _, k := range e.Owner.do("GET", "/admin/apiKeys", nil).wantStatus(200).results() {
		if k["id"] == deploy.KeyID {
			t.Errorf("an organization key is listed as global")
		}
	}
	evs := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventAPIKeyCreated)
	if len(evs) != 1 || evs[0].TargetPublicKey != deploy.user || evs[0].APIKeyID != owner.KeyID || evs[0].OrgID != org {
		t.Errorf("events %+v, want one in the organization naming the new key", evs)
	}
	wantNoSecret(t, "the log", e.Logs(), deploy.pass)

	// A global owner creates keys in any organization.
	createdKey(t, e, e.Owner.do("POST", "/orgs/"+other+"/apiKeys", map[string]any{"desc": "x", "roles": []string{"ORG_OWNER", "ORG_READ_ONLY"}}),
		"x", []any{map[string]any{"orgId": other, "roleName": "ORG_OWNER"}, map[string]any{"orgId": other, "roleName": "ORG_READ_ONLY"}})

	e.Owner.do("POST", "/orgs/"+herald.NewID(time.Now())+"/apiKeys", map[string]any{"desc": "x", "roles": []string{"ORG_MEMBER"}}).wantError(404, herald.CodeOrgNotFound)
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"a project role", herald.CodeInvalidEnumValue, "roles", map[string]any{"desc": "x", "roles": []string{"GROUP_OWNER"}}},
		{"a global role", herald.CodeInvalidEnumValue, "roles", map[string]any{"desc": "x", "roles": []string{"GLOBAL_OWNER"}}},
		{"no roles", herald.CodeMissingAttribute, "roles", map[string]any{"desc": "x"}},
		{"no desc", herald.CodeMissingAttribute, "desc", map[string]any{"roles": []string{"ORG_MEMBER"}}},
		{"an orgId", herald.CodeInvalidAttribute, "orgId", map[string]any{"desc": "x", "roles": []string{"ORG_MEMBER"}, "orgId": other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantNamed(owner.do("POST", "/orgs/"+org+"/apiKeys", tc.body).wantError(400, tc.code), tc.field)
		})
	}
	for name, c := range map[string]*client{
		"ORG_OWNER of another org": e.key(other, herald.Role{OrgID: other, RoleName: herald.OrgOwner}),
		"ORG_MEMBER":               deploy,
		"GROUP_OWNER":              e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}),
		"GLOBAL_READ_ONLY":         e.key("", herald.Role{RoleName: herald.GlobalReadOnly}),
	} {
		t.Run(name, func(t *testing.T) {
			wantUnauthorized(c.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "x", "roles": []string{"ORG_OWNER"}}))
		})
	}
	if evs := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventAPIKeyCreated); len(evs) != 1 {
		t.Errorf("%d key creations recorded in the organization, want 1", len(evs))
	}
}

func TestListGlobalAPIKeys(t *testing.T) {
	e := newEnv(t)
	reader := e.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	for _, desc := range []string{"one", "two", "three"} {
		e.Owner.do("POST", "/admin/apiKeys", map[string]any{"desc": desc, "roles": []string{"GLOBAL_MONITORING_ADMIN"}}).wantStatus(201)
	}
	org := e.org("acme")
	e.Owner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "org", "roles": []string{"ORG_MEMBER"}}).wantStatus(201)

	r := reader.do("GET", "/admin/apiKeys", nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantSelf(t, r.Body, e.Base+"/admin/apiKeys?itemsPerPage=100&pageNum=1")
	results := r.results()
	if r.num("totalCount") != 5 || len(results) != 5 {
		t.Fatalf("want the owner's, the reader's and the 3 new keys, oldest first: %s", r.Raw)
	}
	wantDescs := []string{"test key", "test key", "one", "two", "three"}
	for i, k := range results {
		wantKeys(t, k, keyFields...)
		if k["desc"] != wantDescs[i] || !maskedKeyForm.MatchString(k["privateKey"].(string)) || !publicKeyForm.MatchString(k["publicKey"].(string)) {
			t.Errorf("key %d: %v", i, k)
		}
		wantSelf(t, k, e.Base+"/admin/apiKeys/"+k["id"].(string))
	}
	if want := []any{map[string]any{"roleName": "GLOBAL_READ_ONLY"}}; results[1]["id"] != reader.KeyID || !reflect.DeepEqual(results[1]["roles"], want) {
		t.Errorf("the reader's key: %v", results[1])
	}
	wantNoSecret(t, "the list", string(r.Raw), e.Owner.pass, reader.pass)

	r = reader.do("GET", "/admin/apiKeys?itemsPerPage=2&pageNum=2", nil).wantStatus(200)
	if len(r.results()) != 2 || r.results()[0]["desc"] != "one" || r.num("totalCount") != 5 ||
		link(r.Body["links"], "next") != e.Base+"/admin/apiKeys?itemsPerPage=2&pageNum=3" ||
		link(r.Body["links"], "previous") != e.Base+"/admin/apiKeys?itemsPerPage=2&pageNum=1" {
		t.Errorf("page 2: %s", r.Raw)
	}
	if r := reader.do("GET", "/admin/apiKeys?pageNum=9", nil).wantStatus(200); len(r.results()) != 0 || r.num("totalCount") != 5 {
		t.Errorf("a page past the end: %s", r.Raw)
	}
	reader.do("GET", "/admin/apiKeys?itemsPerPage=501", nil).wantError(400, herald.CodeInvalidQueryParameter)
	reader.do("GET", "/admin/apiKeys?pageNum=x", nil).wantError(400, herald.CodeInvalidQueryParameter)

	for name, c := range map[string]*client{
		"ORG_OWNER":   e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
		"GROUP_OWNER": e.key(org, herald.Role{GroupID: e.project(org, "prod"), RoleName: herald.GroupOwner}),
	} {
		t.Run(name, func(t *testing.T) { wantUnauthorized(c.do("GET", "/admin/apiKeys", nil)) })
	}
}

func TestAssignAPIKey(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.org("umbrella")
	q := e.project(other, "prod")
	r := e.Owner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "deploy", "roles": []string{"ORG_MEMBER"}})
	deploy := createdKey(t, e, r, "deploy", []any{map[string]any{"orgId": org, "roleName": "ORG_MEMBER"}})
	path := "/groups/" + p + "/apiKeys/" + deploy.KeyID
	wantUnauthorized(deploy.do("GET", "/groups/"+p+"/alertConfigs", nil))

	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupUserAdmin})
	r = admin.do("PATCH", path, map[string]any{"roles": []string{"GROUP_READ_ONLY"}}).wantStatus(200)
	wantKeys(t, r.Body, keyFields...)
	wantRoles := []any{map[string]any{"orgId": org, "roleName": "ORG_MEMBER"}, map[string]any{"groupId": p, "roleName": "GROUP_READ_ONLY"}}
	if r.str("id") != deploy.KeyID || r.str("publicKey") != deploy.user || r.str("desc") != "deploy" || !reflect.DeepEqual(r.Body["roles"], wantRoles) ||
		r.str("privateKey") != "********-****-****-****-********"+deploy.pass[len(deploy.pass)-4:] {
		t.Errorf("assigned: %s, want roles %v", r.Raw, wantRoles)
	}
	wantSelf(t, r.Body, e.Base+"/orgs/"+org+"/apiKeys/"+deploy.KeyID) // the organization's key, as the document says

	// The key now reads the project, and only reads it.
	deploy.do("GET", "/groups/"+p+"/alertConfigs", nil).wantStatus(200)
	wantUnauthorized(deploy.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)))

	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAPIKeyAddedToGroup)
	if len(evs) != 1 || evs[0].GroupID != p || evs[0].TargetPublicKey != deploy.user || evs[0].APIKeyID != admin.KeyID || evs[0].PublicKey != admin.user {
		t.Errorf("events %+v, want one in the project naming the key, made by the user admin", evs)
	}

	// Assigning again replaces the key's roles in the project.
	r = e.Owner.do("PATCH", path, map[string]any{"roles": []string{"GROUP_MONITORING_ADMIN", "GROUP_READ_ONLY"}}).wantStatus(200)
	wantRoles = []any{wantRoles[0], map[string]any{"groupId": p, "roleName": "GROUP_MONITORING_ADMIN"}, map[string]any{"groupId": p, "roleName": "GROUP_READ_ONLY"}}
	if !reflect.DeepEqual(r.Body["roles"], wantRoles) {
		t.Errorf("roles %v, want %v", r.Body["roles"], wantRoles)
	}
	deploy.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201)

	stored := func() []herald.Role {
		k, err := e.Store.APIKey(context.Background(), deploy.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		return k.Roles
	}
	before := stored()
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"no roles", herald.CodeMissingAttribute, "roles", map[string]any{}},
		{"empty roles", herald.CodeMissingAttribute, "roles", map[string]any{"roles": []string{}}},
		{"an org role", herald.CodeInvalidEnumValue, "roles", map[string]any{"roles": []string{"ORG_OWNER"}}},
		{"an unknown role", herald.CodeInvalidEnumValue, "roles", map[string]any{"roles": []string{"GROUP_READ_ONLY", "GROUP_KING"}}},
		{"a desc", herald.CodeInvalidAttribute, "desc", map[string]any{"roles": []string{"GROUP_OWNER"}, "desc": "renamed"}},
		{"roles as a string", herald.CodeInvalidAttribute, "roles", map[string]any{"roles": "GROUP_OWNER"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantNamed(e.Owner.do("PATCH", path, tc.body).wantError(400, tc.code), tc.field)
		})
	}

	assign := map[string]any{"roles": []string{"GROUP_OWNER"}}
	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+herald.NewID(time.Now()), assign).wantError(404, herald.CodeAPIKeyNotFound)
	e.Owner.do("PATCH", "/groups/"+herald.NewID(time.Now())+"/apiKeys/"+deploy.KeyID, assign).wantError(404, herald.CodeGroupNotFound)
	// A key of another organization, or a global key, is not found in this project.
	e.Owner.do("PATCH", "/groups/"+q+"/apiKeys/"+deploy.KeyID, assign).wantError(404, herald.CodeAPIKeyNotFound)
	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+e.Owner.KeyID, assign).wantError(404, herald.CodeAPIKeyNotFound)

	for name, c := range map[string]*client{
		"GROUP_READ_ONLY":          e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}),
		"GROUP_MONITORING_ADMIN":   e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin}),
		"GROUP_OWNER elsewhere":    e.key(other, herald.Role{GroupID: q, RoleName: herald.GroupOwner}),
		"ORG_OWNER of another org": e.key(other, herald.Role{OrgID: other, RoleName: herald.OrgOwner}),
		"the key itself":           deploy,
	} {
		t.Run(name, func(t *testing.T) { wantUnauthorized(c.do("PATCH", path, assign)) })
	}
	if after := stored(); !reflect.DeepEqual(after, before) {
		t.Errorf("refused requests changed the key's roles: %v, was %v", after, before)
	}
	if evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAPIKeyAddedToGroup); len(evs) != 2 {
		t.Errorf("%d assignments recorded, want 2", len(evs))
	}

	// Those allowed besides: the project's owner, the organization's owner, a global user admin.
	for _, c := range []*client{
		e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}),
		e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
		e.key("", herald.Role{RoleName: herald.GlobalUserAdmin}),
	} {
		c.do("PATCH", path, map[string]any{"roles": []string{"GROUP_READ_ONLY"}}).wantStatus(200)
	}
	wantNoSecret(t, "the log", e.Logs(), deploy.pass)
}
