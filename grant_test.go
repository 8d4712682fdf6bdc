package herald

import "testing"

// TestCanGrant is the grant ceiling as a table: who may give which role.
func TestCanGrant(t *testing.T) {
	const org, proj, other = "org-a", "proj-a1", "proj-b"
	inProject := Scope{OrgID: org, GroupID: proj}
	global := func(n string) Role { return Role{RoleName: n} }
	orgRole := func(n string) Role { return Role{OrgID: org, RoleName: n} }
	projRole := func(n string) Role { return Role{GroupID: proj, RoleName: n} }
	cases := []struct {
		caller  []Role
		grant   Role
		allowed bool
	}{
		// Project roles.
		{[]Role{projRole(GroupUserAdmin)}, projRole(GroupReadOnly), true},
		{[]Role{projRole(GroupUserAdmin)}, projRole(GroupUserAdmin), true},
		{[]Role{projRole(GroupUserAdmin)}, projRole(GroupDataAccessReadWrite), true},
		{[]Role{projRole(GroupUserAdmin)}, projRole(GroupMonitoringAdmin), false},
		{[]Role{projRole(GroupUserAdmin)}, projRole(GroupOwner), false},
		{[]Role{projRole(GroupUserAdmin), projRole(GroupMonitoringAdmin)}, projRole(GroupOwner), false},
		{[]Role{projRole(GroupUserAdmin), projRole(GroupMonitoringAdmin)}, projRole(GroupMonitoringAdmin), true},
		{[]Role{projRole(GroupOwner)}, projRole(GroupOwner), true},
		{[]Role{{GroupID: other, RoleName: GroupOwner}}, projRole(GroupReadOnly), false},
		{[]Role{orgRole(OrgOwner)}, projRole(GroupOwner), true},
		{[]Role{orgRole(OrgReadOnly)}, projRole(GroupReadOnly), true},
		{[]Role{orgRole(OrgReadOnly)}, projRole(GroupUserAdmin), false},
		{[]Role{global(GlobalOwner)}, projRole(GroupOwner), true},
		{[]Role{global(GlobalUserAdmin)}, projRole(GroupUserAdmin), true},
		{[]Role{global(GlobalUserAdmin)}, projRole(GroupMonitoringAdmin), false},
		{[]Role{global(GlobalUserAdmin)}, projRole(GroupOwner), false},
		{[]Role{global(GlobalUserAdmin), global(GlobalMonitoringAdmin)}, projRole(GroupOwner), false}, // not an owner
		{[]Role{global(GlobalReadOnly)}, projRole(GroupReadOnly), true},
		// Organization roles.
		{[]Role{orgRole(OrgOwner)}, orgRole(OrgOwner), true},
		{[]Role{orgRole(OrgOwner)}, orgRole(OrgReadOnly), true},
		{[]Role{orgRole(OrgReadOnly)}, orgRole(OrgOwner), false},
		{[]Role{global(GlobalUserAdmin)}, orgRole(OrgReadOnly), true},
		{[]Role{global(GlobalUserAdmin)}, orgRole("ORG_MEMBER"), true},
		{[]Role{global(GlobalUserAdmin)}, orgRole(OrgOwner), false},
		{[]Role{projRole(GroupOwner)}, orgRole(OrgReadOnly), false},
		// Global roles.
		{[]Role{global(GlobalOwner)}, global(GlobalOwner), true},
		{[]Role{global(GlobalUserAdmin)}, global(GlobalOwner), false},
		{[]Role{global(GlobalUserAdmin)}, global(GlobalReadOnly), true},
		{[]Role{global(GlobalUserAdmin)}, global(GlobalUserAdmin), true},
		{[]Role{global(GlobalUserAdmin)}, global(GlobalMonitoringAdmin), false},
		{[]Role{global(GlobalMonitoringAdmin)}, global(GlobalReadOnly), true},
		{[]Role{orgRole(OrgOwner)}, global(GlobalReadOnly), false},
	}
	for _, tc := range cases {
		scope := inProject
		switch {
		case tc.grant.GroupID != "":
		case tc.grant.OrgID != "":
			scope = Scope{OrgID: org}
		default:
			scope = Scope{}
		}
		if got := (Principal{Roles: tc.caller}).CanGrant(tc.grant, scope); got != tc.allowed {
			t.Errorf("%v granting %v: %v, want %v", tc.caller, tc.grant, got, tc.allowed)
		}
	}
}
