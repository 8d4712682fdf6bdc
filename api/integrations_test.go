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

// integrationCase is a valid configuration of one integration type: its body, the fields the
// type requires, its secrets and what a read shows of it.
type integrationCase struct {
	typ      string
	body     map[string]any
	required []string
	secrets  []string
	view     map[string]any // without links
}

// tailMask is a key or token as a read shows it: asterisks, then its last 4 characters.
func tailMask(s string) string { return strings.Repeat("*", len(s)-4) + s[len(s)-4:] }

// integrationCases holds one valid configuration of each type, sorted by type.
func integrationCases() []integrationCase {
	const (
		alertingAKey = "alertinga-api-key-5555eeee"
		alertingBKey = "alertingb-api-key-6666ffff"
		apmKey       = "apm-license-key-0000jjjj"
		chatAToken   = "chata-notify-token-4444dddd"
		chatBToken   = "chatb-api-token-2222bbbb"
		chatCURL     = "https://chatc.example.com/webhook/9999iiii-token"
		metricsKey   = "metrics-api-key-3333cccc"
		pagingKey    = "pd-service-key-1111aaaa"
		scraperPass  = "scraper-password-1212kkkk"
		pemPass      = "pem-password-3434llll"
		webhookURL   = "https://hooks.example.com/services/7777gggg-path"
		webhookKey   = "webhook-hmac-secret-8888hhhh"
	)
	return []integrationCase{
		{"ALERTING_A", map[string]any{"type": "ALERTING_A", "apiKey": alertingAKey}, []string{"apiKey"}, []string{alertingAKey},
			map[string]any{"type": "ALERTING_A", "apiKey": tailMask(alertingAKey), "region": "US"}},
		{"ALERTING_B", map[string]any{"type": "ALERTING_B", "apiKey": alertingBKey, "routingKey": "team-db"}, []string{"apiKey"}, []string{alertingBKey},
			map[string]any{"type": "ALERTING_B", "apiKey": tailMask(alertingBKey), "routingKey": "team-db"}},
		{"APM_A", map[string]any{"type": "APM_A", "licenseKey": apmKey}, []string{"licenseKey"}, []string{apmKey},
			map[string]any{"type": "APM_A", "licenseKey": tailMask(apmKey)}},
		{"CHAT_A", map[string]any{"type": "CHAT_A", "notificationToken": chatAToken, "roomName": "ops-room"}, []string{"notificationToken", "roomName"}, []string{chatAToken},
			map[string]any{"type": "CHAT_A", "notificationToken": tailMask(chatAToken), "roomName": "ops-room"}},
		{"CHAT_B", map[string]any{"type": "CHAT_B", "apiToken": chatBToken}, []string{"apiToken"}, []string{chatBToken},
			map[string]any{"type": "CHAT_B", "apiToken": tailMask(chatBToken), "channelName": ""}},
		{"CHAT_C", map[string]any{"type": "CHAT_C", "chatCWebhookUrl": chatCURL}, []string{"chatCWebhookUrl"}, []string{chatCURL},
			map[string]any{"type": "CHAT_C", "chatCWebhookUrl": "https://chatc.example.com/" + strings.Repeat("*", len("webhook/9999iiii-token"))}},
		{"METRICS_A", map[string]any{"type": "METRICS_A", "apiKey": metricsKey}, []string{"apiKey"}, []string{metricsKey},
			map[string]any{"type": "METRICS_A", "apiKey": tailMask(metricsKey)}},
		{"PAGING", map[string]any{"type": "PAGING", "serviceKey": pagingKey}, []string{"serviceKey"}, []string{pagingKey},
			map[string]any{"type": "PAGING", "serviceKey": tailMask(pagingKey)}},
		{"SCRAPER_A", map[string]any{"type": "SCRAPER_A", "username": "scraper", "password": scraperPass, "listenAddress": "10.0.0.5:9216",
			"serviceDiscovery": "http", "scheme": "https", "tlsPemPath": "/etc/herald/scraper.pem", "tlsPemPassword": pemPass, "enabled": true},
			[]string{"username", "password", "listenAddress", "serviceDiscovery", "scheme", "enabled"}, []string{scraperPass, pemPass},
			map[string]any{"type": "SCRAPER_A", "username": "scraper", "listenAddress": "10.0.0.5:9216", "serviceDiscovery": "http",
				"scheme": "https", "tlsPemPath": "/etc/herald/scraper.pem", "tlsPemPassword": "******", "enabled": true}},
		{"WEBHOOK", map[string]any{"type": "WEBHOOK", "url": webhookURL, "secret": webhookKey}, []string{"url"}, []string{webhookURL, webhookKey},
			map[string]any{"type": "WEBHOOK", "url": "https://hooks.example.com/" + strings.Repeat("*", len("services/7777gggg-path")), "secret": "******"}},
	}
}

