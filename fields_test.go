package herald

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// legacyNotification is how notifications were declared before the kinds' fields were held
// by name: their JSON must not change, since a notice names its notification by a hash of it
// (Fingerprint) and stored configurations are read back.
type legacyNotification struct {
	TypeName            string   `json:"typeName"`
	DelayMin            int      `json:"delayMin"`
	IntervalMin         int      `json:"intervalMin"`
	EmailAddress        string   `json:"emailAddress,omitempty"`
	EmailEnabled        *bool    `json:"emailEnabled,omitempty"`
	SMSEnabled          *bool    `json:"smsEnabled,omitempty"`
	MobileNumber        string   `json:"mobileNumber,omitempty"`
	Username            string   `json:"username,omitempty"`
	Roles               []string `json:"roles,omitempty"`
	APIToken            string   `json:"apiToken,omitempty"`
	ChannelName         string   `json:"channelName,omitempty"`
	NotificationToken   string   `json:"notificationToken,omitempty"`
	RoomName            string   `json:"roomName,omitempty"`
	MetricsAAPIKey      string   `json:"metricsAApiKey,omitempty"`
	ServiceKey          string   `json:"serviceKey,omitempty"`
	AlertingAAPIKey     string   `json:"alertingAApiKey,omitempty"`
	AlertingARegion     string   `json:"alertingARegion,omitempty"`
	AlertingBAPIKey     string   `json:"alertingBApiKey,omitempty"`
	AlertingBRoutingKey string   `json:"alertingBRoutingKey,omitempty"`
	ChatCWebhookURL     string   `json:"chatCWebhookUrl,omitempty"`
	WebhookURL          string   `json:"webhookUrl,omitempty"`
	WebhookSecret       string   `json:"webhookSecret,omitempty"`
}

// Every kind's notification is written byte for byte as before, by json.Marshal (the store,
// fingerprints) and by an encoder that leaves HTML characters alone (the API), and reads
// back as it was.
func TestNotificationJSONIsUnchanged(t *testing.T) {
	yes, no := true, false
	odd := "<b>&\u2028\"x\"</b>"
	for _, tc := range []struct {
		n   Notification
		old legacyNotification
	}{
		{Notification{TypeName: "EMAIL", IntervalMin: 60, Fields: map[string]string{"emailAddress": "ops@example.com"}},
			legacyNotification{TypeName: "EMAIL", IntervalMin: 60, EmailAddress: "ops@example.com"}},
		{Notification{TypeName: "SMS", DelayMin: 5, IntervalMin: 60, Fields: map[string]string{"mobileNumber": "+15550100"}},
			legacyNotification{TypeName: "SMS", DelayMin: 5, IntervalMin: 60, MobileNumber: "+15550100"}},
		{Notification{TypeName: "USER", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no, Fields: map[string]string{"username": odd}},
			legacyNotification{TypeName: "USER", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &no, Username: odd}},
		{Notification{TypeName: "GROUP", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &yes, Roles: []string{"GROUP_OWNER"}},
			legacyNotification{TypeName: "GROUP", IntervalMin: 60, EmailEnabled: &yes, SMSEnabled: &yes, Roles: []string{"GROUP_OWNER"}}},
		{Notification{TypeName: "PAGING", IntervalMin: 60, Fields: map[string]string{"serviceKey": "k"}},
			legacyNotification{TypeName: "PAGING", IntervalMin: 60, ServiceKey: "k"}},
		{Notification{TypeName: "ALERTING_A", IntervalMin: 60, Fields: map[string]string{"alertingAApiKey": "k", "alertingARegion": "EU"}},
			legacyNotification{TypeName: "ALERTING_A", IntervalMin: 60, AlertingAAPIKey: "k", AlertingARegion: "EU"}},
		{Notification{TypeName: "ALERTING_B", IntervalMin: 60, Fields: map[string]string{"alertingBApiKey": "k", "alertingBRoutingKey": "r"}},
			legacyNotification{TypeName: "ALERTING_B", IntervalMin: 60, AlertingBAPIKey: "k", AlertingBRoutingKey: "r"}},
		{Notification{TypeName: "CHATA", IntervalMin: 60, Fields: map[string]string{"notificationToken": "t", "roomName": "ops"}},
			legacyNotification{TypeName: "CHATA", IntervalMin: 60, NotificationToken: "t", RoomName: "ops"}},
		{Notification{TypeName: "CHAT_B", IntervalMin: 60, Fields: map[string]string{"apiToken": "t", "channelName": "#ops"}},
			legacyNotification{TypeName: "CHAT_B", IntervalMin: 60, APIToken: "t", ChannelName: "#ops"}},
		{Notification{TypeName: "CHAT_C", IntervalMin: 60, Fields: map[string]string{"chatCWebhookUrl": "https://c.example.com/x?a=1&b=<2>"}},
			legacyNotification{TypeName: "CHAT_C", IntervalMin: 60, ChatCWebhookURL: "https://c.example.com/x?a=1&b=<2>"}},
		{Notification{TypeName: "METRICS_A", IntervalMin: 60, Fields: map[string]string{"metricsAApiKey": "k"}},
			legacyNotification{TypeName: "METRICS_A", IntervalMin: 60, MetricsAAPIKey: "k"}},
		{Notification{TypeName: "WEBHOOK", IntervalMin: 60, Fields: map[string]string{"webhookUrl": "https://h.example.com/x", "webhookSecret": odd}},
			legacyNotification{TypeName: "WEBHOOK", IntervalMin: 60, WebhookURL: "https://h.example.com/x", WebhookSecret: odd}},
	} {
		got, _ := json.Marshal(tc.n)
		want, _ := json.Marshal(tc.old)
		if !bytes.Equal(got, want) {
			t.Errorf("json.Marshal:\n got %s\nwant %s", got, want)
		}
		if got, want := encodeNoHTML(t, tc.n), encodeNoHTML(t, tc.old); got != want {
			t.Errorf("without HTML escapes:\n got %s\nwant %s", got, want)
		}
		var back Notification
		if err := json.Unmarshal(want, &back); err != nil || !reflect.DeepEqual(back, tc.n) {
			t.Errorf("read back %+v (%v), want %+v", back, err, tc.n)
		}
	}
}

