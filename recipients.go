package herald

import "strings"

// Who a GROUP, ORG, USER or ADMIN notification reaches (each kind's Reaches in kinds.go), and
// which field of a notification or integration holds the credential a service may refuse.
//
// Herald has no step in which an invited user accepts an invitation, so a user invited to a
// project or organization with a role is notified as a holder of that role. Invitations give
// no access to the API.

// Memberships are every role a user holds or was invited to.
func (u User) Memberships() []Role { return append(append([]Role(nil), u.Roles...), u.Invitations...) }

// wantsRole reports whether a notification narrowed to roles (none: every role) wants role.
func (n Notification) wantsRole(role string) bool {
	return len(n.Roles) == 0 || contains(n.Roles, role)
}

func reachesUser(n Notification, u User, _ Project) bool { return u.Username == n.Field("username") }

func reachesProjectMember(n Notification, u User, p Project) bool {
	for _, r := range u.Memberships() {
		if r.GroupID == p.ID && n.wantsRole(r.RoleName) {
			return true
		}
	}
	return false
}

func reachesOrgMember(n Notification, u User, p Project) bool {
	for _, r := range u.Memberships() {
		if r.OrgID == p.OrgID && r.GroupID == "" && n.wantsRole(r.RoleName) {
			return true
		}
	}
	return false
}

// reachesGlobalOwner: the installation's administrators, when the operator named none, are the
// users holding GLOBAL_OWNER (held, not invited: global roles have no invitations).
func reachesGlobalOwner(_ Notification, u User, _ Project) bool {
	for _, r := range u.Roles {
		if r.GroupID == "" && r.OrgID == "" && r.RoleName == GlobalOwner {
			return true
		}
	}
	return false
}

// OwnsProject reports whether u is told about project p's configuration problems: a project
// owner (held or invited), an owner of its organization, or a global owner.
func (u User) OwnsProject(p Project) bool {
	for _, r := range u.Memberships() {
		if (r.GroupID == p.ID && r.RoleName == GroupOwner) || (r.OrgID == p.OrgID && r.GroupID == "" && r.RoleName == OrgOwner) ||
			(r.GroupID == "" && r.OrgID == "" && r.RoleName == GlobalOwner) {
			return true
		}
	}
	return false
}

// credential is the field of a notification of typeName that holds the credential its service
// checks, as the registry declares it.
func credential(typeName string) (KindField, bool) {
	k, _ := LookupKind(typeName)
	for _, f := range k.Fields {
		if f.Credential {
			return f, true
		}
	}
	return KindField{}, false
}

// RemoveCredential removes the credential of its kind from n; it reports the field, or ""
// when n holds none (the integration supplied it).
func (n *Notification) RemoveCredential() string {
	f, ok := credential(n.TypeName)
	if !ok {
		return ""
	}
	if n.Field(f.Name) != "" {
		n.SetField(f.Name, "")
		return f.Name
	}
	return ""
}

// RemoveCredential removes from i the credential a notification of typeName uses; it reports
// the field, or "" when there was none.
func (i *Integration) RemoveCredential(typeName string) string {
	f, ok := credential(typeName)
	if !ok || f.Integration == "" {
		return ""
	}
	if i.Field(f.Integration) != "" {
		i.SetField(f.Integration, "")
		return f.Integration
	}
	return ""
}

// CredentialRejected is the audit event of a credential a service refused, which Herald
// removed from the notification or integration that held it.
const EventCredentialRejected = "CREDENTIAL_REJECTED_AUDIT"

// Why a notice of a notification that reaches people reached nobody (the reason its dead
// letter is recorded with), for a retry of one person's delivery.
const NobodyPersonGone = "the person it was for is no longer among those it reaches, or has no address for it now"

// NobodyReached says why notification n, of a kind that reaches people, reached nobody of its
// project's people (none holds what it names with an address for its means), as its notice's
// dead letter records it: whom it names and what they lack.
func (n Notification) NobodyReached() string {
	kind, _ := LookupKind(n.TypeName)
	who := "no member of the project"
	switch {
	case kind.Name == "USER":
		who = "no member of the project named " + n.Field("username")
	case kind.Name == "ORG":
		who = "no member of the organization"
	case kind.People != nil && kind.People.Administrators:
		who = "no global owner"
	}
	if len(n.Roles) > 0 && kind.People != nil && kind.People.Roles != nil {
		who += " holding " + strings.Join(n.Roles, " or ")
	}
	email, sms := n.Means()
	switch {
	case email && sms:
		return who + " has an email address or a mobile number"
	case sms:
		return who + " has a mobile number"
	default:
		return who + " has an email address"
	}
}