// wantSecretsHidden checks that no text holds any of secrets beyond the 4 characters a mask shows.
func wantSecretsHidden(t *testing.T, where string, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s[:len(s)-4]) {
			t.Errorf("%s holds the secret %s", where, s)
		}
	}
}

// wantIntegration checks an integration as a read shows it: exactly the fields of view, and a
// self link to it.
func wantIntegration(t *testing.T, e *env, p string, got map[string]any, view map[string]any) {
	t.Helper()
	withoutLinks := maps.Clone(got)
	delete(withoutLinks, "links")
	if !reflect.DeepEqual(withoutLinks, view) {
		t.Fatalf("integration %v, want %v", withoutLinks, view)
	}
	if self := link(got["links"], "self"); self != e.Base+"/groups/"+p+"/integrations/"+view["type"].(string) {
		t.Fatalf("self link %q", self)
	}
}

func TestIntegrationEveryType(t *testing.T) {
	e, _, p := newProjectEnv(t)
	var answers []string
	var secrets []string
	cases := integrationCases()
	for n, tc := range cases {
		secrets = append(secrets, tc.secrets...)
		path := "/groups/" + p + "/integrations/" + tc.typ
		for _, field := range tc.required {
			body := maps.Clone(tc.body)
			delete(body, field)
			r := e.Owner.do("POST", path, body).wantError(400, "MISSING_ATTRIBUTE")
			wantErrorParameter(r, field)
			answers = append(answers, string(r.Raw))
		}
		e.Owner.do("GET", path, nil).wantError(404, "INTEGRATION_NOT_FOUND")

		r := e.Owner.do("POST", path, tc.body).wantStatus(201)
		answers = append(answers, string(r.Raw))
		wantKeys(t, r.Body, "links", "results", "totalCount")
		if r.num("totalCount") != float64(n+1) || link(r.Body["links"], "self") == "" {
			t.Fatalf("%s: list answer %s", tc.typ, r.Raw)
		}
		// Types are added in sorted order, so the new one is last.
		results := r.results()
		wantIntegration(t, e, p, results[len(results)-1], tc.view)

		got := e.Owner.do("GET", path, nil).wantStatus(200)
		answers = append(answers, string(got.Raw))
		wantIntegration(t, e, p, got.Body, tc.view)
	}

	r := e.Owner.do("GET", "/groups/"+p+"/integrations", nil).wantStatus(200)
	answers = append(answers, string(r.Raw))
	if r.num("totalCount") != float64(len(cases)) || link(r.Body["links"], "self") != e.Base+"/groups/"+p+"/integrations?itemsPerPage=100&pageNum=1" {
		t.Fatalf("list: %s", r.Raw)
	}
	for i, it := range r.results() {
		wantIntegration(t, e, p, it, cases[i].view)
	}

	evs := auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventIntegrationConfigured)
	if len(evs) != len(cases) {
		t.Fatalf("%d events, want %d", len(evs), len(cases))
	}
	for i, ev := range evs {
		if want := cases[len(cases)-1-i].typ; ev.Raw["integrationType"] != want || ev.APIKeyID != e.Owner.KeyID {
			t.Fatalf("event %d: %+v, want integrationType %s", i, ev, want)
		}
		b, _ := json.Marshal(ev)
		wantSecretsHidden(t, "an event", string(b), secrets...)
	}
	wantSecretsHidden(t, "a response", strings.Join(answers, "\n"), secrets...)
	wantSecretsHidden(t, "the log", e.Logs(), secrets...)
}

