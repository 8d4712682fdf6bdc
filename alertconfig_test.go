package herald

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// validNotifications is one valid project notification of each typeName that takes typed
// fields, and the fields it requires.
var validNotifications = []struct {
	typeName string
	body     map[string]any
	required []string
	// integration supplies the required fields when the project has it ("" when none can).
	integration string
}{
	{"EMAIL", map[string]any{"emailAddress": "ops@example.com"}, []string{"emailAddress"}, ""},
	{"SMS", map[string]any{"mobileNumber": "+1 555 0100 200"}, []string{"mobileNumber"}, ""},
	{"USER", map[string]any{"username": "ada"}, []string{"username"}, ""},
	{"CHAT_A", map[string]any{"notificationToken": "chat-a-token-0001", "roomName": "ops"}, []string{"notificationToken", "roomName"}, "CHAT_A"},
	{"CHAT_B", map[string]any{"apiToken": "xoxb-chat-b-0002", "channelName": "#ops"}, []string{"apiToken", "channelName"}, "CHAT_B"},
	{"CHAT_C", map[string]any{"chatCWebhookUrl": "https://chat-c.example.com/hook/0003"}, []string{"chatCWebhookUrl"}, ""},
	{"PAGING", map[string]any{"serviceKey": "paging-key-0004"}, []string{"serviceKey"}, "PAGING"},
	{"METRICS_A", map[string]any{"metricsAApiKey": "metrics-a-key-0005"}, []string{"metricsAApiKey"}, "METRICS_A"},
	{"ALERTING_A", map[string]any{"alertingAApiKey": "alerting-a-key-0006"}, []string{"alertingAApiKey"}, "ALERTING_A"},
	{"ALERTING_B", map[string]any{"alertingBApiKey": "alerting-b-key-0007", "alertingBRoutingKey": "ops"}, []string{"alertingBApiKey", "alertingBRoutingKey"}, "ALERTING_B"},
	{"WEBHOOK", map[string]any{"webhookUrl": "https://hooks.example.com/0008"}, []string{"webhookUrl"}, "WEBHOOK"},
}

