package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
)

const testPassword = "s3cret-Passw0rd"

// userBody is a valid POST /users body for username with roles.
func userBody(username string, roles ...map[string]any) map[string]any {
	if roles == nil {
		roles = []map[string]any{}
	}
	return map[string]any{"username": username, "password": testPassword, "emailAddress": "jane@example.com",
		"mobileNumber": "+1 555 0100 200", "firstName": "Jane", "lastName": "Doe", "roles": roles}
}

func role(name string, scope ...string) map[string]any {
	r := map[string]any{"roleName": name}
	if len(scope) == 2 {
		r[scope[0]] = scope[1]
	}
	return r
}

// boundTo is c reporting to t, for use in t's subtest.
func (c *client) boundTo(t *testing.T) *client {
	return &client{t: t, base: c.base, user: c.user, pass: c.pass, KeyID: c.KeyID}
}

// userClient calls the API as a user, with the username and password as digest credentials.
func userClient(t *testing.T, e *env, username, password string) *client {
	return &client{t: t, base: e.Base, user: username, pass: password}
}

func TestCreateUserGrantsGlobalRolesAndInvitesToOthers(t *testing.T) {
	e, org, p := newProjectEnv(t)

	r := e.Owner.do("POST", "/users", userBody("jane@example.com",
		role(herald.GlobalReadOnly), role("ORG_MEMBER", "orgId", org), role(herald.GroupUserAdmin, "groupId", p))).wantStatus(201)
	wantKeys(t, r.Body, "id", "username", "emailAddress", "mobileNumber", "firstName", "lastName", "roles", "links")
	id := r.str("id")
	for field, want := range map[string]string{"username": "jane@example.com", "emailAddress": "jane@example.com",
		"mobileNumber": "+1 555 0100 200", "firstName": "Jane", "lastName": "Doe"} {
		if got := r.str(field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	roles, _ := r.Body["roles"].([]any)
	if len(roles) != 1 {
		t.Fatalf("roles = %v, want only the global role (the others are invitations)", r.Body["roles"])
	}
	wantKeys(t, roles[0].(map[string]any), "roleName")
	if got := roles[0].(map[string]any)["roleName"]; got != herald.GlobalReadOnly {
		t.Errorf("roleName = %v", got)
	}
	if got := link(r.Body["links"], "self"); got != e.Base+"/users/"+id {
		t.Errorf("self = %q", got)
	}
	if strings.Contains(string(r.Raw), testPassword) || strings.Contains(e.Logs(), testPassword) {
		t.Error("the password was returned or logged")
	}

	u, ok, err := e.Store.UserByUsername(context.Background(), "jane@example.com")
	if err != nil || !ok {
		t.Fatalf("user not stored: %v", err)
	}
	if u.HA1 != digest.HA1("jane@example.com", testPassword) {
		t.Error("the stored HA1 is not the password's")
	}
	wantInvites := []herald.Role{{OrgID: org, RoleName: "ORG_MEMBER"}, {GroupID: p, RoleName: herald.GroupUserAdmin}}
	if len(u.Invitations) != 2 || u.Invitations[0] != wantInvites[0] || u.Invitations[1] != wantInvites[1] {
		t.Errorf("invitations = %+v, want %+v", u.Invitations, wantInvites)
	}

	created := auditEvents(t, e, store.EventScope{}, herald.EventUserCreated)
	if len(created) != 1 || created[0].TargetUsername != "jane@example.com" || created[0].APIKeyID != e.Owner.KeyID {
		t.Errorf("USER_CREATED_AUDIT events = %+v", created)
	}
	if ev := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventInvitedToGroup); len(ev) != 1 || ev[0].TargetUsername != "jane@example.com" {
		t.Errorf("INVITED_TO_GROUP events = %+v", ev)
	}
	if ev := auditEvents(t, e, store.EventScope{OrgID: org}, herald.EventInvitedToOrg); len(ev) != 1 || ev[0].TargetUsername != "jane@example.com" {
		t.Errorf("INVITED_TO_ORG events = %+v", ev)
	}

	// The user authenticates like curl --digest -u jane@example.com:password. Its global role
	// reads; its invitations give nothing yet.
	jane := userClient(t, e, "jane@example.com", testPassword)
	jane.do("GET", "/globalEvents", nil).wantStatus(200)
	jane.do("POST", "/orgs", map[string]any{"name": "janes"}).wantError(401, herald.CodeUserUnauthorized)
	jane.do("PATCH", "/groups/"+p+"/apiKeys/"+e.Owner.KeyID, map[string]any{"roles": []string{herald.GroupReadOnly}}).
		wantError(401, herald.CodeUserUnauthorized) // GROUP_USER_ADMIN there is only an invitation

	challenge := raw(t, "GET", e.Base+"/globalEvents", "", nil).Header.Get("WWW-Authenticate")
	wrong := digestHeader("jane@example.com", testPassword+"x", challengeParam(challenge, "nonce"), 1, "GET", "/api/public/v1.0/globalEvents")
	if r := raw(t, "GET", e.Base+"/globalEvents", wrong, nil); r.Status != 401 || r.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("a wrong password got %d: %s", r.Status, r.Raw)
	}
}