func TestIntegrationPutMergesFields(t *testing.T) {
	e, _, p := newProjectEnv(t)
	ctx := context.Background()
	path := "/groups/" + p + "/integrations/WEBHOOK"
	const (
		url1, secret1 = "https://hooks.example.com/in/first-aaaa1111", "first-secret-bbbb2222"
		url2, secret2 = "https://other.example.com/in/second-cccc3333", "second-secret-dddd4444"
	)
	var answers []string
	put := func(body map[string]any, status int) *response {
		t.Helper()
		r := e.Owner.do("PUT", path, body).wantStatus(status)
		answers = append(answers, string(r.Raw))
		return r
	}
	stored := func() herald.Integration {
		t.Helper()
		in, err := e.Store.Integration(ctx, p, "WEBHOOK")
		if err != nil {
			t.Fatal(err)
		}
		return in
	}

	// Added when none exists: 200 and the list.
	r := put(map[string]any{"type": "WEBHOOK", "url": url1, "secret": secret1}, 200)
	wantKeys(t, r.Body, "links", "results", "totalCount")
	if r.num("totalCount") != 1 {
		t.Fatalf("list answer %s", r.Raw)
	}
	wantIntegration(t, e, p, r.results()[0], map[string]any{"type": "WEBHOOK", "url": "https://hooks.example.com/" + strings.Repeat("*", len("in/first-aaaa1111")), "secret": "******"})

	put(map[string]any{"type": "WEBHOOK", "secret": secret2}, 200)
	if in := stored(); in.Field("url") != url1 || in.Field("secret") != secret2 {
		t.Fatalf("after changing the secret: %+v", in)
	}
	// The secret stays with its host: a url on the same host keeps it (given as the mask a read
	// shows, or left out); a url on another host needs it again, or it would sign for the new host.
	put(map[string]any{"type": "WEBHOOK", "url": url1 + "-v2", "secret": "******"}, 200)
	if in := stored(); in.Field("url") != url1+"-v2" || in.Field("secret") != secret2 {
		t.Fatalf("after moving the url on its host: %+v", in)
	}
	for _, body := range []map[string]any{{"type": "WEBHOOK", "url": url2}, {"type": "WEBHOOK", "url": url2, "secret": "******"}} {
		wantErrorParameter(e.Owner.do("PUT", path, body).wantError(400, "INVALID_ATTRIBUTE"), "secret")
	}
	if in := stored(); in.Field("url") != url1+"-v2" || in.Field("secret") != secret2 {
		t.Fatalf("a refused move changed the integration: %+v", in)
	}
	put(map[string]any{"type": "WEBHOOK", "url": url2, "secret": secret2}, 200)
	if in := stored(); in.Field("url") != url2 || in.Field("secret") != secret2 {
		t.Fatalf("after changing the url: %+v", in)
	}

	// Refused changes write nothing.
	wantErrorParameter(e.Owner.do("PUT", path, map[string]any{"type": "WEBHOOK", "url": "ftp://files.example.com/x"}).wantError(400, "INVALID_ATTRIBUTE"), "url")
	wantErrorParameter(e.Owner.do("PUT", path, map[string]any{"type": "WEBHOOK", "url": ""}).wantError(400, "MISSING_ATTRIBUTE"), "url")
	e.Owner.do("POST", path, map[string]any{"type": "WEBHOOK", "url": url1}).wantError(409, "INTEGRATION_ALREADY_EXISTS")
	if in := stored(); in.Field("url") != url2 || in.Field("secret") != secret2 {
		t.Fatalf("a refused request changed the integration: %+v", in)
	}
	if n := len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventIntegrationConfigured)); n != 4 {
		t.Fatalf("%d events, want 4", n)
	}
	secrets := []string{url1, secret1, url2, secret2}
	wantSecretsHidden(t, "a response", strings.Join(answers, "\n"), secrets...)
	wantSecretsHidden(t, "the log", e.Logs(), secrets...)
}

func TestIntegrationChatB(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/integrations/CHAT_B"
	const token = "chatb-token-0123456789"

	e.Owner.do("POST", path, map[string]any{"type": "CHAT_B", "apiToken": token}).wantStatus(201)
	r := e.Owner.do("GET", path, nil).wantStatus(200)
	wantIntegration(t, e, p, r.Body, map[string]any{"type": "CHAT_B", "apiToken": tailMask(token), "channelName": ""})

	// Reconfiguring must name the team.
	wantErrorParameter(e.Owner.do("PUT", path, map[string]any{"type": "CHAT_B", "channelName": "alerts"}).wantError(400, "MISSING_ATTRIBUTE"), "teamName")
	if again := e.Owner.do("GET", path, nil).wantStatus(200); string(again.Raw) != string(r.Raw) {
		t.Fatalf("a refused request changed the integration: %s", again.Raw)
	}
	e.Owner.do("PUT", path, map[string]any{"type": "CHAT_B", "teamName": "sre", "channelName": "alerts"}).wantStatus(200)
	r = e.Owner.do("GET", path, nil).wantStatus(200)
	wantIntegration(t, e, p, r.Body, map[string]any{"type": "CHAT_B", "apiToken": tailMask(token), "teamName": "sre", "channelName": "alerts"})
}

