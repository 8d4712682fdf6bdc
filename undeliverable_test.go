package herald

import (
	"slices"
	"strings"
	"testing"
)

func TestUndeliverable(t *testing.T) {
	yes, no := true, false
	private := func(u string) bool { return strings.Contains(u, "127.0.0.1") || strings.Contains(u, "10.") }
	hook := func(url string) Notification {
		return Notification{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": url}}
	}
	tests := []struct {
		name  string
		setup DeliverySetup
		n     Notification
		want  []string // the settings named, in order
	}{
		{"email without mail", DeliverySetup{}, Notification{TypeName: "EMAIL", Fields: map[string]string{"emailAddress": "a@example.com"}}, []string{SettingMail}},
		{"email with mail", DeliverySetup{Mail: true}, Notification{TypeName: "EMAIL", Fields: map[string]string{"emailAddress": "a@example.com"}}, nil},
		{"SMS without a gateway", DeliverySetup{Mail: true}, Notification{TypeName: "SMS", Fields: map[string]string{"mobileNumber": "+15550100"}}, []string{SettingSMS}},
		{"people by email by default", DeliverySetup{SMS: true}, Notification{TypeName: "GROUP"}, []string{SettingMail}},
		{"people by both, neither configured", DeliverySetup{}, Notification{TypeName: "USER", EmailEnabled: &yes, SMSEnabled: &yes, Fields: map[string]string{"username": "u"}}, []string{SettingMail, SettingSMS}},
		{"people by text only, mail missing", DeliverySetup{SMS: true}, Notification{TypeName: "ORG", EmailEnabled: &no, SMSEnabled: &yes}, nil},
		{"admins: email only", DeliverySetup{SMS: true}, Notification{TypeName: "ADMIN"}, []string{SettingMail}},
		{"webhook to loopback, refused", DeliverySetup{}, hook("http://127.0.0.1:9/h"), []string{SettingPrivateTargets}},
		{"webhook to loopback, allowed", DeliverySetup{PrivateTargets: true}, hook("http://127.0.0.1:9/h"), nil},
		{"webhook to a public host", DeliverySetup{}, hook("https://hooks.example.com/h"), nil},
		{"chat to a private address", DeliverySetup{}, Notification{TypeName: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": "http://10.1.2.3/x"}}, []string{SettingPrivateTargets}},
		{"a service kind", DeliverySetup{}, Notification{TypeName: "PAGING", Fields: map[string]string{"serviceKey": "k"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.setup.Undeliverable(AlertRule{Notifications: []Notification{{TypeName: "PAGING"}, tt.n}}, private)
			var settings []string
			for _, u := range got {
				settings = append(settings, u.Setting)
				if u.Notification != 1 || u.TypeName != tt.n.TypeName || !strings.Contains(u.String(), u.Setting) {
					t.Errorf("%+v: not notification 1 of %s naming its setting", u, tt.n.TypeName)
				}
			}
			if !slices.Equal(settings, tt.want) {
				t.Errorf("settings %v, want %v", settings, tt.want)
			}
		})
	}
}
