package herald

// Who a GROUP, ORG, USER or ADMIN notification reaches, and which field of a notification or
// integration holds the credential a service may refuse.
//
// Herald has no step in which an invited user accepts an invitation, so a user invited to a
// project or organization with a role is notified as a holder of that role. Invitations give
// no access to the API.

// Memberships are every role a user holds or was invited to.
func (u User) Memberships() []Role { return append(append([]Role(nil), u.Roles...), u.Invitations...) }

// Notified reports whether notification n (of a configuration of project p, or a global one)
// reaches user u.
func (n Notification) Notified(u User, p Project) bool {
	wants := func(role string) bool {
		if len(n.Roles) == 0 {
			return true
		}
		return contains(n.Roles, role)
	}
	switch n.TypeName {
	case "USER":
		return u.Username == n.Username
	case "ADMIN":
		for _, r := range u.Roles {
			if r.GroupID == "" && r.OrgID == "" && (r.RoleName == GlobalOwner || r.RoleName == GlobalMonitoringAdmin) {
				return true
			}
		}
	case "GROUP":
		for _, r := range u.Memberships() {
			if r.GroupID == p.ID && wants(r.RoleName) {
				return true
			}
		}
	case "ORG":
		for _, r := range u.Memberships() {
			if r.OrgID == p.OrgID && r.GroupID == "" && wants(r.RoleName) {
				return true
			}
		}
	}
	return false
}

// FansOut reports whether a notification of typeName reaches people (by email and/or SMS)
// rather than one address or service.
func FansOut(typeName string) bool {
	switch typeName {
	case "GROUP", "ORG", "USER", "ADMIN":
		return true
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

// credentialFields names, per notification kind, the notification field and the integration
// field that hold the credential the service checks.
var credentialFields = map[string][2]string{
	"CHAT_A":     {"notificationToken", "notificationToken"},
	"CHATA":      {"notificationToken", "notificationToken"},
	"CHAT_B":     {"apiToken", "apiToken"},
	"PAGING":     {"serviceKey", "serviceKey"},
	"METRICS_A":  {"metricsAApiKey", "apiKey"},
	"ALERTING_A": {"alertingAApiKey", "apiKey"},
	"ALERTING_B": {"alertingBApiKey", "apiKey"},
}

// RemoveCredential removes the credential of its kind from n; it reports the field, or ""
// when n holds none (the integration supplied it).
func (n *Notification) RemoveCredential() string {
	f, ok := credentialFields[n.TypeName]
	if !ok {
		return ""
	}
	for _, nf := range notificationFields {
		if nf.name == f[0] {
			if p := nf.out(n); *p != "" {
				*p = ""
				return f[0]
			}
		}
	}
	return ""
}

// RemoveCredential removes from i the credential a notification of typeName uses; it reports
// the field, or "" when there was none.
func (i *Integration) RemoveCredential(typeName string) string {
	f, ok := credentialFields[typeName]
	if !ok {
		return ""
	}
	if p := i.field(f[1]); p != nil && *p != "" {
		*p = ""
		return f[1]
	}
	return ""
}

// CredentialRejected is the audit event of a credential a service refused, which Herald
// removed from the notification or integration that held it.
const EventCredentialRejected = "CREDENTIAL_REJECTED_AUDIT"
