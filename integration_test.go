package herald

import (
	"maps"
	"reflect"
	"testing"
)

func TestApplyIntegration(t *testing.T) {
	scraper := func(change map[string]any) map[string]any {
		body := map[string]any{"type": "SCRAPER_A", "username": "prom", "password": "scrape-pass-1234",
			"listenAddress": "10.0.0.1:9216", "serviceDiscovery": "file", "scheme": "http", "enabled": true}
		maps.Copy(body, change)
		return body
	}
	yes := true
	chatB := &Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": "chat-b-token-old1", "teamName": "ops"}}
	webhook := &Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/abc", "secret": "old-secret"}}
	chatC := &Integration{Type: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": "https://chat-c.example.com/hook/T0/secret-path"}}
	scraperStored := &Integration{Type: "SCRAPER_A", Enabled: &yes, Fields: map[string]string{"username": "prom", "password": "scrape-pass-1234", "listenAddress": "10.0.0.1:9216", "serviceDiscovery": "file", "scheme": "http"}}

	tests := []struct {
		name     string
		typ      string
		body     map[string]any
		existing *Integration
		code     string // "" when accepted
		param    string
		want     Integration // when accepted
	}{
		{name: "unknown type", typ: "CHAT_Z", body: map[string]any{"type": "CHAT_Z"}, code: CodeInvalidEnumValue, param: "type"},
		{name: "no type", typ: "PAGING", body: map[string]any{"serviceKey": "k"}, code: CodeMissingAttribute, param: "type"},
		{name: "other type", typ: "PAGING", body: map[string]any{"type": "CHAT_A", "serviceKey": "k"}, code: CodeIntegrationTypeMismatch, param: "type"},
		{name: "field of another type", typ: "PAGING", body: map[string]any{"type": "PAGING", "serviceKey": "k", "roomName": "r"}, code: CodeInvalidAttribute, param: "roomName"},
		{name: "enabled outside SCRAPER_A", typ: "PAGING", body: map[string]any{"type": "PAGING", "serviceKey": "k", "enabled": true}, code: CodeInvalidAttribute, param: "enabled"},
		{name: "not a string", typ: "PAGING", body: map[string]any{"type": "PAGING", "serviceKey": 42.0}, code: CodeInvalidAttribute, param: "serviceKey"},
		{name: "several bad fields: the first by name", typ: "PAGING",
			body: map[string]any{"type": "PAGING", "serviceKey": "k", "zulu": "", "alpha": "", "mike": ""}, code: CodeInvalidAttribute, param: "alpha"},
		{name: "required field empty", typ: "CHAT_A", body: map[string]any{"type": "CHAT_A", "notificationToken": "t", "roomName": ""}, code: CodeMissingAttribute, param: "roomName"},

		{name: "ALERTING_A region defaults to US", typ: "ALERTING_A", body: map[string]any{"type": "ALERTING_A", "apiKey": "k"},
			want: Integration{Type: "ALERTING_A", Fields: map[string]string{"apiKey": "k", "region": "US"}}},
		{name: "ALERTING_A in EU", typ: "ALERTING_A", body: map[string]any{"type": "ALERTING_A", "apiKey": "k", "region": "EU"},
			want: Integration{Type: "ALERTING_A", Fields: map[string]string{"apiKey": "k", "region": "EU"}}},
		{name: "ALERTING_A region must be US or EU", typ: "ALERTING_A", body: map[string]any{"type": "ALERTING_A", "apiKey": "k", "region": "eu"}, code: CodeInvalidEnumValue, param: "region"},
		{name: "WEBHOOK url not http", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "ftp://example.com/x"}, code: CodeInvalidAttribute, param: "url"},
		{name: "CHAT_C url relative", typ: "CHAT_C", body: map[string]any{"type": "CHAT_C", "chatCWebhookUrl": "/webhook"}, code: CodeInvalidAttribute, param: "chatCWebhookUrl"},

		{name: "SCRAPER_A", typ: "SCRAPER_A", body: scraper(map[string]any{"listenAddress": "[::1]:9216"}),
			want: Integration{Type: "SCRAPER_A", Enabled: &yes, Fields: map[string]string{"username": "prom", "password": "scrape-pass-1234", "listenAddress": "[::1]:9216", "serviceDiscovery": "file", "scheme": "http"}}},
		{name: "SCRAPER_A address without port", typ: "SCRAPER_A", body: scraper(map[string]any{"listenAddress": "10.0.0.1"}), code: CodeInvalidAttribute, param: "listenAddress"},
		{name: "SCRAPER_A address with empty port", typ: "SCRAPER_A", body: scraper(map[string]any{"listenAddress": "10.0.0.1:"}), code: CodeInvalidAttribute, param: "listenAddress"},
		{name: "SCRAPER_A port out of range", typ: "SCRAPER_A", body: scraper(map[string]any{"listenAddress": "10.0.0.1:65536"}), code: CodeInvalidAttribute, param: "listenAddress"},
		{name: "SCRAPER_A host name", typ: "SCRAPER_A", body: scraper(map[string]any{"listenAddress": "scraper:9216"}), code: CodeInvalidAttribute, param: "listenAddress"},
		{name: "SCRAPER_A service discovery", typ: "SCRAPER_A", body: scraper(map[string]any{"serviceDiscovery": "dns"}), code: CodeInvalidEnumValue, param: "serviceDiscovery"},
		{name: "SCRAPER_A scheme", typ: "SCRAPER_A", body: scraper(map[string]any{"scheme": "ftp"}), code: CodeInvalidEnumValue, param: "scheme"},
		{name: "SCRAPER_A https needs a PEM", typ: "SCRAPER_A", body: scraper(map[string]any{"scheme": "https"}), code: CodeMissingAttribute, param: "tlsPemPath"},
		{name: "SCRAPER_A relative PEM path", typ: "SCRAPER_A", body: scraper(map[string]any{"scheme": "https", "tlsPemPath": "certs/a.pem"}), code: CodeInvalidAttribute, param: "tlsPemPath"},
		{name: "SCRAPER_A enabled not a boolean", typ: "SCRAPER_A", body: scraper(map[string]any{"enabled": "yes"}), code: CodeInvalidAttribute, param: "enabled"},
		{name: "SCRAPER_A enabled kept on update", typ: "SCRAPER_A", body: map[string]any{"type": "SCRAPER_A", "username": "other"}, existing: scraperStored,
			want: Integration{Type: "SCRAPER_A", Enabled: &yes, Fields: map[string]string{"username": "other", "password": "scrape-pass-1234", "listenAddress": "10.0.0.1:9216", "serviceDiscovery": "file", "scheme": "http"}}},

		{name: "CHAT_B set up without a team", typ: "CHAT_B", body: map[string]any{"type": "CHAT_B", "apiToken": "t"},
			want: Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": "t"}}},
		{name: "CHAT_B reconfigured without a team", typ: "CHAT_B", body: map[string]any{"type": "CHAT_B", "channelName": "alerts"}, existing: chatB, code: CodeMissingAttribute, param: "teamName"},
		{name: "CHAT_B reconfigured with an empty team", typ: "CHAT_B", body: map[string]any{"type": "CHAT_B", "teamName": ""}, existing: chatB, code: CodeMissingAttribute, param: "teamName"},
		{name: "CHAT_B reconfigured", typ: "CHAT_B", body: map[string]any{"type": "CHAT_B", "teamName": "sre", "channelName": "alerts"}, existing: chatB,
			want: Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": "chat-b-token-old1", "teamName": "sre", "channelName": "alerts"}}},
		{name: "update keeps the fields not given", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "secret": "new-secret"}, existing: webhook,
			want: Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/abc", "secret": "new-secret"}}},
		{name: "read back as shown keeps the secrets", typ: "WEBHOOK", body: webhook.View(), existing: webhook, want: *webhook},
		{name: "a masked CHAT_C URL read back keeps the URL", typ: "CHAT_C", body: chatC.View(), existing: chatC, want: *chatC},
		{name: "a masked CHAT_C URL of another host", typ: "CHAT_C", body: map[string]any{"type": "CHAT_C", "chatCWebhookUrl": "https://evil.example.com/*************"},
			existing: chatC, code: CodeInvalidAttribute, param: "chatCWebhookUrl"},
		{name: "a mask where no secret is stored", typ: "PAGING", body: map[string]any{"type": "PAGING", "serviceKey": "********1234"}, code: CodeInvalidAttribute, param: "serviceKey"},
		{name: "the url moved on its host keeps the secret", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "https://hooks.example.com/in/def"}, existing: webhook,
			want: Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/def", "secret": "old-secret"}}},
		{name: "the url moved to another host needs the secret", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "https://evil.example.com/in/abc"}, existing: webhook,
			code: CodeInvalidAttribute, param: "secret"},
		{name: "the url moved to another host with the masked secret", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "https://evil.example.com/in/abc", "secret": "******"},
			existing: webhook, code: CodeInvalidAttribute, param: "secret"},
		{name: "the url moved to another host with a new secret", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "https://new.example.com/in", "secret": "new-secret"},
			existing: webhook, want: Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://new.example.com/in", "secret": "new-secret"}}},
		{name: "the url moved to another host without a secret stored", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "url": "https://new.example.com/in"},
			existing: &Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/abc"}}, want: Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://new.example.com/in"}}},
		{name: "update clears an optional field", typ: "WEBHOOK", body: map[string]any{"type": "WEBHOOK", "secret": ""}, existing: webhook,
			want: Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/abc"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before Integration
			if tt.existing != nil {
				before = *tt.existing
			}
			got, err := ApplyIntegration(tt.typ, tt.body, tt.existing)
			if tt.existing != nil && !reflect.DeepEqual(*tt.existing, before) {
				t.Fatalf("existing integration changed to %+v", *tt.existing)
			}
			if tt.code == "" {
				if err != nil {
					t.Fatalf("ApplyIntegration: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %+v, want %+v", got, tt.want)
				}
				return
			}
			e := ErrorOf(err)
			if e == nil || e.Kind != KindInvalid || e.Code != tt.code || len(e.Parameters) != 1 || e.Parameters[0] != tt.param {
				t.Fatalf("error %v, want %s naming %s", err, tt.code, tt.param)
			}
		})
	}
}