// notificationInput decodes a request's notification as the API does.
func notificationInput(t *testing.T, typeName string, fields map[string]any) NotificationInput {
	t.Helper()
	body := map[string]any{}
	maps.Copy(body, fields)
	if typeName != "" {
		body["typeName"] = typeName
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var in NotificationInput
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// wantError checks that err is an Error with code naming param.
func wantError(t *testing.T, err error, code, param string) {
	t.Helper()
	e := ErrorOf(err)
	if e == nil {
		t.Fatalf("error %v, want %s naming %s", err, code, param)
	}
	if e.Code != code || len(e.Parameters) == 0 || e.Parameters[0] != param {
		t.Fatalf("error %s %v (%s), want %s naming %s", e.Code, e.Parameters, e.Detail, code, param)
	}
}

// wantValidated checks what a Validate returned: the error naming code and param when code
// is set, else want.
func wantValidated[T any](t *testing.T, got T, err error, want *T, code, param string) {
	t.Helper()
	if code != "" {
		wantError(t, err, code, param)
		return
	}
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if !reflect.DeepEqual(got, *want) {
		t.Errorf("got %+v, want %+v", got, *want)
	}
}

// hasIntegration is a project's Integrations rule: it has integrations of types.
func hasIntegration(types ...string) func(string) bool {
	return func(t string) bool { return slices.Contains(types, t) }
}

func TestNotificationRequiredFields(t *testing.T) {
	for _, tc := range validNotifications {
		t.Run(tc.typeName, func(t *testing.T) {
			n, err := notificationInput(t, tc.typeName, tc.body).Validate("notifications[0]", NotificationRules{})
			if err != nil {
				t.Fatalf("valid notification refused: %v", err)
			}
			if n.TypeName != tc.typeName || n.DelayMin != DefaultDelayMin || n.IntervalMin != DefaultIntervalMin {
				t.Errorf("got %+v, want typeName %s and the default delay and interval", n, tc.typeName)
			}
			for _, f := range tc.required {
				without := maps.Clone(tc.body)
				delete(without, f)
				_, err := notificationInput(t, tc.typeName, without).Validate("notifications[0]", NotificationRules{})
				wantError(t, err, CodeMissingAttribute, "notifications[0]."+f)

				// Empty or blank is as good as absent.
				without[f] = "  "
				_, err = notificationInput(t, tc.typeName, without).Validate("notifications[0]", NotificationRules{})
				wantError(t, err, CodeMissingAttribute, "notifications[0]."+f)

				// The project's integration of the kind supplies it; another kind's does not.
				delete(without, f)
				_, err = notificationInput(t, tc.typeName, without).Validate("notifications[0]",
					NotificationRules{Integrations: hasIntegration(tc.integration)})
				if tc.integration == "" {
					wantError(t, err, CodeMissingAttribute, "notifications[0]."+f)
				} else if err != nil {
					t.Errorf("without %s but with a %s integration: %v", f, tc.integration, err)
				}
				if tc.integration != "" {
					_, err = notificationInput(t, tc.typeName, without).Validate("notifications[0]",
						NotificationRules{Integrations: hasIntegration("SCRAPER_A")})
					wantError(t, err, CodeMissingAttribute, "notifications[0]."+f)
				}
			}
			// Every other kind's field is refused, named.
			for _, other := range validNotifications {
				if other.typeName == tc.typeName {
					continue
				}
				for f, v := range other.body {
					if _, own := tc.body[f]; own {
						continue
					}
					with := maps.Clone(tc.body)
					with[f] = v
					_, err := notificationInput(t, tc.typeName, with).Validate("notifications[2]", NotificationRules{})
					wantError(t, err, CodeInvalidAttribute, "notifications[2]."+f)
				}
			}
		})
	}
}

func TestNotificationValidate(t *testing.T) {
	yes, no := true, false
	type fields = map[string]any
	for _, tc := range []struct {
		name     string
		typeName string
		fields   fields
		rules    NotificationRules
		want     *Notification // nil: compare nothing but the absence of an error
		code     string        // the error's code ("" for success)
		param    string
	}{
		{name: "no typeName", fields: fields{"emailAddress": "a@example.com"}, code: CodeMissingAttribute, param: "n.typeName"},
		{name: "unknown typeName", typeName: "PIGEON", code: CodeInvalidEnumValue, param: "n.typeName"},
		{name: "typeName in lower case", typeName: "email", fields: fields{"emailAddress": "a@example.com"}, code: CodeInvalidEnumValue, param: "n.typeName"},
		{name: "CHATA is the global spelling", typeName: "CHATA", fields: fields{"notificationToken": "t", "roomName": "r"}, code: CodeInvalidEnumValue, param: "n.typeName"},
		{name: "ADMIN is global only", typeName: "ADMIN", code: CodeInvalidEnumValue, param: "n.typeName"},
		{name: "global ADMIN: by email", typeName: "ADMIN", rules: NotificationRules{Global: true},
			want: &Notification{TypeName: "ADMIN", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no}},
		{name: "global ADMIN by SMS", typeName: "ADMIN", fields: fields{"smsEnabled": true}, rules: NotificationRules{Global: true},
			code: CodeInvalidAttribute, param: "n.smsEnabled"},
		{name: "global ADMIN reaching nobody", typeName: "ADMIN", fields: fields{"emailEnabled": false}, rules: NotificationRules{Global: true},
			code: CodeInvalidAttribute, param: "n.emailEnabled"},
		{name: "global CHATA", typeName: "CHATA", fields: fields{"notificationToken": "tok", "roomName": "ops"}, rules: NotificationRules{Global: true},
			want: &Notification{TypeName: "CHATA", IntervalMin: 60, Fields: map[string]string{"notificationToken": "tok", "roomName": "ops"}}},
		{name: "global CHAT_A", typeName: "CHAT_A", fields: fields{"notificationToken": "t", "roomName": "r"}, rules: NotificationRules{Global: true}, code: CodeInvalidEnumValue, param: "n.typeName"},
		{name: "global METRICS_A", typeName: "METRICS_A", fields: fields{"metricsAApiKey": "k"}, rules: NotificationRules{Global: true}, code: CodeInvalidEnumValue, param: "n.typeName"},

		{name: "delay and interval", typeName: "EMAIL", fields: fields{"emailAddress": " ops@example.com ", "delayMin": 15, "intervalMin": 5},
			want: &Notification{TypeName: "EMAIL", DelayMin: 15, IntervalMin: 5, Fields: map[string]string{"emailAddress": "ops@example.com"}}},
		{name: "intervalMin 4", typeName: "EMAIL", fields: fields{"emailAddress": "a@example.com", "intervalMin": 4}, code: CodeNotificationIntervalRange, param: "n.intervalMin"},
		{name: "intervalMin 0", typeName: "EMAIL", fields: fields{"emailAddress": "a@example.com", "intervalMin": 0}, code: CodeNotificationIntervalRange, param: "n.intervalMin"},
		{name: "negative delayMin", typeName: "EMAIL", fields: fields{"emailAddress": "a@example.com", "delayMin": -1}, code: CodeInvalidAttribute, param: "n.delayMin"},

		{name: "not an email address", typeName: "EMAIL", fields: fields{"emailAddress": "ops at example"}, code: CodeInvalidAttribute, param: "n.emailAddress"},
		{name: "an address with a display name", typeName: "EMAIL", fields: fields{"emailAddress": "Ops <ops@example.com>"}, code: CodeInvalidAttribute, param: "n.emailAddress"},
		{name: "not a phone number", typeName: "SMS", fields: fields{"mobileNumber": "call me"}, code: CodeInvalidAttribute, param: "n.mobileNumber"},
		{name: "webhook URL not http", typeName: "WEBHOOK", fields: fields{"webhookUrl": "ftp://hooks.example.com/x"}, code: CodeInvalidAttribute, param: "n.webhookUrl"},
		{name: "chat C URL without host", typeName: "CHAT_C", fields: fields{"chatCWebhookUrl": "https:///x"}, code: CodeInvalidAttribute, param: "n.chatCWebhookUrl"},
		{name: "webhook with secret", typeName: "WEBHOOK", fields: fields{"webhookUrl": "https://hooks.example.com/x", "webhookSecret": "s3cret"},
			want: &Notification{TypeName: "WEBHOOK", IntervalMin: 60, Fields: map[string]string{"webhookUrl": "https://hooks.example.com/x", "webhookSecret": "s3cret"}}},

		{name: "ALERTING_A region defaults to US", typeName: "ALERTING_A", fields: fields{"alertingAApiKey": "key"},
			want: &Notification{TypeName: "ALERTING_A", IntervalMin: 60, Fields: map[string]string{"alertingAApiKey": "key", "alertingARegion": "US"}}},
		{name: "ALERTING_A in the EU", typeName: "ALERTING_A", fields: fields{"alertingAApiKey": "key", "alertingARegion": "EU"},
			want: &Notification{TypeName: "ALERTING_A", IntervalMin: 60, Fields: map[string]string{"alertingAApiKey": "key", "alertingARegion": "EU"}}},
		{name: "ALERTING_A elsewhere", typeName: "ALERTING_A", fields: fields{"alertingAApiKey": "key", "alertingARegion": "AP"}, code: CodeInvalidEnumValue, param: "n.alertingARegion"},

		{name: "GROUP tells by email by default", typeName: "GROUP", fields: fields{"role": "GROUP_OWNER"},
			want: &Notification{TypeName: "GROUP", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no, Roles: []string{"GROUP_OWNER"}}},
		{name: "GROUP roles read back", typeName: "GROUP", fields: fields{"roles": []string{"GROUP_OWNER", "GROUP_READ_ONLY", "GROUP_OWNER"}, "smsEnabled": true},
			want: &Notification{TypeName: "GROUP", IntervalMin: 60, EmailEnabled: &no, SMSEnabled: &yes, Roles: []string{"GROUP_OWNER", "GROUP_READ_ONLY"}}},
		{name: "USER by email and text", typeName: "USER", fields: fields{"username": "ada", "emailEnabled": true, "smsEnabled": true},
			want: &Notification{TypeName: "USER", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &yes, Fields: map[string]string{"username": "ada"}}},
		{name: "GROUP without a role", typeName: "GROUP", want: &Notification{TypeName: "GROUP", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no}},
		{name: "GROUP told by neither", typeName: "GROUP", fields: fields{"emailEnabled": false, "smsEnabled": false}, code: CodeInvalidAttribute, param: "n.emailEnabled"},
		{name: "GROUP with an org role", typeName: "GROUP", fields: fields{"role": "ORG_OWNER"}, code: CodeInvalidEnumValue, param: "n.role"},
		{name: "ORG with an org role", typeName: "ORG", fields: fields{"role": "ORG_MEMBER"},
			want: &Notification{TypeName: "ORG", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no, Roles: []string{"ORG_MEMBER"}}},
		{name: "ORG with a project role", typeName: "ORG", fields: fields{"role": "GROUP_OWNER"}, code: CodeInvalidEnumValue, param: "n.role"},
		{name: "USER takes no role", typeName: "USER", fields: fields{"username": "ada", "role": "GROUP_OWNER"}, code: CodeInvalidAttribute, param: "n.role"},
		{name: "global GROUP takes no role", typeName: "GROUP", fields: fields{"role": "GROUP_OWNER"}, rules: NotificationRules{Global: true}, code: CodeInvalidAttribute, param: "n.role"},
		{name: "EMAIL takes no emailEnabled", typeName: "EMAIL", fields: fields{"emailAddress": "a@example.com", "emailEnabled": true}, code: CodeInvalidAttribute, param: "n.emailEnabled"},
		{name: "PAGING takes no smsEnabled", typeName: "PAGING", fields: fields{"serviceKey": "k", "smsEnabled": false}, code: CodeInvalidAttribute, param: "n.smsEnabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := notificationInput(t, tc.typeName, tc.fields).Validate("n", tc.rules)
			wantValidated(t, n, err, tc.want, tc.code, tc.param)
		})
	}
}

func TestNotificationMasked(t *testing.T) {
	n := Notification{TypeName: "X", Fields: map[string]string{"emailAddress": "ops@example.com", "mobileNumber": "+15550100", "username": "ada", "apiToken": "api-token-1111", "channelName": "#ops", "notificationToken": "notif-token-2222", "roomName": "ops", "metricsAApiKey": "metrics-key-3333", "serviceKey": "service-key-4444", "alertingAApiKey": "alerting-a-5555", "alertingARegion": "EU", "alertingBApiKey": "alerting-b-6666", "alertingBRoutingKey": "route", "chatCWebhookUrl": "https://chat-c.example.com/hook/7777", "webhookUrl": "https://hooks.example.com/8888?t=1", "webhookSecret": "webhook-secret-9999"}}
	want := n
	want.Fields = maps.Clone(n.Fields)
	maps.Copy(want.Fields, map[string]string{"apiToken": "**********1111", "notificationToken": "************2222",
		"metricsAApiKey": "************3333", "serviceKey": "************4444", "alertingAApiKey": "***********5555",
		"alertingBApiKey": "***********6666", "chatCWebhookUrl": "https://chat-c.example.com/*********",
		"webhookUrl": "https://hooks.example.com/********", "webhookSecret": "******"})
	if got := n.Masked(); !reflect.DeepEqual(got, want) {
		t.Errorf("Masked:\n got %+v\nwant %+v", got, want)
	}
	rule := AlertRule{Notifications: []Notification{n}}
	if got := rule.Masked().Notifications[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("AlertRule.Masked: %+v", got)
	}
	if !reflect.DeepEqual(rule.Notifications[0], n) {
		t.Errorf("AlertRule.Masked changed the rule it masks")
	}
}

// ruleInput decodes a request's rule as the API does.
func ruleInput(t *testing.T, body string) AlertRuleInput {
	t.Helper()
	var in AlertRuleInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return in
}

func TestAlertRuleValidate(t *testing.T) {
	const email = `"notifications":[{"typeName":"EMAIL","emailAddress":"ops@example.com"}]`
	emailOnly := []Notification{{TypeName: "EMAIL", IntervalMin: 60, Fields: map[string]string{"emailAddress": "ops@example.com"}}}
	for _, tc := range []struct {
		name  string
		body  string
		want  *AlertRule
		code  string
		param string
	}{
		{name: "smallest", body: `{"eventTypeName":"HOST_DOWN",` + email + `}`,
			want: &AlertRule{EventTypeName: "HOST_DOWN", Matchers: []Matcher{}, Notifications: emailOnly}},
		{name: "enabled", body: `{"enabled":true,"eventTypeName":"HOST_DOWN",` + email + `}`,
			want: &AlertRule{Enabled: true, EventTypeName: "HOST_DOWN", Matchers: []Matcher{}, Notifications: emailOnly}},
		{name: "no eventTypeName", body: `{` + email + `}`, code: CodeMissingAttribute, param: "eventTypeName"},
		{name: "unknown eventTypeName", body: `{"eventTypeName":"HOST_ON_FIRE",` + email + `}`, code: CodeInvalidEnumValue, param: "eventTypeName"},
		{name: "no notifications", body: `{"eventTypeName":"HOST_DOWN"}`, code: CodeMissingNotifications, param: "notifications"},
		{name: "empty notifications", body: `{"eventTypeName":"HOST_DOWN","notifications":[]}`, code: CodeMissingNotifications, param: "notifications"},
		{name: "the bad notification is named by its index", body: `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"EMAIL","emailAddress":"a@example.com"},{"typeName":"SMS"}]}`,
			code: CodeMissingAttribute, param: "notifications[1].mobileNumber"},

		{name: "host matchers", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"STARTS_WITH","value":"db-"},{"field":"TYPE_NAME","operator":"EQUALS","value":"PRIMARY"}],` + email + `}`,
			want: &AlertRule{EventTypeName: "HOST_DOWN", Matchers: []Matcher{{"HOSTNAME", "STARTS_WITH", "db-"}, {"TYPE_NAME", "EQUALS", "PRIMARY"}}, Notifications: emailOnly}},
		{name: "a cluster field on a host type", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"CLUSTER_NAME","operator":"EQUALS","value":"c"}],` + email + `}`,
			code: CodeInvalidEnumValue, param: "matchers[0].fieldName"},
		{name: "a cluster field on a replica set type", body: `{"eventTypeName":"NO_PRIMARY","matchers":[{"fieldName":"CLUSTER_NAME","operator":"EQUALS","value":"c"}],` + email + `}`,
			want: &AlertRule{EventTypeName: "NO_PRIMARY", Matchers: []Matcher{{"CLUSTER_NAME", "EQUALS", "c"}}, Notifications: emailOnly}},
		{name: "a host field on a cluster type", body: `{"eventTypeName":"SHARDED_CLUSTER","matchers":[{"fieldName":"HOSTNAME","operator":"EQUALS","value":"h"}],` + email + `}`,
			code: CodeInvalidEnumValue, param: "matchers[0].fieldName"},
		{name: "matchers on an agent type", body: `{"eventTypeName":"MONITORING_AGENT_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"EQUALS","value":"h"}],` + email + `}`,
			code: CodeInvalidAttribute, param: "matchers"},
		{name: "no matchers on an agent type", body: `{"eventTypeName":"MONITORING_AGENT_DOWN","matchers":[],` + email + `}`,
			want: &AlertRule{EventTypeName: "MONITORING_AGENT_DOWN", Matchers: []Matcher{}, Notifications: emailOnly}},
		{name: "matcher without field", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"operator":"EQUALS","value":"h"}],` + email + `}`,
			code: CodeMissingAttribute, param: "matchers[0].fieldName"},
		{name: "matcher without operator", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","value":"h"}],` + email + `}`,
			code: CodeMissingAttribute, param: "matchers[0].operator"},
		{name: "unknown operator", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"LIKE","value":"h"}],` + email + `}`,
			code: CodeInvalidEnumValue, param: "matchers[0].operator"},
		{name: "matcher without value", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"EQUALS"}],` + email + `}`,
			code: CodeMissingAttribute, param: "matchers[0].value"},
		{name: "bad regex", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"REGEX","value":"db-(["}],` + email + `}`,
			code: CodeInvalidAttribute, param: "matchers[0].value"},
		{name: "good regex", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"REGEX","value":"^db-[0-9]+$"}],` + email + `}`,
			want: &AlertRule{EventTypeName: "HOST_DOWN", Matchers: []Matcher{{"HOSTNAME", "REGEX", "^db-[0-9]+$"}}, Notifications: emailOnly}},
		{name: "unknown TYPE_NAME", body: `{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"TYPE_NAME","operator":"EQUALS","value":"LEADER"}],` + email + `}`,
			code: CodeInvalidEnumValue, param: "matchers[0].value"},

		{name: "metric threshold with defaults", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"MEMORY_RESIDENT","operator":"GREATER_THAN","threshold":2},` + email + `}`,
			want: &AlertRule{EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Matchers: []Matcher{}, Notifications: emailOnly,
				MetricThreshold: &MetricThreshold{MetricName: "MEMORY_RESIDENT", Mode: "AVERAGE", Operator: "GREATER_THAN", Threshold: 2, Units: "BYTES"}}},
		{name: "metric threshold in gigabytes", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"MEMORY_RESIDENT","mode":"AVERAGE","operator":"LESS_THAN","threshold":2,"units":"GIGABYTES"},` + email + `}`,
			want: &AlertRule{EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Matchers: []Matcher{}, Notifications: emailOnly,
				MetricThreshold: &MetricThreshold{MetricName: "MEMORY_RESIDENT", Mode: "AVERAGE", Operator: "LESS_THAN", Threshold: 2, Units: "GIGABYTES"}}},
		{name: "memory in seconds", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"MEMORY_RESIDENT","operator":"GREATER_THAN","threshold":2,"units":"SECONDS"},` + email + `}`,
			code: CodeInvalidAttribute, param: "metricThreshold.units"},
		{name: "unknown units", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"MEMORY_RESIDENT","operator":"GREATER_THAN","threshold":2,"units":"FURLONGS"},` + email + `}`,
			code: CodeInvalidEnumValue, param: "metricThreshold.units"},
		{name: "unknown metric", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"HAPPINESS","operator":"GREATER_THAN","threshold":2},` + email + `}`,
			code: CodeInvalidEnumValue, param: "metricThreshold.metricName"},
		{name: "no metric", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"operator":"GREATER_THAN","threshold":2},` + email + `}`,
			code: CodeMissingAttribute, param: "metricThreshold.metricName"},
		{name: "no metric operator", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"CONNECTIONS","threshold":2},` + email + `}`,
			code: CodeMissingAttribute, param: "metricThreshold.operator"},
		{name: "bad metric operator", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"CONNECTIONS","operator":"ABOVE","threshold":2},` + email + `}`,
			code: CodeInvalidEnumValue, param: "metricThreshold.operator"},
		{name: "mode other than AVERAGE", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"CONNECTIONS","mode":"MAX","operator":"GREATER_THAN","threshold":2},` + email + `}`,
			code: CodeInvalidEnumValue, param: "metricThreshold.mode"},
		{name: "no metric threshold", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD",` + email + `}`, code: CodeMissingAttribute, param: "metricThreshold"},
		{name: "threshold instead of metric threshold", body: `{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","threshold":{"operator":"GREATER_THAN","threshold":1},` + email + `}`,
			code: CodeInvalidAttribute, param: "threshold"},
		{name: "metric threshold on another type", body: `{"eventTypeName":"HOST_DOWN","metricThreshold":{"metricName":"CONNECTIONS","operator":"GREATER_THAN","threshold":2},` + email + `}`,
			code: CodeInvalidAttribute, param: "metricThreshold"},

		{name: "threshold", body: `{"eventTypeName":"TOO_FEW_HEALTHY_MEMBERS","threshold":{"operator":"LESS_THAN","threshold":2},` + email + `}`,
			want: &AlertRule{EventTypeName: "TOO_FEW_HEALTHY_MEMBERS", Matchers: []Matcher{}, Notifications: emailOnly, Threshold: &Threshold{Operator: "LESS_THAN", Threshold: 2}}},
		{name: "thresholded type without threshold", body: `{"eventTypeName":"TOO_MANY_UNHEALTHY_MEMBERS",` + email + `}`, code: CodeMissingAttribute, param: "threshold"},
		{name: "threshold without operator", body: `{"eventTypeName":"TOO_MANY_ELECTIONS","threshold":{"threshold":3},` + email + `}`, code: CodeMissingAttribute, param: "threshold.operator"},
		{name: "bad threshold operator", body: `{"eventTypeName":"TOO_MANY_ELECTIONS","threshold":{"operator":"ABOVE","threshold":3},` + email + `}`, code: CodeInvalidEnumValue, param: "threshold.operator"},
		{name: "bad threshold units", body: `{"eventTypeName":"TOO_MANY_ELECTIONS","threshold":{"operator":"GREATER_THAN","threshold":3,"units":"FURLONGS"},` + email + `}`, code: CodeInvalidEnumValue, param: "threshold.units"},
		{name: "threshold on a type without one", body: `{"eventTypeName":"HOST_DOWN","threshold":{"operator":"GREATER_THAN","threshold":3},` + email + `}`, code: CodeInvalidAttribute, param: "threshold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ruleInput(t, tc.body).Validate(NotificationRules{})
			wantValidated(t, r, err, tc.want, tc.code, tc.param)
		})
	}
}

