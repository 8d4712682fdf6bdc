package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// configFields are the fields of every alert configuration a read shows.
var configFields = []string{"id", "groupId", "created", "updated", "enabled", "eventTypeName", "matchers", "notifications", "links"}

// The secrets of secretConfig, as a request gives them.
const (
	chatBToken     = "xoxb-chat-b-token-1001"
	chatAToken     = "chat-a-room-token-1002"
	metricsAKey    = "metrics-a-api-key-1003"
	pagingKey      = "paging-service-key-1004"
	alertingAKey   = "alerting-a-api-key-1005"
	alertingBKey   = "alerting-b-api-key-1006"
	chatCURL       = "https://chat-c.example.com/webhookb2/tok-1007?sig=s1"
	webhookURL     = "https://user:pw-1008@hooks.example.com/hook/tok-1009"
	webhookSecret  = "hmac-webhook-secret-1010"
	chatCHost      = "https://chat-c.example.com"
	webhookURLHost = "https://hooks.example.com"
)

var configSecrets = []string{chatBToken, chatAToken, metricsAKey, pagingKey, alertingAKey, alertingBKey, webhookSecret,
	"tok-1007", "sig=s1", "pw-1008", "tok-1009"}

// tailMasked is s as the document masks keys: the last 4 characters behind asterisks.
func tailMasked(s string) string { return strings.Repeat("*", len(s)-4) + s[len(s)-4:] }

// urlMasked is url as the document masks webhook URLs: scheme and host, the rest asterisks.
func urlMasked(url, schemeAndHost string) string {
	return schemeAndHost + "/" + strings.Repeat("*", len(url)-len(schemeAndHost)-1)
}

// secretConfig is a request for a configuration with a notification of every kind that has
// a secret, matchers and a metric threshold.
func secretConfig() map[string]any {
	return map[string]any{
		"enabled":         true,
		"eventTypeName":   "OUTSIDE_METRIC_THRESHOLD",
		"matchers":        []any{map[string]any{"fieldName": "HOSTNAME", "operator": "STARTS_WITH", "value": "db-"}},
		"metricThreshold": map[string]any{"metricName": "MEMORY_RESIDENT", "mode": "AVERAGE", "operator": "GREATER_THAN", "threshold": 2, "units": "GIGABYTES"},
		"notifications": []any{
			map[string]any{"typeName": "CHAT_B", "apiToken": chatBToken, "channelName": "#ops", "delayMin": 5, "intervalMin": 10},
			map[string]any{"typeName": "CHAT_A", "notificationToken": chatAToken, "roomName": "ops"},
			map[string]any{"typeName": "METRICS_A", "metricsAApiKey": metricsAKey},
			map[string]any{"typeName": "PAGING", "serviceKey": pagingKey},
			map[string]any{"typeName": "ALERTING_A", "alertingAApiKey": alertingAKey, "alertingARegion": "EU"},
			map[string]any{"typeName": "ALERTING_B", "alertingBApiKey": alertingBKey, "alertingBRoutingKey": "db-team"},
			map[string]any{"typeName": "CHAT_C", "chatCWebhookUrl": chatCURL},
			map[string]any{"typeName": "WEBHOOK", "webhookUrl": webhookURL, "webhookSecret": webhookSecret},
			map[string]any{"typeName": "GROUP", "role": "GROUP_OWNER", "smsEnabled": true},
		},
	}
}

// secretConfigRead is how a read shows the notifications of secretConfig.
func secretConfigRead() []any {
	return []any{
		map[string]any{"typeName": "CHAT_B", "apiToken": tailMasked(chatBToken), "channelName": "#ops", "delayMin": 5.0, "intervalMin": 10.0},
		map[string]any{"typeName": "CHAT_A", "notificationToken": tailMasked(chatAToken), "roomName": "ops", "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "METRICS_A", "metricsAApiKey": tailMasked(metricsAKey), "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "PAGING", "serviceKey": tailMasked(pagingKey), "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "ALERTING_A", "alertingAApiKey": tailMasked(alertingAKey), "alertingARegion": "EU", "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "ALERTING_B", "alertingBApiKey": tailMasked(alertingBKey), "alertingBRoutingKey": "db-team", "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "CHAT_C", "chatCWebhookUrl": urlMasked(chatCURL, chatCHost), "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "WEBHOOK", "webhookUrl": urlMasked(webhookURL, webhookURLHost), "webhookSecret": "******", "delayMin": 0.0, "intervalMin": 60.0},
		map[string]any{"typeName": "GROUP", "roles": []any{"GROUP_OWNER"}, "emailEnabled": false, "smsEnabled": true, "delayMin": 0.0, "intervalMin": 60.0},
	}
}

// emailConfig is the smallest valid request: a HOST_DOWN configuration telling one address.
func emailConfig(change func(body map[string]any)) map[string]any {
	body := map[string]any{
		"enabled":       true,
		"eventTypeName": "HOST_DOWN",
		"notifications": []any{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com"}},
	}
	if change != nil {
		change(body)
	}
	return body
}

// withNotification is a change of emailConfig to the single notification n.
func withNotification(n map[string]any) func(map[string]any) {
	return func(b map[string]any) { b["notifications"] = []any{n} }
}

// wantConfigEvent checks that evs is one event about configuration id, made by c.
func wantConfigEvent(t *testing.T, evs []herald.Event, groupID, id string, c *client) {
	t.Helper()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1: %+v", len(evs), evs)
	}
	ev := evs[0]
	if ev.AlertConfigID != id || ev.GroupID != groupID || ev.APIKeyID != c.KeyID || ev.PublicKey != c.user || ev.RemoteAddress != "127.0.0.1" {
		t.Errorf("event %+v, want alertConfigId %s in %s by key %s (%s) from 127.0.0.1", ev, id, groupID, c.KeyID, c.user)
	}
}

// wantNamed checks that an error answer names field as its parameter.
func wantNamed(r *response, field string) {
	r.t.Helper()
	if params, _ := r.Body["parameters"].([]any); len(params) == 0 || params[0] != field {
		r.t.Fatalf("error does not name %s: %s", field, r.Raw)
	}
}

// wantUnauthorized checks the answer to a request the caller's roles do not allow.
func wantUnauthorized(r *response) {
	r.t.Helper()
	r.wantError(401, herald.CodeUserUnauthorized)
	if h := r.Header.Get("WWW-Authenticate"); h != "" {
		r.t.Fatalf("a refused role got a challenge: %s", h)
	}
}

