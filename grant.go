package herald

// The grant ceiling: a caller gives only what it could do itself, so no key or user ever makes
// another (or itself) more powerful than it is.

// probeID names an organization or project no caller holds a role in: what a global role
// allows there, it allows everywhere.
const probeID = "\x00probe"

// CanGrant reports whether p may give role r, whose scope is s (for a project role, the project
// with its organization; for an organization role, the organization; for a global role, none).
// Every access the role allows, in its scope and in the scopes below it, p must have there
// itself; and an owner role only an owner gives (GROUP_OWNER an owner of the project, its
// organization or everything; ORG_OWNER an owner of the organization or everything;
// GLOBAL_OWNER a global owner).
func (p Principal) CanGrant(r Role, s Scope) bool {
	scopes := []Scope{s}
	switch {
	case r.GroupID != "":
	case r.OrgID != "":
		scopes = append(scopes, Scope{OrgID: s.OrgID, GroupID: probeID})
	default:
		scopes = append(scopes, Scope{OrgID: probeID}, Scope{OrgID: probeID, GroupID: probeID})
	}
	holder := Principal{Roles: []Role{r}}
	for a := ReadProject; a <= OwnGlobal; a++ { // every Access (they are consecutive)
		for _, sc := range scopes {
			if holder.Can(a, sc) && !p.Can(a, sc) {
				return false
			}
		}
	}
	switch r.RoleName {
	case GroupOwner:
		return p.holdsGlobal(GlobalOwner) || p.holdsOrg(s.OrgID, OrgOwner) || p.holdsProject(s.GroupID, GroupOwner)
	case OrgOwner:
		return p.holdsGlobal(GlobalOwner) || p.holdsOrg(s.OrgID, OrgOwner)
	case GlobalOwner:
		return p.holdsGlobal(GlobalOwner)
	}
	return true
}