func TestIntegrationAlertingARegion(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/integrations/ALERTING_A"
	const key = "alerting-a-key-99998888"
	region := func() string {
		t.Helper()
		return e.Owner.do("GET", path, nil).wantStatus(200).str("region")
	}

	e.Owner.do("POST", path, map[string]any{"type": "ALERTING_A", "apiKey": key}).wantStatus(201)
	if got := region(); got != "US" {
		t.Fatalf("default region %q, want US", got)
	}
	e.Owner.do("PUT", path, map[string]any{"type": "ALERTING_A", "region": "EU"}).wantStatus(200)
	if got := region(); got != "EU" {
		t.Fatalf("region %q, want EU", got)
	}
	wantErrorParameter(e.Owner.do("PUT", path, map[string]any{"type": "ALERTING_A", "region": "ASIA"}).wantError(400, "INVALID_ENUM_VALUE"), "region")
	if got := region(); got != "EU" {
		t.Fatalf("a refused request changed the region to %q", got)
	}
}

func TestIntegrationRequestErrors(t *testing.T) {
	e, _, p := newProjectEnv(t)
	base := "/groups/" + p + "/integrations/"
	for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
		r := e.Owner.do(method, base+"CHAT_Z", map[string]any{"type": "CHAT_Z"}).wantError(400, "INVALID_ENUM_VALUE")
		wantErrorParameter(r, "integrationType")
	}
	for _, tt := range []struct {
		name        string
		body        any
		code, param string
	}{
		{"type of another integration", map[string]any{"type": "CHAT_A", "serviceKey": "pd-key-12345678"}, "INTEGRATION_TYPE_MISMATCH", "type"},
		{"no type", map[string]any{"serviceKey": "pd-key-12345678"}, "MISSING_ATTRIBUTE", "type"},
		{"field of another type", map[string]any{"type": "PAGING", "serviceKey": "pd-key-12345678", "roomName": "ops"}, "INVALID_ATTRIBUTE", "roomName"},
		{"field not a string", map[string]any{"type": "PAGING", "serviceKey": 12345678}, "INVALID_ATTRIBUTE", "serviceKey"},
		{"not JSON", "serviceKey=pd-key-12345678", "INVALID_JSON", ""},
		{"not an object", `[{"type": "PAGING", "serviceKey": "pd-key-12345678"}]`, "INVALID_JSON", ""},
		{"two objects", `{"type": "PAGING", "serviceKey": "pd-key-12345678"} {}`, "INVALID_JSON", ""},
	} {
		for _, method := range []string{"PUT", "POST"} {
			r := e.Owner.do(method, base+"PAGING", tt.body).wantError(400, tt.code)
			if tt.param != "" {
				wantErrorParameter(r, tt.param)
			}
		}
	}
	// A bad query is refused before anything is written.
	e.Owner.do("PUT", base+"PAGING?itemsPerPage=0", map[string]any{"type": "PAGING", "serviceKey": "pd-key-12345678"}).
		wantError(400, "INVALID_QUERY_PARAMETER")
	e.Owner.do("GET", "/groups/"+p+"/integrations?pageNum=0", nil).wantError(400, "INVALID_QUERY_PARAMETER")

	if r := e.Owner.do("GET", "/groups/"+p+"/integrations", nil).wantStatus(200); r.num("totalCount") != 0 || len(r.results()) != 0 {
		t.Fatalf("a refused request configured an integration: %s", r.Raw)
	}
	if n := len(auditEvents(t, e, store.EventScope{GroupID: p}, herald.EventIntegrationConfigured)); n != 0 {
		t.Fatalf("%d events after refused requests", n)
	}
	e.Owner.do("GET", "/groups/"+herald.NewID(time.Now())+"/integrations", nil).wantError(404, "GROUP_NOT_FOUND")
}