// wantNoSecret checks that none of secrets appears in text (a body or the log).
func wantNoSecret(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the secret %q: %s", where, s, text)
		}
	}
}

// wantSelf checks that obj links to itself at the absolute href want.
func wantSelf(t *testing.T, obj map[string]any, want string) {
	t.Helper()
	if got := link(obj["links"], "self"); got != want {
		t.Errorf("self link %q, want %q", got, want)
	}
}

// storedConfig is the configuration as the store keeps it (secrets in the clear).
func storedConfig(t *testing.T, e *env, groupID, id string) herald.AlertConfig {
	t.Helper()
	cfg, err := e.Store.AlertConfig(context.Background(), groupID, id)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// configCount is how many configurations project groupID has.
func configCount(t *testing.T, e *env, groupID string) int {
	t.Helper()
	_, total, err := e.Store.AlertConfigs(context.Background(), groupID, store.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func TestListAlertConfigsOfNewProject(t *testing.T) {
	e, org, p := newProjectEnv(t)
	path := "/groups/" + p + "/alertConfigs"

	r := e.Owner.do("GET", path, nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	if r.num("totalCount") != 10 {
		t.Fatalf("totalCount %v, want the 10 default configurations", r.num("totalCount"))
	}
	wantSelf(t, r.Body, e.Base+path+"?itemsPerPage=100&pageNum=1")
	if link(r.Body["links"], "next") != "" || link(r.Body["links"], "previous") != "" {
		t.Errorf("one page has next or previous links: %s", r.Raw)
	}
	wantTypes := []string{"HOST_DOWN", "MONITORING_AGENT_DOWN", "BACKUP_AGENT_DOWN", "AUTOMATION_AGENT_DOWN", "NO_PRIMARY",
		"TOO_MANY_ELECTIONS", "OUTSIDE_METRIC_THRESHOLD", "OUTSIDE_METRIC_THRESHOLD", "HEARTBEAT_MISSED", "HEARTBEAT_FAILED"}
	wantDelays := []float64{5, 5, 5, 5, 15, 0, 5, 10, 0, 0}
	results := r.results()
	if len(results) != len(wantTypes) {
		t.Fatalf("%d results, want %d", len(results), len(wantTypes))
	}
	for i, cfg := range results {
		switch fields := configFields; wantTypes[i] {
		case "TOO_MANY_ELECTIONS":
			wantKeys(t, cfg, append(fields, "threshold")...)
			if want := map[string]any{"operator": "GREATER_THAN", "threshold": 3.0}; !reflect.DeepEqual(cfg["threshold"], want) {
				t.Errorf("threshold %v, want %v", cfg["threshold"], want)
			}
		case "OUTSIDE_METRIC_THRESHOLD":
			wantKeys(t, cfg, append(fields, "metricThreshold")...)
		default:
			wantKeys(t, cfg, fields...)
		}
		if cfg["eventTypeName"] != wantTypes[i] || cfg["enabled"] != true || cfg["groupId"] != p {
			t.Errorf("result %d: %v, want an enabled %s of %s", i, cfg, wantTypes[i], p)
		}
		if m, _ := cfg["matchers"].([]any); m == nil || len(m) != 0 {
			t.Errorf("result %d: matchers %v, want []", i, cfg["matchers"])
		}
		wantNotification := []any{map[string]any{"typeName": "GROUP", "delayMin": wantDelays[i], "intervalMin": 60.0,
			"emailEnabled": true, "smsEnabled": false, "roles": []any{"GROUP_OWNER"}}}
		if !reflect.DeepEqual(cfg["notifications"], wantNotification) {
			t.Errorf("result %d: notifications %v, want %v", i, cfg["notifications"], wantNotification)
		}
		if _, err := time.Parse(time.RFC3339, cfg["created"].(string)); err != nil || cfg["created"] != cfg["updated"] {
			t.Errorf("result %d: created %v updated %v", i, cfg["created"], cfg["updated"])
		}
		wantSelf(t, cfg, e.Base+path+"/"+cfg["id"].(string))
	}
	metric := results[6]["metricThreshold"]
	if want := map[string]any{"metricName": "OPLOG_SLAVE_LAG_MASTER_TIME", "mode": "AVERAGE", "operator": "GREATER_THAN", "threshold": 1.0, "units": "MINUTES"}; !reflect.DeepEqual(metric, want) {
		t.Errorf("replication lag threshold %v, want %v", metric, want)
	}

	// Paging: the last page of three.
	r = e.Owner.do("GET", path+"?itemsPerPage=4&pageNum=3", nil).wantStatus(200)
	if len(r.results()) != 2 || r.num("totalCount") != 10 || r.results()[0]["id"] != results[8]["id"] {
		t.Errorf("page 3 of 3: %s", r.Raw)
	}
	if link(r.Body["links"], "next") != "" || link(r.Body["links"], "previous") != e.Base+path+"?itemsPerPage=4&pageNum=2" {
		t.Errorf("page 3 links: %v", r.Body["links"])
	}

	e.Owner.do("GET", path+"?itemsPerPage=501", nil).wantError(400, herald.CodeInvalidQueryParameter)
	e.Owner.do("GET", path+"?pageNum=0", nil).wantError(400, herald.CodeInvalidQueryParameter)
	e.Owner.do("GET", "/groups/"+herald.NewID(time.Now())+"/alertConfigs", nil).wantError(404, herald.CodeGroupNotFound)

	// Any role in the project reads; a role in another project or only in the organization does not.
	e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("GET", path, nil).wantStatus(200)
	e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}).do("GET", path, nil).wantStatus(200)
	other := e.project(org, "staging")
	wantUnauthorized(e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).do("GET", path, nil))
	wantUnauthorized(e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}).do("GET", path, nil))
}

