package herald

import "fmt"

// DeliverySetup is what an installation is set up to deliver, as its operator configured the
// workers: a configuration may be accepted and still reach nobody (an email with no mail
// server, a webhook to a private address the workers refuse), and is then written with a
// warning naming the setting to change.
type DeliverySetup struct {
	Mail           bool // a mail server (HERALD_SMTP_ADDR): EMAIL, and people reached by email
	SMS            bool // an SMS gateway account (HERALD_SMS_ACCOUNT): SMS, and people reached by text
	PrivateTargets bool // webhooks and chat may reach private addresses (HERALD_ALLOW_PRIVATE_TARGETS)
}

// The settings that change what an installation delivers, as warnings name them.
const (
	SettingMail           = "HERALD_SMTP_ADDR"
	SettingSMS            = "HERALD_SMS_ACCOUNT"
	SettingPrivateTargets = "HERALD_ALLOW_PRIVATE_TARGETS"
)

// Undeliverable is a notification of a configuration that cannot be delivered as the
// installation is set up: why, and the setting that changes it.
type Undeliverable struct {
	Notification int    `json:"notification"` // its index in the configuration's notifications
	TypeName     string `json:"typeName"`
	Why          string `json:"why"`
	Setting      string `json:"setting"`
}

func (u Undeliverable) String() string {
	return fmt.Sprintf("notifications[%d] (%s): %s; set %s", u.Notification, u.TypeName, u.Why, u.Setting)
}

// Undeliverable lists the notifications of rule that the installation cannot deliver: an email
// (EMAIL, or people by email) without a mail server, a text message without an SMS gateway, a
// URL target (webhookUrl, chatCWebhookUrl) that private reports private while private targets
// are refused. private is asked only then; a URL the notification leaves to its project's
// integration is not checked.
func (d DeliverySetup) Undeliverable(rule AlertRule, private func(rawURL string) bool) []Undeliverable {
	var out []Undeliverable
	for i, n := range rule.Notifications {
		kind, ok := LookupKind(n.TypeName)
		if !ok {
			continue
		}
		add := func(why, setting string) {
			out = append(out, Undeliverable{Notification: i, TypeName: n.TypeName, Why: why, Setting: setting})
		}
		email, sms := kind.Name == "EMAIL", kind.Name == "SMS"
		if kind.People != nil {
			e, s := n.Means()
			email, sms = e && kind.People.Email, s && kind.People.SMS
		}
		if email && !d.Mail {
			add("no mail server is configured: nobody is emailed", SettingMail)
		}
		if sms && !d.SMS {
			add("no SMS gateway is configured: nobody gets a text message", SettingSMS)
		}
		if d.PrivateTargets || private == nil {
			continue
		}
		for _, f := range kind.Fields {
			if !f.URL {
				continue
			}
			if u := n.Field(f.Name); u != "" && private(u) {
				add(f.Name+" is a private, loopback or link-local address, which the workers refuse", SettingPrivateTargets)
			}
		}
	}
	return out
}
