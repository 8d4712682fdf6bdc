package herald

// Role is one role an API key or user holds: a global role (no ids), an organization role
// (OrgID) or a project role (GroupID).
type Role struct {
	GroupID  string `json:"groupId,omitempty"`
	OrgID    string `json:"orgId,omitempty"`
	RoleName string `json:"roleName"`
}

// Role names the access rules below refer to.
const (
	GlobalOwner              = "GLOBAL_OWNER"
	GlobalMonitoringAdmin    = "GLOBAL_MONITORING_ADMIN"
	GlobalReadOnly           = "GLOBAL_READ_ONLY"
	GlobalUserAdmin          = "GLOBAL_USER_ADMIN"
	OrgOwner                 = "ORG_OWNER"
	OrgReadOnly              = "ORG_READ_ONLY"
	GroupOwner               = "GROUP_OWNER"
	GroupMonitoringAdmin     = "GROUP_MONITORING_ADMIN"
	GroupUserAdmin           = "GROUP_USER_ADMIN"
	GroupReadOnly            = "GROUP_READ_ONLY"
	GroupDataAccessReadWrite = "GROUP_DATA_ACCESS_READ_WRITE"
)

// Principal is who makes a request: an API key (APIKeyID, PublicKey) or a user (UserID,
// Username), with the roles it holds, and where the request came from.
type Principal struct {
	APIKeyID      string
	PublicKey     string
	UserID        string
	Username      string
	RemoteAddress string
	Roles         []Role
}

// Scope is what a request acts on: nothing (global), an organization, or a project of an
// organization.
type Scope struct {
	OrgID   string
	GroupID string
}

// Access is a kind of request; each has the roles that allow it (docs/api.md#roles and the
// document's own role table).
type Access int

const (
	// ReadProject: any role in the project, any global role, or an organization role that
	// reaches into the organization's projects: ORG_OWNER (acting as project owner) and
	// ORG_READ_ONLY. Other organization roles (ORG_MEMBER, billing, project creator) see the
	// organization, not its projects, as on the platform.
	ReadProject Access = iota + 1
	// WriteMonitoring: alerts, alert configurations, maintenance windows, integrations and
	// observations of a project.
	WriteMonitoring
	// AssignAPIKey: giving an organization key roles in a project.
	AssignAPIKey
	// ReadOrg: any role in the organization, or any global role.
	ReadOrg
	// OwnOrg: creating projects and API keys in an organization.
	OwnOrg
	// ReadGlobal: any global role (the document's "Global Read Only").
	ReadGlobal
	// MonitorGlobal: global alerts and global alert configurations.
	MonitorGlobal
	// AdminUsers: creating users.
	AdminUsers
	// OwnGlobal: creating organizations and global API keys.
	OwnGlobal
)

// Can reports whether p may make a request of kind a in scope s. For project scopes the
// caller supplies the project's organization, so that an org owner acts as project owner.
func (p Principal) Can(a Access, s Scope) bool {
	switch a {
	case ReadProject:
		return p.holdsGlobal() || p.holdsOrg(s.OrgID, OrgOwner, OrgReadOnly) || p.holdsProject(s.GroupID)
	case WriteMonitoring:
		return p.holdsGlobal(GlobalOwner, GlobalMonitoringAdmin) || p.holdsOrg(s.OrgID, OrgOwner) ||
			p.holdsProject(s.GroupID, GroupOwner, GroupMonitoringAdmin)
	case AssignAPIKey:
		return p.holdsGlobal(GlobalOwner, GlobalUserAdmin) || p.holdsOrg(s.OrgID, OrgOwner) ||
			p.holdsProject(s.GroupID, GroupOwner, GroupUserAdmin)
	case ReadOrg:
		return p.holdsGlobal() || p.holdsOrg(s.OrgID)
	case OwnOrg:
		return p.holdsGlobal(GlobalOwner) || p.holdsOrg(s.OrgID, OrgOwner)
	case ReadGlobal:
		return p.holdsGlobal()
	case MonitorGlobal:
		return p.holdsGlobal(GlobalOwner, GlobalMonitoringAdmin)
	case AdminUsers:
		return p.holdsGlobal(GlobalOwner, GlobalUserAdmin)
	case OwnGlobal:
		return p.holdsGlobal(GlobalOwner)
	}
	return false
}

// Reach is where p may make requests of kind a, for the lists that show only what the caller
// may read: everywhere (all); else in every project (or, for an organization's access, in
// the organization itself) of organizations orgs, and in projects groups. It asks Can, so the
// lists and the endpoints of one item agree.
func (p Principal) Reach(a Access) (all bool, orgs, groups []string) {
	if p.Can(a, Scope{OrgID: probeID, GroupID: probeID}) {
		return true, nil, nil
	}
	seenOrg, seenGroup := map[string]bool{}, map[string]bool{}
	for _, r := range p.Roles {
		switch {
		case r.GroupID != "":
			if !seenGroup[r.GroupID] && p.Can(a, Scope{GroupID: r.GroupID}) {
				groups = append(groups, r.GroupID)
			}
			seenGroup[r.GroupID] = true
		case r.OrgID != "":
			in := Scope{OrgID: r.OrgID, GroupID: probeID} // any project of the organization
			if a == ReadOrg || a == OwnOrg {
				in.GroupID = ""
			}
			if !seenOrg[r.OrgID] && p.Can(a, in) {
				orgs = append(orgs, r.OrgID)
			}
			seenOrg[r.OrgID] = true
		}
	}
	return false, orgs, groups
}

// holdsGlobal: a global role among names (any global role when names is empty).
func (p Principal) holdsGlobal(names ...string) bool {
	return p.holds(func(r Role) bool { return r.GroupID == "" && r.OrgID == "" && ValidGlobalRole(r.RoleName) }, names)
}

// holdsOrg: a role in organization orgID among names (any when names is empty).
func (p Principal) holdsOrg(orgID string, names ...string) bool {
	if orgID == "" {
		return false
	}
	return p.holds(func(r Role) bool { return r.OrgID == orgID && r.GroupID == "" }, names)
}

// holdsProject: a role in project groupID among names (any when names is empty).
func (p Principal) holdsProject(groupID string, names ...string) bool {
	if groupID == "" {
		return false
	}
	return p.holds(func(r Role) bool { return r.GroupID == groupID }, names)
}

func (p Principal) holds(in func(Role) bool, names []string) bool {
	for _, r := range p.Roles {
		if !in(r) {
			continue
		}
		if len(names) == 0 {
			return true
		}
		for _, n := range names {
			if r.RoleName == n {
				return true
			}
		}
	}
	return false
}
