package herald

import (
	"slices"
	"testing"
)

// TestPrincipalCan checks every kind of access in every kind of scope against one holder of
// each role: the checks a principal passes are listed, every other check must fail.
func TestPrincipalCan(t *testing.T) {
	const orgA, orgB, projA1, projA2, projB = "org-a", "org-b", "proj-a1", "proj-a2", "proj-b"
	a1, a2, b := Scope{OrgID: orgA, GroupID: projA1}, Scope{OrgID: orgA, GroupID: projA2}, Scope{OrgID: orgB, GroupID: projB}
	// A project whose organization is not known (the API asks so for a project that does not exist).
	a1Alone := Scope{GroupID: projA1}
	checks := map[string]struct {
		a Access
		s Scope
	}{
		"ReadProject A1":           {ReadProject, a1},
		"ReadProject A2":           {ReadProject, a2},
		"ReadProject B":            {ReadProject, b},
		"ReadProject A1 alone":     {ReadProject, a1Alone},
		"WriteMonitoring A1":       {WriteMonitoring, a1},
		"WriteMonitoring A2":       {WriteMonitoring, a2},
		"WriteMonitoring B":        {WriteMonitoring, b},
		"WriteMonitoring A1 alone": {WriteMonitoring, a1Alone},
		"AssignAPIKey A1":          {AssignAPIKey, a1},
		"AssignAPIKey A2":          {AssignAPIKey, a2},
		"AssignAPIKey B":           {AssignAPIKey, b},
		"ReadOrg A":                {ReadOrg, Scope{OrgID: orgA}},
		"ReadOrg B":                {ReadOrg, Scope{OrgID: orgB}},
		"ReadOrg none":             {ReadOrg, Scope{}},
		"OwnOrg A":                 {OwnOrg, Scope{OrgID: orgA}},
		"OwnOrg B":                 {OwnOrg, Scope{OrgID: orgB}},
		"OwnOrg none":              {OwnOrg, Scope{}},
		"ReadGlobal":               {ReadGlobal, Scope{}},
		"MonitorGlobal":            {MonitorGlobal, Scope{}},
		"AdminUsers":               {AdminUsers, Scope{}},
		"OwnGlobal":                {OwnGlobal, Scope{}},
		"unknown access 0":         {Access(0), a1},
		"unknown access 99":        {Access(99), Scope{}},
	}
	everyProject := func(kinds ...string) []string {
		var out []string
		for _, k := range kinds {
			out = append(out, k+" A1", k+" A2", k+" B")
			if k != "AssignAPIKey" {
				out = append(out, k+" A1 alone")
			}
		}
		return out
	}
	global := func(name string) Role { return Role{RoleName: name} }
	org := func(id, name string) Role { return Role{OrgID: id, RoleName: name} }
	project := func(id, name string) Role { return Role{GroupID: id, RoleName: name} }

	for _, tc := range []struct {
		name    string
		roles   []Role
		allowed []string
	}{
		{"no role", nil, nil},
		{"GLOBAL_OWNER", []Role{global(GlobalOwner)}, append(everyProject("ReadProject", "WriteMonitoring", "AssignAPIKey"),
			"ReadOrg A", "ReadOrg B", "OwnOrg A", "OwnOrg B", "ReadOrg none", "OwnOrg none", "ReadGlobal", "MonitorGlobal", "AdminUsers", "OwnGlobal")},
		{"GLOBAL_MONITORING_ADMIN", []Role{global(GlobalMonitoringAdmin)}, append(everyProject("ReadProject", "WriteMonitoring"),
			"ReadOrg A", "ReadOrg B", "ReadOrg none", "ReadGlobal", "MonitorGlobal")},
		{"GLOBAL_READ_ONLY", []Role{global(GlobalReadOnly)}, append(everyProject("ReadProject"),
			"ReadOrg A", "ReadOrg B", "ReadOrg none", "ReadGlobal")},
		{"GLOBAL_USER_ADMIN", []Role{global(GlobalUserAdmin)}, append(everyProject("ReadProject", "AssignAPIKey"),
			"ReadOrg A", "ReadOrg B", "ReadOrg none", "ReadGlobal", "AdminUsers")},
		{"an unknown global role is none", []Role{global("GLOBAL_NOTHING")}, nil},
		{"ORG_OWNER of A acts as project owner in A's projects only", []Role{org(orgA, OrgOwner)},
			[]string{"ReadProject A1", "ReadProject A2", "WriteMonitoring A1", "WriteMonitoring A2", "AssignAPIKey A1", "AssignAPIKey A2", "ReadOrg A", "OwnOrg A"}},
		{"ORG_READ_ONLY of A reads A's projects", []Role{org(orgA, OrgReadOnly)}, []string{"ReadProject A1", "ReadProject A2", "ReadOrg A"}},
		{"ORG_MEMBER of A sees the organization, not its projects", []Role{org(orgA, "ORG_MEMBER")}, []string{"ReadOrg A"}},
		{"GROUP_OWNER of A1", []Role{project(projA1, GroupOwner)},
			[]string{"ReadProject A1", "ReadProject A1 alone", "WriteMonitoring A1", "WriteMonitoring A1 alone", "AssignAPIKey A1"}},
		{"GROUP_MONITORING_ADMIN of A1", []Role{project(projA1, GroupMonitoringAdmin)},
			[]string{"ReadProject A1", "ReadProject A1 alone", "WriteMonitoring A1", "WriteMonitoring A1 alone"}},
		{"GROUP_USER_ADMIN of A1", []Role{project(projA1, GroupUserAdmin)},
			[]string{"ReadProject A1", "ReadProject A1 alone", "AssignAPIKey A1"}},
		{"GROUP_READ_ONLY of A1 reads but cannot write", []Role{project(projA1, GroupReadOnly)},
			[]string{"ReadProject A1", "ReadProject A1 alone"}},
		{"GROUP_DATA_ACCESS_READ_WRITE of A1", []Role{project(projA1, GroupDataAccessReadWrite)},
			[]string{"ReadProject A1", "ReadProject A1 alone"}},
		{"roles in two projects act each in its own", []Role{project(projA1, GroupReadOnly), project(projB, GroupOwner)},
			[]string{"ReadProject A1", "ReadProject A1 alone", "ReadProject B", "WriteMonitoring B", "AssignAPIKey B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Principal{APIKeyID: "k", PublicKey: "pub", Roles: tc.roles}
			for _, name := range tc.allowed {
				if _, ok := checks[name]; !ok {
					t.Fatalf("no check named %q", name)
				}
			}
			for name, c := range checks {
				want := slices.Contains(tc.allowed, name)
				if got := p.Can(c.a, c.s); got != want {
					t.Errorf("%s: Can = %v, want %v", name, got, want)
				}
			}
		})
	}
}