func encodeNoHTML(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// legacyInput is how a request's notification was decoded before the kinds' fields were held
// by name.
type legacyInput struct {
	TypeName            *string  `json:"typeName"`
	DelayMin            *int     `json:"delayMin"`
	IntervalMin         *int     `json:"intervalMin"`
	EmailAddress        *string  `json:"emailAddress"`
	EmailEnabled        *bool    `json:"emailEnabled"`
	SMSEnabled          *bool    `json:"smsEnabled"`
	MobileNumber        *string  `json:"mobileNumber"`
	Username            *string  `json:"username"`
	Role                *string  `json:"role"`
	Roles               []string `json:"roles"`
	APIToken            *string  `json:"apiToken"`
	ChannelName         *string  `json:"channelName"`
	NotificationToken   *string  `json:"notificationToken"`
	RoomName            *string  `json:"roomName"`
	MetricsAAPIKey      *string  `json:"metricsAApiKey"`
	ServiceKey          *string  `json:"serviceKey"`
	AlertingAAPIKey     *string  `json:"alertingAApiKey"`
	AlertingARegion     *string  `json:"alertingARegion"`
	AlertingBAPIKey     *string  `json:"alertingBApiKey"`
	AlertingBRoutingKey *string  `json:"alertingBRoutingKey"`
	ChatCWebhookURL     *string  `json:"chatCWebhookUrl"`
	WebhookURL          *string  `json:"webhookUrl"`
	WebhookSecret       *string  `json:"webhookSecret"`
}

// A request's notifications decode as before: the same fields given, and the same error for
// a field of the wrong type or an unknown one, with its path.
func TestNotificationInputDecodesAsBefore(t *testing.T) {
	for _, body := range []string{
		`[{"typeName":"WEBHOOK","webhookUrl":"https://h.example.com/x","webhookSecret":"s","delayMin":5}]`,
		`[{"typeName":"USER","username":"ada","emailEnabled":true,"smsEnabled":false}]`,
		`[{"typeName":"GROUP","role":"GROUP_OWNER","roles":["GROUP_READ_ONLY"]}]`,
		`[{"typeName":"PAGING","ServiceKey":"in another case"}]`,
		`[{"typeName":"PAGING","serviceKey":null}]`,
		`[{"typeName":"PAGING","serviceKey":""}]`,
		`[{"typeName":"PAGING","serviceKey":42}]`,
		`[{"typeName":"PAGING","serviceKey":{"a":1}}]`,
		`[{"typeName":"PAGING","serviceKey":["k"]}]`,
		`[{"typeName":"PAGING","serviceKey":true}]`,
		`[{"typeName":"PAGING","delayMin":"soon"}]`,
		`[{"typeName":"PAGING","pigeon":"x"}]`,
		`[{"typeName":"PAGING","Fields":{"serviceKey":"k"}}]`,
		`[{"typeName":7}]`,
		`[null]`,
		`["WEBHOOK"]`,
		`[7]`,
		`[{}]`,
	} {
		var got struct {
			Notifications []NotificationInput `json:"notifications"`
		}
		var want struct {
			Notifications []legacyInput `json:"notifications"`
		}
		wrapped := `{"notifications":` + body + `}`
		gotErr, wantErr := strictDecode(wrapped, &got), strictDecode(wrapped, &want)
		if errText(gotErr) != errText(wantErr) {
			t.Errorf("%s: error %v, want %v", body, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			continue
		}
		for i := range want.Notifications {
			g, w := got.Notifications[i], legacyFields(want.Notifications[i])
			if g.TypeName == nil != (want.Notifications[i].TypeName == nil) || !reflect.DeepEqual(givenFields(g.Fields), w) {
				t.Errorf("%s: fields %v, want %v", body, givenFields(g.Fields), w)
			}
		}
	}
}

// strictDecode decodes as the API does: unknown attributes refused.
func strictDecode(body string, v any) error {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// errText is what the API's answer to a decoding error depends on: its text, and for a type
// error the attribute and the JSON value's kind.
func errText(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return "type error at " + typ.Field + ": " + typ.Value
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// givenFields are the fields given as strings (null is as good as absent).
func givenFields(fields map[string]*string) map[string]string {
	out := map[string]string{}
	for name, v := range fields {
		if v != nil {
			out[name] = *v
		}
	}
	return out
}

// legacyFields are the kind fields of a legacy input that were given as strings.
func legacyFields(in legacyInput) map[string]string {
	out := map[string]string{}
	b, _ := json.Marshal(in)
	var all map[string]any
	_ = json.Unmarshal(b, &all)
	for name, v := range all {
		if s, ok := v.(string); ok && name != "typeName" && name != "role" {
			out[name] = s
		}
	}
	return out
}