func TestCreateAlertConfig(t *testing.T) {
	e, org, p := newProjectEnv(t)
	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin})

	r := admin.do("POST", "/groups/"+p+"/alertConfigs", secretConfig()).wantStatus(201)
	wantKeys(t, r.Body, append(configFields, "metricThreshold")...)
	id := r.str("id")
	if !herald.ValidID(id) || r.str("groupId") != p || r.Body["enabled"] != true || r.str("eventTypeName") != "OUTSIDE_METRIC_THRESHOLD" {
		t.Errorf("created: %s", r.Raw)
	}
	if _, err := time.Parse(time.RFC3339, r.str("created")); err != nil || r.str("updated") != r.str("created") {
		t.Errorf("created %q updated %q", r.str("created"), r.str("updated"))
	}
	wantSelf(t, r.Body, e.Base+"/groups/"+p+"/alertConfigs/"+id)
	if want := []any{map[string]any{"fieldName": "HOSTNAME", "operator": "STARTS_WITH", "value": "db-"}}; !reflect.DeepEqual(r.Body["matchers"], want) {
		t.Errorf("matchers %v, want %v", r.Body["matchers"], want)
	}
	if want := map[string]any{"metricName": "MEMORY_RESIDENT", "mode": "AVERAGE", "operator": "GREATER_THAN", "threshold": 2.0, "units": "GIGABYTES"}; !reflect.DeepEqual(r.Body["metricThreshold"], want) {
		t.Errorf("metricThreshold %v, want %v", r.Body["metricThreshold"], want)
	}
	if want := secretConfigRead(); !reflect.DeepEqual(r.Body["notifications"], want) {
		t.Errorf("notifications\n got %v\nwant %v", r.Body["notifications"], want)
	}
	wantNoSecret(t, "the creating response", string(r.Raw), configSecrets...)

	// Every read shows the same, masked; the store keeps the secrets.
	got := e.Owner.do("GET", "/groups/"+p+"/alertConfigs/"+id, nil).wantStatus(200)
	if !reflect.DeepEqual(got.Body, r.Body) {
		t.Errorf("GET differs from the creating response:\n%s\n%s", got.Raw, r.Raw)
	}
	list := e.Owner.do("GET", "/groups/"+p+"/alertConfigs?pageNum=3&itemsPerPage=5", nil).wantStatus(200)
	if len(list.results()) != 1 || !reflect.DeepEqual(list.results()[0], r.Body) || list.num("totalCount") != 11 {
		t.Errorf("list's last page is not the new configuration: %s", list.Raw)
	}
	for where, text := range map[string]string{"GET": string(got.Raw), "the list": string(list.Raw), "the log": e.Logs()} {
		wantNoSecret(t, where, text, configSecrets...)
	}
	stored := storedConfig(t, e, p, id)
	if n := stored.Notifications; n[0].Field("apiToken") != chatBToken || n[3].Field("serviceKey") != pagingKey || n[6].Field("chatCWebhookUrl") != chatCURL ||
		n[7].Field("webhookUrl") != webhookURL || n[7].Field("webhookSecret") != webhookSecret {
		t.Errorf("the store lost a secret: %+v", n)
	}

	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigAdded)
	wantConfigEvent(t, evs, p, id, admin)
	b, _ := json.Marshal(evs)
	wantNoSecret(t, "the event", string(b), configSecrets...)

	// enabled omitted: disabled, as for PUT.
	r = e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(func(b map[string]any) { delete(b, "enabled") })).wantStatus(201)
	if r.Body["enabled"] != false {
		t.Errorf("enabled omitted: %v", r.Body["enabled"])
	}
	// The project's own groupId may be given; the deprecated typeName is ignored.
	e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(func(b map[string]any) { b["groupId"], b["typeName"] = p, "ALERT" })).wantStatus(201)
}

func TestCreateAlertConfigRefused(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	otherOrg := e.org("umbrella")
	path := "/groups/" + p + "/alertConfigs"

	for name, c := range map[string]*client{
		"GROUP_READ_ONLY":           e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}),
		"GROUP_USER_ADMIN":          e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupUserAdmin}),
		"owner of another project":  e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}),
		"owner of another org":      e.key(otherOrg, herald.Role{OrgID: otherOrg, RoleName: herald.OrgOwner}),
		"GLOBAL_READ_ONLY":          e.key("", herald.Role{RoleName: herald.GlobalReadOnly}),
		"ORG_MEMBER of the project": e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}),
	} {
		t.Run(name, func(t *testing.T) { wantUnauthorized(c.do("POST", path, emailConfig(nil))) })
	}
	if n := configCount(t, e, p); n != 10 {
		t.Errorf("%d configurations after refused requests, want 10", n)
	}
	// Those allowed: the project's owner and monitoring admin, its organization's owner, a global monitoring admin.
	for _, c := range []*client{
		e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}),
		e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
		e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}),
	} {
		c.do("POST", path, emailConfig(nil)).wantStatus(201)
	}
	e.Owner.do("POST", "/groups/"+herald.NewID(time.Now())+"/alertConfigs", emailConfig(nil)).wantError(404, herald.CodeGroupNotFound)
	e.Owner.do("POST", "/groups/not-an-id/alertConfigs", emailConfig(nil)).wantError(404, herald.CodeGroupNotFound)
}