func TestCreateUserAsTheDocumentSampleSendsIt(t *testing.T) {
	e := newEnv(t)
	body := userBody("sample")
	delete(body, "mobileNumber")
	r := e.Owner.do("POST", "/users", body).wantStatus(201)
	wantKeys(t, r.Body, "id", "username", "emailAddress", "firstName", "lastName", "roles", "links")
	if roles, ok := r.Body["roles"].([]any); !ok || len(roles) != 0 {
		t.Errorf("roles = %v, want []", r.Body["roles"])
	}
}

func TestCreateUserRefusesADuplicateUsername(t *testing.T) {
	e := newEnv(t)
	e.Owner.do("POST", "/users", userBody("jane", role(herald.GlobalReadOnly))).wantStatus(201)
	again := userBody("jane")
	again["password"] = "another-password"
	e.Owner.do("POST", "/users", again).wantError(409, herald.CodeUsernameAlreadyExists)

	userClient(t, e, "jane", testPassword).do("GET", "/globalEvents", nil).wantStatus(200)
	if got := len(auditEvents(t, e, store.EventScope{}, herald.EventUserCreated)); got != 1 {
		t.Errorf("%d USER_CREATED_AUDIT events, want 1", got)
	}
}

func TestCreateUserRefusesBadBodies(t *testing.T) {
	e, org, p := newProjectEnv(t)
	unknown := "5f0000000000000000000000"
	with := func(field string, v any) map[string]any {
		b := userBody("bad")
		if v == nil {
			delete(b, field)
		} else {
			b[field] = v
		}
		return b
	}
	for _, tc := range []struct {
		name      string
		body      any
		code, par string
	}{
		{"not JSON", `{"username":`, herald.CodeInvalidJSON, ""},
		{"unknown field", with("nickname", "jd"), herald.CodeInvalidAttribute, "nickname"},
		{"no username", with("username", nil), herald.CodeMissingAttribute, "username"},
		{"no password", with("password", nil), herald.CodeMissingAttribute, "password"},
		{"no email", with("emailAddress", nil), herald.CodeMissingAttribute, "emailAddress"},
		{"blank first name", with("firstName", "  "), herald.CodeMissingAttribute, "firstName"},
		{"no last name", with("lastName", nil), herald.CodeMissingAttribute, "lastName"},
		{"no roles", with("roles", nil), herald.CodeMissingAttribute, "roles"},
		{"short password", with("password", "seven77"), herald.CodeInvalidAttribute, "password"},
		{"password a number", with("password", 12345678), herald.CodeInvalidAttribute, "password"},
		{"username with a space", with("username", "jane doe"), herald.CodeInvalidAttribute, "username"},
		{"bad email", with("emailAddress", "Jane <jane@example.com>"), herald.CodeInvalidAttribute, "emailAddress"},
		{"bad phone", with("mobileNumber", "call me"), herald.CodeInvalidAttribute, "mobileNumber"},
		{"roles not an array", with("roles", "GLOBAL_OWNER"), herald.CodeInvalidAttribute, "roles"},
		{"unknown global role", with("roles", []any{role("GLOBAL_EMPEROR")}), herald.CodeInvalidEnumValue, "roles"},
		{"project role without a project", with("roles", []any{role(herald.GroupOwner)}), herald.CodeInvalidEnumValue, "roles"},
		{"org role in a project", with("roles", []any{role("ORG_MEMBER", "groupId", p)}), herald.CodeInvalidEnumValue, "roles"},
		{"project role in an org", with("roles", []any{role(herald.GroupOwner, "orgId", org)}), herald.CodeInvalidEnumValue, "roles"},
		{"both ids", with("roles", []any{map[string]any{"roleName": herald.GroupOwner, "groupId": p, "orgId": org}}), herald.CodeInvalidAttribute, "roles"},
		{"unknown org", with("roles", []any{role("ORG_MEMBER", "orgId", unknown)}), herald.CodeInvalidAttribute, "roles"},
		{"unknown project", with("roles", []any{role(herald.GroupOwner, "groupId", unknown)}), herald.CodeInvalidAttribute, "roles"},
		{"malformed project id", with("roles", []any{role(herald.GroupOwner, "groupId", "../x")}), herald.CodeInvalidAttribute, "roles"},
		{"unknown project after a valid role", with("roles", []any{role("ORG_MEMBER", "orgId", org), role(herald.GroupOwner, "groupId", unknown)}), herald.CodeInvalidAttribute, "roles"},
		{"unknown role field", with("roles", []any{map[string]any{"roleName": herald.GlobalReadOnly, "scope": "all"}}), herald.CodeInvalidAttribute, "scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.boundTo(t).do("POST", "/users", tc.body).wantError(400, tc.code)
			if tc.par != "" {
				wantErrorParameter(r, tc.par)
			}
		})
	}
	if _, ok, err := e.Store.UserByUsername(context.Background(), "bad"); ok || err != nil {
		t.Errorf("a refused request stored the user (err %v)", err)
	}
	for _, sc := range []store.EventScope{{}, {OrgID: org}, {GroupID: p}} {
		for _, typ := range []string{herald.EventUserCreated, herald.EventInvitedToOrg, herald.EventInvitedToGroup} {
			if evs := auditEvents(t, e, sc, typ); len(evs) != 0 {
				t.Errorf("a refused request recorded %+v", evs)
			}
		}
	}
	if strings.Contains(e.Logs(), testPassword) {
		t.Error("the password was logged")
	}
}