func TestIntegrationView(t *testing.T) {
	no := false
	tests := []struct {
		in   Integration
		want map[string]any
	}{
		{Integration{Type: "PAGING", Fields: map[string]string{"serviceKey": "pd-service-key-7f3a"}},
			map[string]any{"type": "PAGING", "serviceKey": "***************7f3a"}},
		{Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": "xoxb-123456789"}},
			map[string]any{"type": "CHAT_B", "apiToken": "**********6789", "channelName": ""}},
		{Integration{Type: "CHAT_B", Fields: map[string]string{"apiToken": "xoxb-123456789", "teamName": "ops", "channelName": "alerts"}},
			map[string]any{"type": "CHAT_B", "apiToken": "**********6789", "teamName": "ops", "channelName": "alerts"}},
		{Integration{Type: "CHAT_A", Fields: map[string]string{"notificationToken": "room-token-9999", "roomName": "ops"}},
			map[string]any{"type": "CHAT_A", "notificationToken": "***********9999", "roomName": "ops"}},
		{Integration{Type: "ALERTING_B", Fields: map[string]string{"apiKey": "alerting-b-key-1"}},
			map[string]any{"type": "ALERTING_B", "apiKey": "************ey-1"}},
		{Integration{Type: "WEBHOOK", Fields: map[string]string{"url": "https://hooks.example.com/in/abc?t=1", "secret": "s3cret"}},
			map[string]any{"type": "WEBHOOK", "url": "https://hooks.example.com/**********", "secret": "******"}},
		{Integration{Type: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": "https://chat.example.com/hook/T0/B0"}},
			map[string]any{"type": "CHAT_C", "chatCWebhookUrl": "https://chat.example.com/**********"}},
		{Integration{Type: "SCRAPER_A", Enabled: &no, Fields: map[string]string{"username": "prom", "password": "scrape-pass", "listenAddress": "10.0.0.1:9216", "serviceDiscovery": "http", "scheme": "https", "tlsPemPath": "/etc/a.pem", "tlsPemPassword": "pem-pass"}},
			map[string]any{"type": "SCRAPER_A", "username": "prom", "listenAddress": "10.0.0.1:9216", "serviceDiscovery": "http",
				"scheme": "https", "tlsPemPath": "/etc/a.pem", "tlsPemPassword": "******", "enabled": false}},
	}
	for _, tt := range tests {
		if got := tt.in.View(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s View() = %v, want %v", tt.in.Type, got, tt.want)
		}
	}
}