// requiredNotificationFields is, per typeName, a valid notification and the fields it requires.
var requiredNotificationFields = []struct {
	notification map[string]any
	required     []string
}{
	{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com"}, []string{"emailAddress"}},
	{map[string]any{"typeName": "SMS", "mobileNumber": "+15550100200"}, []string{"mobileNumber"}},
	{map[string]any{"typeName": "USER", "username": "ada"}, []string{"username"}},
	{map[string]any{"typeName": "CHAT_A", "notificationToken": chatAToken, "roomName": "ops"}, []string{"notificationToken", "roomName"}},
	{map[string]any{"typeName": "CHAT_B", "apiToken": chatBToken, "channelName": "#ops"}, []string{"apiToken", "channelName"}},
	{map[string]any{"typeName": "CHAT_C", "chatCWebhookUrl": chatCURL}, []string{"chatCWebhookUrl"}},
	{map[string]any{"typeName": "PAGING", "serviceKey": pagingKey}, []string{"serviceKey"}},
	{map[string]any{"typeName": "METRICS_A", "metricsAApiKey": metricsAKey}, []string{"metricsAApiKey"}},
	{map[string]any{"typeName": "ALERTING_A", "alertingAApiKey": alertingAKey}, []string{"alertingAApiKey"}},
	{map[string]any{"typeName": "ALERTING_B", "alertingBApiKey": alertingBKey, "alertingBRoutingKey": "db"}, []string{"alertingBApiKey", "alertingBRoutingKey"}},
	{map[string]any{"typeName": "WEBHOOK", "webhookUrl": webhookURL}, []string{"webhookUrl"}},
}

func TestCreateAlertConfigInvalid(t *testing.T) {
	e, _, p := newProjectEnv(t)
	other := e.project(e.org("umbrella"), "prod")
	path := "/groups/" + p + "/alertConfigs"

	type fields = map[string]any
	matcher := func(event, field, op, value string) func(map[string]any) {
		return func(b map[string]any) {
			b["eventTypeName"] = event
			b["matchers"] = []any{fields{"fieldName": field, "operator": op, "value": value}}
		}
	}
	metric := func(mt fields) func(map[string]any) {
		return func(b map[string]any) { b["eventTypeName"], b["metricThreshold"] = "OUTSIDE_METRIC_THRESHOLD", mt }
	}
	type invalid struct {
		name  string
		body  any
		code  string
		field string // the parameter the error names ("" when it names none)
	}
	cases := []invalid{
		{"unknown eventTypeName", emailConfig(func(b fields) { b["eventTypeName"] = "HOST_ON_FIRE" }), herald.CodeInvalidEnumValue, "eventTypeName"},
		{"no eventTypeName", emailConfig(func(b fields) { delete(b, "eventTypeName") }), herald.CodeMissingAttribute, "eventTypeName"},
		{"no notifications", emailConfig(func(b fields) { delete(b, "notifications") }), herald.CodeMissingNotifications, "notifications"},
		{"empty notifications", emailConfig(func(b fields) { b["notifications"] = []any{} }), herald.CodeMissingNotifications, "notifications"},
		{"intervalMin 4", emailConfig(withNotification(fields{"typeName": "EMAIL", "emailAddress": "a@example.com", "intervalMin": 4})),
			herald.CodeNotificationIntervalRange, "notifications[0].intervalMin"},
		{"unknown typeName", emailConfig(withNotification(fields{"typeName": "PIGEON"})), herald.CodeInvalidEnumValue, "notifications[0].typeName"},
		{"the global CHATA", emailConfig(withNotification(fields{"typeName": "CHATA", "notificationToken": "t", "roomName": "r"})), herald.CodeInvalidEnumValue, "notifications[0].typeName"},
		{"a bad address", emailConfig(withNotification(fields{"typeName": "EMAIL", "emailAddress": "ops"})), herald.CodeInvalidAttribute, "notifications[0].emailAddress"},
		{"a webhook that is no URL", emailConfig(withNotification(fields{"typeName": "WEBHOOK", "webhookUrl": "hooks.example.com"})), herald.CodeInvalidAttribute, "notifications[0].webhookUrl"},
		{"a role of the wrong scope", emailConfig(withNotification(fields{"typeName": "GROUP", "role": "ORG_OWNER"})), herald.CodeInvalidEnumValue, "notifications[0].role"},

		{"HOST_DOWN by CLUSTER_NAME", emailConfig(matcher("HOST_DOWN", "CLUSTER_NAME", "EQUALS", "c1")), herald.CodeInvalidEnumValue, "matchers[0].fieldName"},
		{"SHARDED_CLUSTER by HOSTNAME", emailConfig(matcher("SHARDED_CLUSTER", "HOSTNAME", "EQUALS", "h")), herald.CodeInvalidEnumValue, "matchers[0].fieldName"},
		{"an unknown operator", emailConfig(matcher("HOST_DOWN", "HOSTNAME", "LIKE", "db%")), herald.CodeInvalidEnumValue, "matchers[0].operator"},
		{"a bad REGEX", emailConfig(matcher("HOST_DOWN", "HOSTNAME", "REGEX", "db-([0-9]")), herald.CodeInvalidAttribute, "matchers[0].value"},
		{"a bad TYPE_NAME", emailConfig(matcher("HOST_DOWN", "TYPE_NAME", "EQUALS", "LEADER")), herald.CodeInvalidEnumValue, "matchers[0].value"},
		{"matchers on an agent type", emailConfig(matcher("MONITORING_AGENT_DOWN", "HOSTNAME", "EQUALS", "h")), herald.CodeInvalidAttribute, "matchers"},
		{"matcher without operator", emailConfig(func(b fields) { b["matchers"] = []any{fields{"fieldName": "HOSTNAME", "value": "h"}} }), herald.CodeMissingAttribute, "matchers[0].operator"},

		{"labelMatchers on HOST_DOWN", emailConfig(func(b fields) { b["labelMatchers"] = []any{fields{"name": "severity", "value": "critical"}} }), herald.CodeInvalidAttribute, "labelMatchers"},
		{"a label matcher without value", emailConfig(func(b fields) {
			b["eventTypeName"], b["labelMatchers"] = "PROMETHEUS_ALERT", []any{fields{"name": "severity"}}
		}), herald.CodeMissingAttribute, "labelMatchers[0].value"},
		{"a label matcher with a bad regex", emailConfig(func(b fields) {
			b["eventTypeName"], b["labelMatchers"] = "PROMETHEUS_ALERT", []any{fields{"name": "a", "value": "b"}, fields{"name": "job", "value": "api(", "isRegex": true}}
		}), herald.CodeInvalidAttribute, "labelMatchers[1]"},
		{"an unknown label matcher field", emailConfig(func(b fields) {
			b["eventTypeName"], b["labelMatchers"] = "PROMETHEUS_ALERT", []any{fields{"name": "a", "value": "b", "op": "="}}
		}), herald.CodeInvalidAttribute, "op"},

		{"no metricThreshold", emailConfig(func(b fields) { b["eventTypeName"] = "OUTSIDE_METRIC_THRESHOLD" }), herald.CodeMissingAttribute, "metricThreshold"},
		{"an unknown metric", emailConfig(metric(fields{"metricName": "HAPPINESS", "operator": "GREATER_THAN", "threshold": 1})), herald.CodeInvalidEnumValue, "metricThreshold.metricName"},
		{"MEMORY_RESIDENT in SECONDS", emailConfig(metric(fields{"metricName": "MEMORY_RESIDENT", "operator": "GREATER_THAN", "threshold": 1, "units": "SECONDS"})), herald.CodeInvalidAttribute, "metricThreshold.units"},
		{"CONNECTIONS in BYTES", emailConfig(metric(fields{"metricName": "CONNECTIONS", "operator": "GREATER_THAN", "threshold": 1, "units": "BYTES"})), herald.CodeInvalidAttribute, "metricThreshold.units"},
		{"an unknown threshold operator", emailConfig(metric(fields{"metricName": "CONNECTIONS", "operator": "ABOVE", "threshold": 1})), herald.CodeInvalidEnumValue, "metricThreshold.operator"},
		{"TOO_FEW_HEALTHY_MEMBERS without threshold", emailConfig(func(b fields) { b["eventTypeName"] = "TOO_FEW_HEALTHY_MEMBERS" }), herald.CodeMissingAttribute, "threshold"},
		{"a threshold on HOST_DOWN", emailConfig(func(b fields) { b["threshold"] = fields{"operator": "GREATER_THAN", "threshold": 1} }), herald.CodeInvalidAttribute, "threshold"},

		{"an unknown field", emailConfig(func(b fields) { b["colour"] = "red" }), herald.CodeInvalidAttribute, "colour"},
		{"an unknown notification field", emailConfig(withNotification(fields{"typeName": "EMAIL", "emailAddress": "a@example.com", "cc": "b@example.com"})), herald.CodeInvalidAttribute, "cc"},
		{"an unknown matcher field", emailConfig(func(b fields) {
			b["matchers"] = []any{fields{"fieldName": "HOSTNAME", "operator": "EQUALS", "value": "h", "caseSensitive": true}}
		}), herald.CodeInvalidAttribute, "caseSensitive"},
		{"an unknown threshold field", emailConfig(metric(fields{"metricName": "CONNECTIONS", "operator": "GREATER_THAN", "threshold": 1, "window": 5})), herald.CodeInvalidAttribute, "window"},
		{"a global field", emailConfig(func(b fields) { b["forAllGroups"] = true }), herald.CodeInvalidAttribute, "forAllGroups"},
		{"enabled as a string", emailConfig(func(b fields) { b["enabled"] = "yes" }), herald.CodeInvalidAttribute, "enabled"},
		{"intervalMin as a string", emailConfig(withNotification(fields{"typeName": "EMAIL", "emailAddress": "a@example.com", "intervalMin": "10"})), herald.CodeInvalidAttribute, "notifications.intervalMin"},
		{"notifications as an object", emailConfig(func(b fields) { b["notifications"] = fields{"typeName": "EMAIL"} }), herald.CodeInvalidAttribute, "notifications"},
		{"malformed JSON", `{"eventTypeName": "HOST_DOWN",`, herald.CodeInvalidJSON, ""},
		{"an array", `[]`, herald.CodeInvalidJSON, ""},
		{"two values", `{} {}`, herald.CodeInvalidJSON, ""},
		{"an id", emailConfig(func(b fields) { b["id"] = herald.NewID(time.Now()) }), herald.CodeAttributeReadOnly, "id"},
		{"another project's groupId", emailConfig(func(b fields) { b["groupId"] = other }), herald.CodeAttributeReadOnly, "groupId"},
		{"a created date", emailConfig(func(b fields) { b["created"] = "2020-01-01T00:00:00Z" }), herald.CodeAttributeReadOnly, "created"},
		{"an updated date", emailConfig(func(b fields) { b["updated"] = "2020-01-01T00:00:00Z" }), herald.CodeAttributeReadOnly, "updated"},
		{"created not a date", emailConfig(func(b fields) { b["created"] = fields{"any": []any{"thing"}} }), herald.CodeInvalidDate, "created"},
		{"a masked secret that stands for none stored", emailConfig(withNotification(fields{"typeName": "PAGING", "serviceKey": tailMasked(pagingKey)})), herald.CodeInvalidAttribute, "notifications[0].serviceKey"},
	}
	for _, f := range requiredNotificationFields {
		typ := f.notification["typeName"].(string)
		for _, req := range f.required {
			n := maps.Clone(f.notification)
			delete(n, req)
			cases = append(cases, invalid{typ + " without " + req, emailConfig(withNotification(n)), herald.CodeMissingAttribute, "notifications[0]." + req})
		}
		foreign := "serviceKey"
		if typ == "PAGING" {
			foreign = "emailAddress"
		}
		n := maps.Clone(f.notification)
		n[foreign] = "x"
		cases = append(cases, invalid{typ + " with " + foreign, emailConfig(withNotification(n)), herald.CodeInvalidAttribute, "notifications[0]." + foreign})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.do("POST", path, tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	if n := configCount(t, e, p); n != 10 {
		t.Errorf("%d configurations after invalid requests, want the 10 defaults", n)
	}
	if evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigAdded); len(evs) != 0 {
		t.Errorf("invalid requests recorded events: %+v", evs)
	}
}

func TestCreateAlertConfigUsesIntegration(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/alertConfigs"
	paging := emailConfig(withNotification(map[string]any{"typeName": "PAGING"}))

	e.Owner.do("POST", path, paging).wantError(400, herald.CodeMissingAttribute)
	_, err := e.Store.PutIntegration(context.Background(), p, "PAGING", func(*herald.Integration) (herald.Integration, []herald.Event, error) {
		return herald.Integration{Type: "PAGING", Fields: map[string]string{"serviceKey": pagingKey}}, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Owner.do("POST", path, paging).wantStatus(201)
	want := []any{map[string]any{"typeName": "PAGING", "delayMin": 0.0, "intervalMin": 60.0}}
	if !reflect.DeepEqual(r.Body["notifications"], want) {
		t.Errorf("notifications %v, want %v: the integration's key is not the notification's", r.Body["notifications"], want)
	}
	// Another kind's integration supplies nothing.
	e.Owner.do("POST", path, emailConfig(withNotification(map[string]any{"typeName": "METRICS_A"}))).wantError(400, herald.CodeMissingAttribute)
}

func TestGetAlertConfig(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	created := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(func(b map[string]any) {
		b["eventTypeName"], b["threshold"] = "TOO_FEW_HEALTHY_MEMBERS", map[string]any{"operator": "LESS_THAN", "threshold": 2}
		b["matchers"] = []any{map[string]any{"field": "REPLICA_SET_NAME", "operator": "EQUALS", "value": "rs0"}}
	})).wantStatus(201)
	id := created.str("id")
	path := "/groups/" + p + "/alertConfigs/" + id

	r := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("GET", path, nil).wantStatus(200)
	wantKeys(t, r.Body, append(configFields, "threshold")...)
	if r.str("id") != id || r.str("groupId") != p || r.Body["enabled"] != true || r.str("eventTypeName") != "TOO_FEW_HEALTHY_MEMBERS" ||
		r.str("created") != created.str("created") || r.str("updated") != created.str("updated") {
		t.Errorf("read: %s", r.Raw)
	}
	if want := map[string]any{"operator": "LESS_THAN", "threshold": 2.0}; !reflect.DeepEqual(r.Body["threshold"], want) {
		t.Errorf("threshold %v, want %v", r.Body["threshold"], want)
	}
	// A matcher given with the read form's `field` reads back with the schema's `fieldName`.
	if want := []any{map[string]any{"fieldName": "REPLICA_SET_NAME", "operator": "EQUALS", "value": "rs0"}}; !reflect.DeepEqual(r.Body["matchers"], want) {
		t.Errorf("matchers %v, want %v", r.Body["matchers"], want)
	}
	want := []any{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com", "delayMin": 0.0, "intervalMin": 60.0}}
	if !reflect.DeepEqual(r.Body["notifications"], want) {
		t.Errorf("notifications %v, want %v", r.Body["notifications"], want)
	}
	wantSelf(t, r.Body, e.Base+path)

	env := e.Owner.do("GET", path+"?envelope=true", nil).wantStatus(200)
	wantKeys(t, env.Body, "status", "content")
	if content, _ := env.Body["content"].(map[string]any); env.num("status") != 200 || !reflect.DeepEqual(content, r.Body) {
		t.Errorf("envelope: %s", env.Raw)
	}

	e.Owner.do("GET", "/groups/"+p+"/alertConfigs/"+herald.NewID(time.Now()), nil).wantError(404, herald.CodeAlertConfigNotFound)
	e.Owner.do("GET", "/groups/"+p+"/alertConfigs/nope", nil).wantError(404, herald.CodeAlertConfigNotFound)
	// A configuration is found only in its own project.
	e.Owner.do("GET", "/groups/"+other+"/alertConfigs/"+id, nil).wantError(404, herald.CodeAlertConfigNotFound)
	e.Owner.do("GET", path+"?pretty=perhaps", nil).wantError(400, herald.CodeInvalidQueryParameter)
	wantUnauthorized(e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).do("GET", path, nil))
}

func TestReplaceAlertConfig(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id
	before := e.Owner.do("GET", path, nil).wantStatus(200)
	owner := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner})

	// Replaced whole: a new type, its own fields, and enabled omitted means disabled.
	r := owner.do("PUT", path, map[string]any{
		"eventTypeName": "NO_PRIMARY",
		"matchers":      []any{map[string]any{"fieldName": "REPLICA_SET_NAME", "operator": "REGEX", "value": "^rs[0-9]$"}},
		"notifications": []any{map[string]any{"typeName": "SMS", "mobileNumber": "+15550100200", "delayMin": 10}},
	}).wantStatus(200)
	wantKeys(t, r.Body, configFields...)
	if r.str("id") != id || r.str("groupId") != p || r.Body["enabled"] != false || r.str("eventTypeName") != "NO_PRIMARY" || r.str("created") != before.str("created") {
		t.Errorf("replaced: %s", r.Raw)
	}
	if want := []any{map[string]any{"typeName": "SMS", "mobileNumber": "+15550100200", "delayMin": 10.0, "intervalMin": 60.0}}; !reflect.DeepEqual(r.Body["notifications"], want) {
		t.Errorf("notifications %v, want %v", r.Body["notifications"], want)
	}
	wantSelf(t, r.Body, e.Base+path)
	if got := e.Owner.do("GET", path, nil).wantStatus(200); !reflect.DeepEqual(got.Body, r.Body) {
		t.Errorf("GET after PUT:\n%s\n%s", got.Raw, r.Raw)
	}
	wantConfigEvent(t, auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigChanged), p, id, owner)
	// The replaced type is gone from the type index the alert engine reads.
	byType, _, err := e.Store.AlertConfigsOfType(context.Background(), p, "HOST_DOWN", store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range byType {
		if c.ID == id {
			t.Errorf("configuration %s still listed as HOST_DOWN", id)
		}
	}

	// What GET returned, links and all, can be written back as it is.
	read := e.Owner.do("GET", path, nil).wantStatus(200)
	read.Body["typeName"] = "ALERT" // deprecated and ignored
	r = e.Owner.do("PUT", path, read.Body).wantStatus(200)
	delete(read.Body, "typeName")
	delete(read.Body, "updated")
	delete(r.Body, "updated")
	if !reflect.DeepEqual(r.Body, read.Body) {
		t.Errorf("written back:\n got %v\nwant %v", r.Body, read.Body)
	}

	// Read-only fields with other values, and invalid bodies, change nothing.
	current := e.Owner.do("GET", path, nil).wantStatus(200)
	events := len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigChanged))
	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"another id", herald.CodeAttributeReadOnly, "id", emailConfig(func(b map[string]any) { b["id"] = herald.NewID(time.Now()) })},
		{"another groupId", herald.CodeAttributeReadOnly, "groupId", emailConfig(func(b map[string]any) { b["groupId"] = other })},
		{"another created date", herald.CodeAttributeReadOnly, "created", emailConfig(func(b map[string]any) { b["created"] = "2020-01-01T00:00:00Z" })},
		{"updated not a date", herald.CodeInvalidDate, "updated", emailConfig(func(b map[string]any) { b["updated"] = 7 })},
		{"no notifications", herald.CodeMissingNotifications, "notifications", emailConfig(func(b map[string]any) { delete(b, "notifications") })},
		{"intervalMin 4", herald.CodeNotificationIntervalRange, "notifications[0].intervalMin",
			emailConfig(withNotification(map[string]any{"typeName": "EMAIL", "emailAddress": "a@example.com", "intervalMin": 4}))},
		{"an unknown field", herald.CodeInvalidAttribute, "colour", emailConfig(func(b map[string]any) { b["colour"] = "red" })},
		{"malformed JSON", herald.CodeInvalidJSON, "", `{"eventTypeName":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.do("PUT", path, tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	if after := e.Owner.do("GET", path, nil).wantStatus(200); !reflect.DeepEqual(after.Body, current.Body) {
		t.Errorf("a refused PUT changed the configuration:\n%s\n%s", after.Raw, current.Raw)
	}
	if n := len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigChanged)); n != events {
		t.Errorf("refused PUTs recorded %d events", n-events)
	}

	e.Owner.do("PUT", "/groups/"+p+"/alertConfigs/"+herald.NewID(time.Now()), emailConfig(nil)).wantError(404, herald.CodeAlertConfigNotFound)
	e.Owner.do("PUT", "/groups/"+other+"/alertConfigs/"+id, emailConfig(nil)).wantError(404, herald.CodeAlertConfigNotFound)
	wantUnauthorized(e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("PUT", path, emailConfig(nil)))
	if after := e.Owner.do("GET", path, nil).wantStatus(200); !reflect.DeepEqual(after.Body, current.Body) {
		t.Errorf("a refused role changed the configuration: %s", after.Raw)
	}
}

// TestReplaceAlertConfigKeepsSecrets: a configuration read (secrets masked) and written back
// keeps its secrets; a new secret replaces the stored one; a mask that stands for no stored
// secret is refused.
func TestReplaceAlertConfigKeepsSecrets(t *testing.T) {
	e, _, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", secretConfig()).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id
	stored := storedConfig(t, e, p, id)

	read := e.Owner.do("GET", path, nil).wantStatus(200)
	written := e.Owner.do("PUT", path, read.Body).wantStatus(200)
	wantNoSecret(t, "the PUT response", string(written.Raw), configSecrets...)
	if got := storedConfig(t, e, p, id); !reflect.DeepEqual(got.Notifications, stored.Notifications) {
		t.Errorf("writing back what GET showed changed the notifications:\n got %+v\nwant %+v", got.Notifications, stored.Notifications)
	}

	// The paging notification first and edited, the rest dropped: its key stays.
	notifications := read.Body["notifications"].([]any)
	pagingRead := notifications[3].(map[string]any)
	pagingRead["intervalMin"] = 15
	webhookRead := notifications[7].(map[string]any)
	webhookRead["webhookSecret"] = "a-new-webhook-secret"
	read.Body["notifications"] = []any{pagingRead, webhookRead}
	e.Owner.do("PUT", path, read.Body).wantStatus(200)
	n := storedConfig(t, e, p, id).Notifications
	if len(n) != 2 || n[0].Field("serviceKey") != pagingKey || n[0].IntervalMin != 15 || n[1].Field("webhookUrl") != webhookURL || n[1].Field("webhookSecret") != "a-new-webhook-secret" {
		t.Errorf("stored after the edit: %+v", n)
	}

	// A mask that is not the stored secret's cannot be stored.
	before := storedConfig(t, e, p, id)
	pagingRead["serviceKey"] = tailMasked("some-other-key-9999")
	e.Owner.do("PUT", path, read.Body).wantError(400, herald.CodeInvalidAttribute)
	if after := storedConfig(t, e, p, id); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused PUT changed the configuration: %+v", after)
	}
	wantNoSecret(t, "the log", e.Logs(), append(configSecrets, "a-new-webhook-secret")...)
}

// TestMovedWebhookNeedsItsSecret: the masked webhookSecret written back with a webhookUrl on
// another host is refused, naming the secret, and changes nothing; with the secret given again
// the move is stored.
func TestMovedWebhookNeedsItsSecret(t *testing.T) {
	e, _, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{
		map[string]any{"typeName": "WEBHOOK", "webhookUrl": "https://hooks.example.com/in/T0", "webhookSecret": "hmac-key-for-hooks"}}}).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id
	before := storedConfig(t, e, p, id)

	read := e.Owner.do("GET", path, nil).wantStatus(200)
	webhook := read.Body["notifications"].([]any)[0].(map[string]any)
	webhook["webhookUrl"] = "https://attacker.example.net/collect"
	wantErrorParameter(e.Owner.do("PUT", path, read.Body).wantError(400, herald.CodeInvalidAttribute), "notifications[0].webhookSecret")
	if after := storedConfig(t, e, p, id); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused PUT changed the configuration: %+v", after)
	}

	webhook["webhookSecret"] = "hmac-key-for-the-new-host"
	e.Owner.do("PUT", path, read.Body).wantStatus(200)
	if n := storedConfig(t, e, p, id).Notifications[0]; n.Field("webhookUrl") != "https://attacker.example.net/collect" || n.Field("webhookSecret") != "hmac-key-for-the-new-host" {
		t.Errorf("stored after the move: %+v", n)
	}
}

func TestPatchAlertConfig(t *testing.T) {
	e, org, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id
	before := e.Owner.do("GET", path, nil).wantStatus(200)
	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin})

	for _, step := range []struct {
		enabled            bool
		disabled, reenable int // events of each kind recorded so far
	}{
		{false, 1, 0},
		{false, 1, 0}, // no change, no event
		{true, 1, 1},
		{true, 1, 1},
	} {
		r := admin.do("PATCH", path, map[string]any{"enabled": step.enabled}).wantStatus(200)
		wantKeys(t, r.Body, configFields...)
		if r.Body["enabled"] != step.enabled || r.str("eventTypeName") != "HOST_DOWN" || !reflect.DeepEqual(r.Body["notifications"], before.Body["notifications"]) {
			t.Errorf("patched enabled=%v: %s", step.enabled, r.Raw)
		}
		wantSelf(t, r.Body, e.Base+path)
		disabled := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigDisabled)
		enabled := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigEnabled)
		if len(disabled) != step.disabled || len(enabled) != step.reenable {
			t.Fatalf("after enabled=%v: %d DISABLED and %d ENABLED events, want %d and %d", step.enabled, len(disabled), len(enabled), step.disabled, step.reenable)
		}
	}
	wantConfigEvent(t, auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigDisabled), p, id, admin)
	wantConfigEvent(t, auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigEnabled), p, id, admin)

	for _, tc := range []struct {
		name, code, field string
		body              any
	}{
		{"another field", herald.CodeInvalidAttribute, "eventTypeName", map[string]any{"enabled": false, "eventTypeName": "NO_PRIMARY"}},
		{"notifications", herald.CodeInvalidAttribute, "notifications", map[string]any{"notifications": []any{}}},
		{"no enabled", herald.CodeMissingAttribute, "enabled", map[string]any{}},
		{"enabled as a string", herald.CodeInvalidAttribute, "enabled", map[string]any{"enabled": "false"}},
		{"malformed JSON", herald.CodeInvalidJSON, "", `{"enabled":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.do("PATCH", path, tc.body).wantError(400, tc.code)
			if tc.field != "" {
				wantNamed(r, tc.field)
			}
		})
	}
	if r := e.Owner.do("GET", path, nil); r.Body["enabled"] != true || r.str("eventTypeName") != "HOST_DOWN" {
		t.Errorf("a refused PATCH changed the configuration: %s", r.Raw)
	}
	e.Owner.do("PATCH", "/groups/"+p+"/alertConfigs/"+herald.NewID(time.Now()), map[string]any{"enabled": false}).wantError(404, herald.CodeAlertConfigNotFound)
	wantUnauthorized(e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("PATCH", path, map[string]any{"enabled": false}))
	if r := e.Owner.do("GET", path, nil); r.Body["enabled"] != true {
		t.Errorf("a refused role disabled the configuration")
	}
}

