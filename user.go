package herald

import (
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"
)

// UserInput is the body of a request that creates a user (document 16).
type UserInput struct {
	Username     *string `json:"username"`
	Password     *string `json:"password"`
	EmailAddress *string `json:"emailAddress"`
	MobileNumber *string `json:"mobileNumber"`
	FirstName    *string `json:"firstName"`
	LastName     *string `json:"lastName"`
	Roles        []Role  `json:"roles"`
}

// MinPasswordLength is the fewest characters a user's password may have.
const MinPasswordLength = 8

// Validate checks a new user's fields and sorts its roles: global roles are granted at once,
// organization and project roles become invitations, which give no access until accepted.
// Whether those organizations and projects exist is for the caller to check. It returns the
// user without ID, HA1 and Created, and the password to derive the HA1 from. No error names
// the password's value.
func (in UserInput) Validate() (User, string, error) {
	var u User
	for _, f := range []struct {
		name string
		v    *string
	}{{"username", in.Username}, {"password", in.Password}, {"emailAddress", in.EmailAddress},
		{"firstName", in.FirstName}, {"lastName", in.LastName}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			return u, "", MissingAttribute(f.name)
		}
	}
	if in.Roles == nil {
		return u, "", MissingAttribute("roles")
	}
	if !validUsername(*in.Username) {
		return u, "", InvalidAttribute("username", "A username is at most 256 printable ASCII characters, without spaces, quotes or backslashes.")
	}
	if utf8.RuneCountInString(*in.Password) < MinPasswordLength {
		return u, "", InvalidAttribute("password", "A password has at least %d characters.", MinPasswordLength)
	}
	if a, err := mail.ParseAddress(*in.EmailAddress); err != nil || a.Address != *in.EmailAddress {
		return u, "", InvalidAttribute("emailAddress", "%q is not an email address.", *in.EmailAddress)
	}
	if in.MobileNumber != nil && *in.MobileNumber != "" {
		if !phoneNumber.MatchString(*in.MobileNumber) {
			return u, "", InvalidAttribute("mobileNumber", "%q is not a phone number.", *in.MobileNumber)
		}
		u.MobileNumber = *in.MobileNumber
	}
	u.Username, u.EmailAddress = *in.Username, *in.EmailAddress
	u.FirstName, u.LastName = strings.TrimSpace(*in.FirstName), strings.TrimSpace(*in.LastName)
	seen := map[Role]bool{}
	for i, r := range in.Roles {
		if err := r.validate(i); err != nil {
			return u, "", err
		}
		if seen[r] {
			continue
		}
		seen[r] = true
		if r.OrgID == "" && r.GroupID == "" {
			u.Roles = append(u.Roles, r)
		} else {
			u.Invitations = append(u.Invitations, r)
		}
	}
	return u, *in.Password, nil
}

// validate checks role i of a user request: its name must be one of the scope it names.
func (r Role) validate(i int) error {
	var what string
	var names []string
	switch {
	case r.OrgID != "" && r.GroupID != "":
		return InvalidAttribute("roles", "Role %d names both an organization and a project; a role applies to one.", i)
	case r.GroupID != "":
		what, names = "project", ProjectRoles()
	case r.OrgID != "":
		what, names = "organization", OrgRoles()
	default:
		what, names = "global", GlobalRoles()
	}
	if !slices.Contains(names, r.RoleName) {
		return NotOneOf("roles", r.RoleName, names, "Role %d: %q is not a %s role.", i, r.RoleName, what)
	}
	return nil
}

// validUsername: a username goes into the quoted username of a digest Authorization header,
// so it keeps to the characters every client sends there unescaped.
func validUsername(s string) bool {
	if len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
