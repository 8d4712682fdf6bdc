package api_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

func TestCreateOrg(t *testing.T) {
	e := newEnv(t)
	r := e.Owner.do("POST", "/orgs", map[string]any{"name": "  Acme Corp "}).wantStatus(201)
	wantKeys(t, r.Body, "id", "name", "created", "links")
	id := r.str("id")
	if !herald.ValidID(id) || r.str("name") != "Acme Corp" {
		t.Errorf("created: %s", r.Raw)
	}
	if _, err := time.Parse(time.RFC3339, r.str("created")); err != nil {
		t.Errorf("created %q: %v", r.str("created"), err)
	}
	wantSelf(t, r.Body, e.Base+"/orgs/"+id)
	if o, err := e.Store.Org(context.Background(), id); err != nil || o.Name != "Acme Corp" {
		t.Errorf("stored: %+v, %v", o, err)
	}
	evs := auditEvents(t, e, store.EventScope{}, herald.EventOrgCreated)
	if len(evs) != 1 || evs[0].Raw["orgId"] != id || evs[0].APIKeyID != e.Owner.KeyID || evs[0].PublicKey != e.Owner.user {
		t.Errorf("events %+v, want one naming the organization, made by the owner", evs)
	}

	e.Owner.do("POST", "/orgs", map[string]any{"name": "Acme Corp"}).wantError(409, herald.CodeOrgNameAlreadyExists)
	e.Owner.do("POST", "/orgs", map[string]any{"name": " Acme Corp"}).wantError(409, herald.CodeOrgNameAlreadyExists)

	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"no name", herald.CodeMissingAttribute, "name", map[string]any{}},
		{"a blank name", herald.CodeMissingAttribute, "name", map[string]any{"name": " "}},
		{"a long name", herald.CodeInvalidAttribute, "name", map[string]any{"name": strings.Repeat("n", 65)}},
		{"a name that is a number", herald.CodeInvalidAttribute, "name", map[string]any{"name": 7}},
		{"an orgId", herald.CodeInvalidAttribute, "orgId", map[string]any{"name": "x", "orgId": id}},
		{"tags", herald.CodeInvalidAttribute, "tags", map[string]any{"name": "x", "tags": []string{"a"}}},
		{"an unknown field", herald.CodeInvalidAttribute, "owner", map[string]any{"name": "x", "owner": "me"}},
		{"malformed JSON", herald.CodeInvalidJSON, "", `{"name":"x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.do("POST", "/orgs", tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	for name, c := range map[string]*client{
		"GLOBAL_MONITORING_ADMIN": e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}),
		"GLOBAL_USER_ADMIN":       e.key("", herald.Role{RoleName: herald.GlobalUserAdmin}),
		"ORG_OWNER":               e.key(id, herald.Role{OrgID: id, RoleName: herald.OrgOwner}),
	} {
		t.Run(name, func(t *testing.T) { wantUnauthorized(c.do("POST", "/orgs", map[string]any{"name": "x"})) })
	}
	if evs := auditEvents(t, e, store.EventScope{}, herald.EventOrgCreated); len(evs) != 1 {
		t.Errorf("%d organizations created, want 1", len(evs))
	}
	// x was never created: a global owner can create it now.
	e.Owner.do("POST", "/orgs", map[string]any{"name": "x"}).wantStatus(201)
}

func TestCreateProject(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	other := e.org("umbrella")
	owner := e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner})

	r := owner.do("POST", "/groups", map[string]any{"name": " prod ", "orgId": org, "tags": []string{"PROD", " eu "}}).wantStatus(201)
	wantKeys(t, r.Body, "id", "name", "orgId", "created", "tags", "links")
	id := r.str("id")
	if !herald.ValidID(id) || r.str("name") != "prod" || r.str("orgId") != org || !reflect.DeepEqual(r.Body["tags"], []any{"PROD", "eu"}) {
		t.Errorf("created: %s", r.Raw)
	}
	wantSelf(t, r.Body, e.Base+"/groups/"+id)
	if p, err := e.Store.Project(context.Background(), id); err != nil || p.OrgID != org || !reflect.DeepEqual(p.Tags, []string{"PROD", "eu"}) {
		t.Errorf("stored: %+v, %v", p, err)
	}
	// The organization's owner acts in it, with the default configurations there.
	if r := owner.do("GET", "/groups/"+id+"/alertConfigs", nil).wantStatus(200); r.num("totalCount") != 10 {
		t.Errorf("a new project has %v configurations, want the 10 defaults", r.num("totalCount"))
	}
	evs := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventGroupCreated)
	if len(evs) != 1 || evs[0].GroupID != id || evs[0].OrgID != org || evs[0].APIKeyID != owner.KeyID {
		t.Errorf("events %+v, want one in the organization naming the project, made by its owner", evs)
	}

	r = e.Owner.do("POST", "/groups", map[string]any{"name": "staging", "orgId": org}).wantStatus(201)
	if tags, ok := r.Body["tags"].([]any); !ok || len(tags) != 0 {
		t.Errorf("no tags given: %s, want tags []", r.Raw)
	}
	// Names are unique in an organization, not across them.
	owner.do("POST", "/groups", map[string]any{"name": "prod", "orgId": org}).wantError(409, herald.CodeGroupNameAlreadyExists)
	e.Owner.do("POST", "/groups", map[string]any{"name": "prod", "orgId": other}).wantStatus(201)

	e.Owner.do("POST", "/groups", map[string]any{"name": "x", "orgId": herald.NewID(time.Now())}).wantError(404, herald.CodeOrgNotFound)
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"no orgId", herald.CodeMissingAttribute, "orgId", map[string]any{"name": "x"}},
		{"an empty orgId", herald.CodeMissingAttribute, "orgId", map[string]any{"name": "x", "orgId": ""}},
		{"no name", herald.CodeMissingAttribute, "name", map[string]any{"orgId": org}},
		{"a long name", herald.CodeInvalidAttribute, "name", map[string]any{"orgId": org, "name": strings.Repeat("n", 65)}},
		{"an empty tag", herald.CodeInvalidAttribute, "tags", map[string]any{"orgId": org, "name": "x", "tags": []string{"a", " "}}},
		{"tags as a string", herald.CodeInvalidAttribute, "tags", map[string]any{"orgId": org, "name": "x", "tags": "a"}},
		{"an unknown field", herald.CodeInvalidAttribute, "region", map[string]any{"orgId": org, "name": "x", "region": "eu"}},
		{"malformed JSON", herald.CodeInvalidJSON, "", `{"orgId":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := owner.do("POST", "/groups", tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	for name, c := range map[string]*client{
		"ORG_OWNER of another org": e.key(other, herald.Role{OrgID: other, RoleName: herald.OrgOwner}),
		"ORG_MEMBER":               e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}),
		"GROUP_OWNER in the org":   e.key(org, herald.Role{GroupID: id, RoleName: herald.GroupOwner}),
		"GLOBAL_READ_ONLY":         e.key("", herald.Role{RoleName: herald.GlobalReadOnly}),
	} {
		t.Run(name, func(t *testing.T) {
			wantUnauthorized(c.do("POST", "/groups", map[string]any{"name": "x", "orgId": org}))
		})
	}
	if evs := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventGroupCreated); len(evs) != 2 {
		t.Errorf("%d projects created in the organization, want 2", len(evs))
	}
}
