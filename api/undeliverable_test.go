package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// undeliverableEvents are the project's ALERT_CONFIG_UNDELIVERABLE_AUDIT events, raw, by
// configuration id.
func undeliverableEvents(e *env, project string) map[string][]any {
	out := map[string][]any{}
	for _, ev := range e.Owner.do("GET", "/groups/"+project+"/events?eventType="+herald.EventAlertConfigUndeliverable, nil).wantStatus(200).results() {
		out[ev["alertConfigId"].(string)], _ = ev["undeliverable"].([]any)
	}
	return out
}

// A configuration the installation cannot deliver as set up is written all the same, with an
// event and a warning in the log naming the setting to change: a new project's default
// configurations without a mail server, a webhook to a private address while private targets
// are refused, a text message without an SMS gateway. No secret of the notification shows.
func TestUndeliverableConfigurationIsWrittenWithAWarning(t *testing.T) {
	e := newEnvWith(t, api.Config{Delivery: &herald.DeliverySetup{}})
	project := e.project(e.org("acme"), "prod")
	defaults := undeliverableEvents(e, project)
	if len(defaults) != len(herald.DefaultAlertConfigs()) {
		t.Fatalf("%d warning events for the %d default configurations", len(defaults), len(herald.DefaultAlertConfigs()))
	}
	for id, us := range defaults {
		if len(us) != 1 || us[0].(map[string]any)["setting"] != herald.SettingMail {
			t.Errorf("default configuration %s: warnings %v, want one naming %s", id, us, herald.SettingMail)
		}
	}
	if n := strings.Count(e.Logs(), "notifications that reach nobody"); n != 1 {
		t.Errorf("%d warning lines for a new project, want 1:\n%s", n, e.Logs())
	}

	for _, c := range []struct {
		notification map[string]any
		setting      string
	}{
		{map[string]any{"typeName": "WEBHOOK", "webhookUrl": "http://127.0.0.1:9/hook?token=url-secret", "webhookSecret": "signing-secret"}, herald.SettingPrivateTargets},
		{map[string]any{"typeName": "WEBHOOK", "webhookUrl": "http://localhost:9/hook"}, herald.SettingPrivateTargets},
		{map[string]any{"typeName": "SMS", "mobileNumber": "+15550100"}, herald.SettingSMS},
	} {
		c.notification["delayMin"], c.notification["intervalMin"] = 0, 5
		id := e.Owner.do("POST", "/groups/"+project+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
			"notifications": []any{c.notification}}).wantStatus(201).str("id")
		us := undeliverableEvents(e, project)[id]
		if len(us) != 1 || us[0].(map[string]any)["setting"] != c.setting {
			t.Errorf("%v: warnings %v, want one naming %s", c.notification, us, c.setting)
		}
		if !strings.Contains(e.Logs(), fmt.Sprintf("%q", id)) || !strings.Contains(e.Logs(), c.setting) {
			t.Errorf("%v: no warning naming configuration %s and %s in the log:\n%s", c.notification, id, c.setting, e.Logs())
		}
	}
	for _, secret := range []string{"url-secret", "signing-secret"} {
		if strings.Contains(e.Logs(), secret) {
			t.Errorf("a secret (%s) in the log", secret)
		}
	}

	// A global configuration too, in the global events.
	global := e.Owner.do("POST", "/globalAlertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "forAllGroups": true,
		"notifications": []any{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com", "delayMin": 0, "intervalMin": 5}}}).wantStatus(201).str("id")
	evs := e.Owner.do("GET", "/globalEvents?eventType="+herald.EventAlertConfigUndeliverable, nil).wantStatus(200).results()
	if len(evs) != 1 || evs[0]["alertConfigId"] != global {
		t.Errorf("global configuration %s: warning events %v", global, evs)
	}

	// Disabled, a configuration reaches nobody anyway: enabling it warns.
	id := e.Owner.do("POST", "/groups/"+project+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": false,
		"notifications": []any{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com", "delayMin": 0, "intervalMin": 5}}}).wantStatus(201).str("id")
	if us := undeliverableEvents(e, project)[id]; us != nil {
		t.Errorf("a disabled configuration warned: %v", us)
	}
	e.Owner.do("PATCH", "/groups/"+project+"/alertConfigs/"+id, map[string]any{"enabled": true}).wantStatus(200)
	if us := undeliverableEvents(e, project)[id]; len(us) != 1 {
		t.Errorf("enabling an email configuration without mail: warnings %v", us)
	}
}

// An installation set up for all of it warns of nothing.
func TestDeliverableConfigurationHasNoWarning(t *testing.T) {
	e := newEnvWith(t, api.Config{Delivery: &herald.DeliverySetup{Mail: true, SMS: true, PrivateTargets: true}})
	project := e.project(e.org("acme"), "prod")
	e.Owner.do("POST", "/groups/"+project+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": "http://127.0.0.1:9/hook", "delayMin": 0, "intervalMin": 5}}}).wantStatus(201)
	if got := undeliverableEvents(e, project); len(got) != 0 {
		t.Errorf("warnings %v", got)
	}
	if strings.Contains(e.Logs(), "reach nobody") {
		t.Errorf("a warning in the log:\n%s", e.Logs())
	}
}