func TestDeleteAlertConfig(t *testing.T) {
	e, org, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id

	wantUnauthorized(e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("DELETE", path, nil))
	e.Owner.do("GET", path, nil).wantStatus(200)

	owner := e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner})
	r := owner.do("DELETE", path, nil).wantStatus(204)
	if len(r.Raw) != 0 {
		t.Errorf("204 with a body: %s", r.Raw)
	}
	e.Owner.do("GET", path, nil).wantError(404, herald.CodeAlertConfigNotFound)
	e.Owner.do("DELETE", path, nil).wantError(404, herald.CodeAlertConfigNotFound)
	if n := configCount(t, e, p); n != 10 {
		t.Errorf("%d configurations, want the 10 defaults", n)
	}
	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventAlertConfigDeleted)
	wantConfigEvent(t, evs, p, id, owner)
	if evs[0].Raw["eventTypeName"] != "HOST_DOWN" {
		t.Errorf("the event does not say what was deleted: %+v", evs[0].Raw)
	}
}

func TestListConfigAlerts(t *testing.T) {
	e, org, p := newProjectEnv(t)
	id := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201).str("id")
	otherConfig := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", emailConfig(nil)).wantStatus(201).str("id")
	path := "/groups/" + p + "/alertConfigs/" + id + "/alerts"

	start := time.Now().Add(-time.Hour)
	var saved []herald.Alert
	for i, a := range []struct{ config, status string }{
		{id, herald.StatusOpen}, {id, herald.StatusClosed}, {id, herald.StatusTracking},
		{id, herald.StatusCancelled}, {otherConfig, herald.StatusOpen},
	} {
		created := start.Add(time.Duration(i) * time.Minute)
		alert := herald.Alert{ID: herald.NewID(created), GroupID: p, AlertConfigID: a.config, EventTypeName: "HOST_DOWN",
			Status: a.status, Created: herald.At(created), Updated: herald.At(created), HostnameAndPort: "db1.example.com:27017"}
		if err := e.Store.SaveAlert(context.Background(), alert, false, ""); err != nil {
			t.Fatal(err)
		}
		saved = append(saved, alert)
	}

	r := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}).do("GET", path, nil).wantStatus(200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	wantSelf(t, r.Body, e.Base+path+"?itemsPerPage=100&pageNum=1")
	results := r.results()
	if r.num("totalCount") != 2 || len(results) != 2 {
		t.Fatalf("want the TRACKING and the OPEN alert: %s", r.Raw)
	}
	for i, want := range []herald.Alert{saved[2], saved[0]} { // newest first
		got := results[i]
		wantKeys(t, got, "id", "groupId", "alertConfigId", "eventTypeName", "status", "created", "updated", "hostnameAndPort", "links")
		if got["id"] != want.ID || got["status"] != want.Status || got["alertConfigId"] != id || got["groupId"] != p ||
			got["created"] != want.Created.String() || got["hostnameAndPort"] != "db1.example.com:27017" {
			t.Errorf("result %d: %v, want %+v", i, got, want)
		}
		wantSelf(t, got, e.Base+"/groups/"+p+"/alerts/"+want.ID)
	}
	r = e.Owner.do("GET", path+"?itemsPerPage=1&pageNum=2", nil).wantStatus(200)
	if len(r.results()) != 1 || r.results()[0]["id"] != saved[0].ID || link(r.Body["links"], "next") != "" {
		t.Errorf("page 2 of 2: %s", r.Raw)
	}

	e.Owner.do("GET", path+"?itemsPerPage=0", nil).wantError(400, herald.CodeInvalidQueryParameter)
	e.Owner.do("GET", "/groups/"+p+"/alertConfigs/"+herald.NewID(time.Now())+"/alerts", nil).wantError(404, herald.CodeAlertConfigNotFound)
	wantUnauthorized(e.key(org, herald.Role{GroupID: e.project(org, "staging"), RoleName: herald.GroupOwner}).do("GET", path, nil))
}

