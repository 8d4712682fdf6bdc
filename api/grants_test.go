package api_test

import (
	"testing"

	"github.com/heraldhq/herald"
)

// A key that may assign roles gives only roles at or below its own: it cannot raise itself or
// another key above them, nor change a key that outranks it; GROUP_OWNER takes an owner.
func TestAssigningRolesStaysUnderTheCallersCeiling(t *testing.T) {
	e, org, p := newProjectEnv(t)
	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupUserAdmin})
	owner := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner})
	other := e.key(org)
	assign := func(c *client, keyID string, roles ...string) *response {
		return c.do("PATCH", "/groups/"+p+"/apiKeys/"+keyID, map[string]any{"roles": roles})
	}
	assign(admin, admin.KeyID, herald.GroupOwner).wantError(401, herald.CodeUserUnauthorized)
	assign(admin, admin.KeyID, herald.GroupMonitoringAdmin).wantError(401, herald.CodeUserUnauthorized)
	assign(admin, other.KeyID, herald.GroupOwner).wantError(401, herald.CodeUserUnauthorized)
	assign(admin, owner.KeyID, herald.GroupReadOnly).wantError(401, herald.CodeUserUnauthorized) // demoting an owner
	k, err := e.Store.APIKey(t.Context(), admin.KeyID)
	if err != nil || len(k.Roles) != 1 || k.Roles[0].RoleName != herald.GroupUserAdmin {
		t.Fatalf("refused assignments changed the key: %v (%v)", k.Roles, err)
	}
	assign(admin, other.KeyID, herald.GroupReadOnly, herald.GroupUserAdmin).wantStatus(200)
	assign(owner, other.KeyID, herald.GroupOwner).wantStatus(200)
	assign(admin, admin.KeyID, herald.GroupReadOnly).wantStatus(200) // lowering itself is fine
}

// A user administrator makes users with roles at or below its own, granted or invited.
func TestCreatingUsersStaysUnderTheCallersCeiling(t *testing.T) {
	e, org, p := newProjectEnv(t)
	userAdmin := e.key("", herald.Role{RoleName: herald.GlobalUserAdmin})
	for name, r := range map[string]map[string]any{
		"u1": role(herald.GlobalOwner),
		"u2": role(herald.GlobalMonitoringAdmin),
		"u3": role(herald.GroupOwner, "groupId", p),
		"u4": role(herald.GroupMonitoringAdmin, "groupId", p),
		"u5": role(herald.OrgOwner, "orgId", org),
	} {
		userAdmin.do("POST", "/users", userBody(name, r)).wantError(401, herald.CodeUserUnauthorized)
		if _, ok, _ := e.Store.UserByUsername(t.Context(), name); ok {
			t.Errorf("refused user %s was made", name)
		}
	}
	userAdmin.do("POST", "/users", userBody("ok1", role(herald.GlobalReadOnly), role(herald.GroupUserAdmin, "groupId", p))).wantStatus(201)
	e.Owner.do("POST", "/users", userBody("ok2", role(herald.GlobalMonitoringAdmin), role(herald.GroupOwner, "groupId", p))).wantStatus(201)
	orgOwner := e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner})
	orgOwner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "deploy", "roles": []string{herald.OrgOwner}}).wantStatus(201)
}
