package herald

// APIKey is an API key as the store keeps it: never the private key, only the digest HA1
// that verification needs and the private key's last characters for the masked view.
// OrgID is the owning organization; empty for a global key.
type APIKey struct {
	ID             string `json:"id"`
	Desc           string `json:"desc"`
	PublicKey      string `json:"publicKey"`
	HA1            string `json:"ha1"`
	MonitoringHA1  string `json:"monitoringHa1,omitempty"` // the HA1 in the monitoring console's realm
	PrivateKeyTail string `json:"privateKeyTail"`
	OrgID          string `json:"orgId,omitempty"`
	Roles          []Role `json:"roles"`
	Created        Time   `json:"created"`
}

// APIKeyView is an API key as the API shows it.
type APIKeyView struct {
	Desc       string `json:"desc"`
	ID         string `json:"id"`
	PrivateKey string `json:"privateKey"`
	PublicKey  string `json:"publicKey"`
	Roles      []Role `json:"roles"`
}

// View is the key with its private key masked.
func (k APIKey) View() APIKeyView {
	return APIKeyView{Desc: k.Desc, ID: k.ID, PrivateKey: MaskPrivateKey(k.PrivateKeyTail), PublicKey: k.PublicKey, Roles: shownRoles(k.Roles)}
}

// shownRoles are roles as a view shows them: an empty list, not null, when there are none.
func shownRoles(roles []Role) []Role {
	if roles == nil {
		return []Role{}
	}
	return roles
}

// Principal is the key acting from remote.
func (k APIKey) Principal(remote string) Principal {
	return Principal{APIKeyID: k.ID, PublicKey: k.PublicKey, Roles: k.Roles, RemoteAddress: remote}
}

// WithProjectRoles returns the key's roles with those in project groupID replaced by names.
func (k APIKey) WithProjectRoles(groupID string, names []string) []Role {
	roles := make([]Role, 0, len(k.Roles)+len(names))
	for _, r := range k.Roles {
		if r.GroupID != groupID {
			roles = append(roles, r)
		}
	}
	for _, n := range names {
		roles = append(roles, Role{GroupID: groupID, RoleName: n})
	}
	return roles
}

// User is a person who can be notified and can call the API with digest credentials. Like a
// key, the store keeps only the HA1 of the password. Invitations are the non-global roles the
// user was invited to and has not yet accepted; they give no access.
type User struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	EmailAddress  string `json:"emailAddress"`
	MobileNumber  string `json:"mobileNumber,omitempty"`
	FirstName     string `json:"firstName"`
	LastName      string `json:"lastName"`
	Roles         []Role `json:"roles"`
	Invitations   []Role `json:"invitations,omitempty"`
	HA1           string `json:"ha1"`
	MonitoringHA1 string `json:"monitoringHa1,omitempty"` // the HA1 in the monitoring console's realm
	Created       Time   `json:"created"`
}

// UserView is a user as the API shows it: no password, no invitations.
type UserView struct {
	ID           string `json:"id"`
	Username     string `json:"username"`
	EmailAddress string `json:"emailAddress"`
	MobileNumber string `json:"mobileNumber,omitempty"`
	FirstName    string `json:"firstName"`
	LastName     string `json:"lastName"`
	Roles        []Role `json:"roles"`
}

// View is the user as the API shows it.
func (u User) View() UserView {
	return UserView{ID: u.ID, Username: u.Username, EmailAddress: u.EmailAddress, MobileNumber: u.MobileNumber,
		FirstName: u.FirstName, LastName: u.LastName, Roles: shownRoles(u.Roles)}
}

// Principal is the user acting from remote.
func (u User) Principal(remote string) Principal {
	return Principal{UserID: u.ID, Username: u.Username, Roles: u.Roles, RemoteAddress: remote}
}