// A PROMETHEUS_ALERT configuration keeps its label matchers (isEqual defaulted to true) and
// reads them back so that it can be written back unchanged.
func TestAlertConfigLabelMatchers(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/alertConfigs"
	r := e.Owner.do("POST", path, emailConfig(func(b map[string]any) {
		b["eventTypeName"] = "PROMETHEUS_ALERT"
		b["labelMatchers"] = []any{map[string]any{"name": "severity", "value": "critical"},
			map[string]any{"name": "team", "value": "ops|db", "isRegex": true, "isEqual": false}}
	})).wantStatus(201)
	want := []any{map[string]any{"name": "severity", "value": "critical", "isRegex": false, "isEqual": true},
		map[string]any{"name": "team", "value": "ops|db", "isRegex": true, "isEqual": false}}
	if !reflect.DeepEqual(r.Body["labelMatchers"], want) {
		t.Fatalf("labelMatchers %v, want %v", r.Body["labelMatchers"], want)
	}
	id := r.str("id")
	body := maps.Clone(r.Body)
	for _, k := range []string{"id", "groupId", "created", "updated", "links"} {
		delete(body, k)
	}
	again := e.Owner.do("PUT", path+"/"+id, body).wantStatus(200)
	if !reflect.DeepEqual(again.Body["labelMatchers"], want) {
		t.Errorf("written back: labelMatchers %v", again.Body["labelMatchers"])
	}
	// Other event types show none.
	if other := e.Owner.do("POST", path, emailConfig(nil)).wantStatus(201); other.Body["labelMatchers"] != nil {
		t.Errorf("a HOST_DOWN configuration shows labelMatchers %v", other.Body["labelMatchers"])
	}
}