func TestIntegrationListPages(t *testing.T) {
	e, _, p := newProjectEnv(t)
	cases := integrationCases()[:3]
	for _, tc := range cases {
		e.Owner.do("PUT", "/groups/"+p+"/integrations/"+tc.typ, tc.body).wantStatus(200)
	}
	r := e.Owner.do("GET", "/groups/"+p+"/integrations?itemsPerPage=2", nil).wantStatus(200)
	if res := r.results(); r.num("totalCount") != 3 || len(res) != 2 || res[1]["type"] != cases[1].typ || link(r.Body["links"], "next") == "" {
		t.Fatalf("first page: %s", r.Raw)
	}
	r = e.Owner.do("GET", "/groups/"+p+"/integrations?itemsPerPage=2&pageNum=2", nil).wantStatus(200)
	if res := r.results(); r.num("totalCount") != 3 || len(res) != 1 || link(r.Body["links"], "next") != "" || link(r.Body["links"], "previous") == "" {
		t.Fatalf("second page: %s", r.Raw)
	}
	wantIntegration(t, e, p, r.results()[0], cases[2].view)
	if r = e.Owner.do("GET", "/groups/"+p+"/integrations?pageNum=9", nil).wantStatus(200); r.num("totalCount") != 3 || len(r.results()) != 0 {
		t.Fatalf("page past the end: %s", r.Raw)
	}
}

func TestIntegrationDelete(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/integrations/PAGING"
	scope := store.EventScope{GroupID: p}

	e.Owner.do("DELETE", path, nil).wantError(404, "INTEGRATION_NOT_FOUND")
	if n := len(auditEvents(t, e, scope, herald.EventIntegrationRemoved)); n != 0 {
		t.Fatalf("deleting nothing recorded %d events", n)
	}

	e.Owner.do("POST", path, map[string]any{"type": "PAGING", "serviceKey": "pd-service-key-00001111"}).wantStatus(201)
	if r := e.Owner.do("DELETE", path, nil).wantStatus(204); len(r.Raw) != 0 {
		t.Fatalf("204 with a body: %s", r.Raw)
	}
	e.Owner.do("GET", path, nil).wantError(404, "INTEGRATION_NOT_FOUND")
	e.Owner.do("DELETE", path, nil).wantError(404, "INTEGRATION_NOT_FOUND")
	if r := e.Owner.do("GET", "/groups/"+p+"/integrations", nil).wantStatus(200); r.num("totalCount") != 0 {
		t.Fatalf("deleted integration listed: %s", r.Raw)
	}
	evs := auditEvents(t, e, scope, herald.EventIntegrationRemoved)
	if len(evs) != 1 || evs[0].Raw["integrationType"] != "PAGING" || evs[0].GroupID != p || evs[0].APIKeyID != e.Owner.KeyID {
		t.Fatalf("events %+v", evs)
	}
}

func TestIntegrationRoles(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	path := "/groups/" + p + "/integrations/PAGING"
	const key = "pd-service-key-55556666"
	body := map[string]any{"type": "PAGING", "serviceKey": "pd-service-key-77778888"}
	e.Owner.do("POST", path, map[string]any{"type": "PAGING", "serviceKey": key}).wantStatus(201)

	reader := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	if r := reader.do("GET", path, nil).wantStatus(200); r.str("serviceKey") != tailMask(key) {
		t.Fatalf("reader sees %s", r.Raw)
	}
	if r := reader.do("GET", "/groups/"+p+"/integrations", nil).wantStatus(200); r.num("totalCount") != 1 {
		t.Fatalf("reader lists %s", r.Raw)
	}
	reader.do("PUT", path, body).wantError(401, "USER_UNAUTHORIZED")
	reader.do("POST", "/groups/"+p+"/integrations/CHAT_B", map[string]any{"type": "CHAT_B", "apiToken": "chat-token-12345678"}).wantError(401, "USER_UNAUTHORIZED")
	reader.do("DELETE", path, nil).wantError(401, "USER_UNAUTHORIZED")

	outsider := e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner})
	outsider.do("GET", path, nil).wantError(401, "USER_UNAUTHORIZED")
	outsider.do("GET", "/groups/"+p+"/integrations", nil).wantError(401, "USER_UNAUTHORIZED")

	all, err := e.Store.Integrations(context.Background(), p)
	if err != nil || len(all) != 1 || all[0].Field("serviceKey") != key {
		t.Fatalf("refused requests changed the integrations: %+v, %v", all, err)
	}
	scope := store.EventScope{GroupID: p}
	if len(auditEvents(t, e, scope, herald.EventIntegrationConfigured)) != 1 || len(auditEvents(t, e, scope, herald.EventIntegrationRemoved)) != 0 {
		t.Fatal("refused requests recorded events")
	}

	admin := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin})
	admin.do("PUT", path, body).wantStatus(200)
}
