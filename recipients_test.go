package herald

import "testing"

// Why a notice that fans out reached nobody names whom its notification names and what they
// lack, by its means.
func TestNobodyReached(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		n    Notification
		want string
	}{
		{Notification{TypeName: "GROUP", Roles: []string{GroupOwner}, EmailEnabled: &yes, SMSEnabled: &no},
			"no member of the project holding GROUP_OWNER has an email address"},
		{Notification{TypeName: "GROUP", EmailEnabled: &no, SMSEnabled: &yes}, "no member of the project has a mobile number"},
		{Notification{TypeName: "ORG", Roles: []string{OrgOwner, "ORG_READ_ONLY"}, EmailEnabled: &yes, SMSEnabled: &yes},
			"no member of the organization holding ORG_OWNER or ORG_READ_ONLY has an email address or a mobile number"},
		{Notification{TypeName: "USER", Fields: map[string]string{"username": "ann"}}, "no member of the project named ann has an email address"},
		{Notification{TypeName: "ADMIN"}, "no global owner has an email address"},
	} {
		if got := tc.n.NobodyReached(); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.n.TypeName, tc.n.Roles, got, tc.want)
		}
	}
}