// TestAlertRuleKeepsMaskedSecrets: a configuration read (secrets masked), edited and written
// back keeps the secrets it has; a mask that stands for no stored secret is refused.
func TestAlertRuleKeepsMaskedSecrets(t *testing.T) {
	current := []Notification{
		{TypeName: "PAGING", Fields: map[string]string{"serviceKey": "paging-key-aaaa"}},
		{TypeName: "PAGING", Fields: map[string]string{"serviceKey": "paging-key-bbbb"}},
		{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://hooks.example.com/T0/secret", "webhookSecret": "hmac-key"}},
		{TypeName: "CHAT_B", Fields: map[string]string{"apiToken": "xoxb-token-cccc", "channelName": "#ops"}},
		{TypeName: "CHAT_A", Fields: map[string]string{"notificationToken": "chat-a-token-dddd", "roomName": "ops"}},
		{TypeName: "METRICS_A", Fields: map[string]string{"metricsAApiKey": "metrics-key-eeee"}},
		{TypeName: "ALERTING_A", Fields: map[string]string{"alertingAApiKey": "alerting-a-ffff", "alertingARegion": "US"}},
		{TypeName: "ALERTING_B", Fields: map[string]string{"alertingBApiKey": "alerting-b-gggg", "alertingBRoutingKey": "ops"}},
		{TypeName: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": "https://chat-c.example.com/hook/hhhh"}},
	}
	for i := range current {
		current[i].IntervalMin = DefaultIntervalMin
	}
	read := AlertRule{Notifications: current}.Masked()
	body, err := json.Marshal(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": read.Notifications})
	if err != nil {
		t.Fatal(err)
	}
	validate := func(body string, current []Notification) (AlertRule, error) {
		return ruleInput(t, body).Validate(NotificationRules{Current: current})
	}

	t.Run("written back as read", func(t *testing.T) {
		r, err := validate(string(body), current)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Notifications, current) {
			t.Errorf("got %+v, want %+v", r.Notifications, current)
		}
	})
	t.Run("moved", func(t *testing.T) {
		// The first paging notification removed: the second keeps its own key, not the first's.
		r, err := validate(`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"PAGING","serviceKey":"`+MaskTail("paging-key-bbbb")+`"}]}`, current)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Notifications[0].Field("serviceKey"); got != "paging-key-bbbb" {
			t.Errorf("serviceKey %q, want paging-key-bbbb", got)
		}
	})
	t.Run("a webhook moved on its host keeps its secret", func(t *testing.T) {
		r, err := validate(`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://HOOKS.example.com/T1/other","webhookSecret":"******"}]}`, current)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Notifications[0]; got.Field("webhookSecret") != "hmac-key" || got.Field("webhookUrl") != "https://HOOKS.example.com/T1/other" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("a webhook moved to another host with a new secret", func(t *testing.T) {
		r, err := validate(`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://new.example.com/h","webhookSecret":"new-hmac-key"}]}`, current)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Notifications[0]; got.Field("webhookSecret") != "new-hmac-key" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("a new secret replaces the stored one", func(t *testing.T) {
		r, err := validate(`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"PAGING","serviceKey":"paging-key-new1"}]}`, current)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Notifications[0].Field("serviceKey"); got != "paging-key-new1" {
			t.Errorf("serviceKey %q, want paging-key-new1", got)
		}
	})
	for _, tc := range []struct {
		name, body string
		current    []Notification
		param      string
	}{
		{"a mask on create", string(body), nil, "notifications[0].serviceKey"},
		{"a mask of another secret", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"PAGING","serviceKey":"*******zzzz"}]}`, current, "notifications[0].serviceKey"},
		{"a mask of another type's secret", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"METRICS_A","metricsAApiKey":"` + MaskTail("paging-key-aaaa") + `"}]}`, current, "notifications[0].metricsAApiKey"},
		{"a masked webhook URL of another host", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://evil.example.com/*********"}]}`, current, "notifications[0].webhookUrl"},
		{"a masked webhook secret with its URL moved to another host", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://evil.example.com/T0/secret","webhookSecret":"******"}]}`,
			current, "notifications[0].webhookSecret"},
		{"a masked webhook secret with its URL moved to another port", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://hooks.example.com:8443/T0/secret","webhookSecret":"******"}]}`,
			current, "notifications[0].webhookSecret"},
		{"a masked webhook secret where none is stored", `{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"https://hooks.example.com/x","webhookSecret":"******"}]}`,
			[]Notification{{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://hooks.example.com/x"}}}, "notifications[0].webhookSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validate(tc.body, tc.current)
			wantError(t, err, CodeInvalidAttribute, tc.param)
		})
	}
}