// Reach names where a principal may read: everything for a global role; an organization for
// any role in it, and its projects only for the roles that reach into them; a project for any
// role in it.
func TestPrincipalReach(t *testing.T) {
	p := Principal{Roles: []Role{
		{OrgID: "a", RoleName: OrgOwner}, {OrgID: "a", RoleName: OrgReadOnly},
		{OrgID: "b", RoleName: "ORG_MEMBER"},
		{GroupID: "g1", OrgID: "b", RoleName: GroupReadOnly}, {GroupID: "g1", RoleName: GroupOwner},
	}}
	for _, c := range []struct {
		a            Access
		orgs, groups []string
	}{
		{ReadOrg, []string{"a", "b"}, nil},
		{ReadProject, []string{"a"}, []string{"g1"}},
	} {
		all, orgs, groups := p.Reach(c.a)
		if all || !slices.Equal(orgs, c.orgs) || !slices.Equal(groups, c.groups) {
			t.Errorf("access %d: %v %v %v, want orgs %v, projects %v", c.a, all, orgs, groups, c.orgs, c.groups)
		}
	}
	for _, name := range []string{GlobalReadOnly, GlobalOwner, GlobalUserAdmin} {
		for _, a := range []Access{ReadOrg, ReadProject} {
			if all, _, _ := (Principal{Roles: []Role{{RoleName: name}}}).Reach(a); !all {
				t.Errorf("%s does not reach everything for access %d", name, a)
			}
		}
	}
	if all, orgs, groups := (Principal{}).Reach(ReadProject); all || orgs != nil || groups != nil {
		t.Errorf("no role reaches %v %v %v", all, orgs, groups)
	}
}