func TestCreateUserNeedsAUserAdministrator(t *testing.T) {
	e, org, p := newProjectEnv(t)
	for name, c := range map[string]*client{
		"global read only":  e.key("", herald.Role{RoleName: herald.GlobalReadOnly}),
		"global monitoring": e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}),
		"org owner":         e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
		"group user admin":  e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupUserAdmin}),
	} {
		t.Run(name, func(t *testing.T) {
			c.boundTo(t).do("POST", "/users", userBody("eve")).wantError(401, herald.CodeUserUnauthorized)
		})
	}

	admin := e.key("", herald.Role{RoleName: herald.GlobalUserAdmin})
	// A user administrator may not make someone who outranks it.
	admin.do("POST", "/users", userBody("boss", role(herald.GlobalOwner))).wantError(401, herald.CodeUserUnauthorized)
	if _, ok, _ := e.Store.UserByUsername(context.Background(), "boss"); ok {
		t.Error("the refused owner was stored")
	}
	r := admin.do("POST", "/users", userBody("reader", role(herald.GlobalReadOnly), role(herald.GroupReadOnly, "groupId", p))).wantStatus(201)
	if got := link(r.Body["links"], "self"); got != e.Base+"/users/"+r.str("id") {
		t.Errorf("self = %q", got)
	}
	e.Owner.do("POST", "/users", userBody("boss", role(herald.GlobalOwner))).wantStatus(201)
}
