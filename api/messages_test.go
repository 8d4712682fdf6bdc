package api_test

import (
	"strings"
	"testing"
	"time"
)

// wantDetail fails unless the error answer's detail holds each of parts.
func wantDetail(r *response, parts ...string) {
	r.t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.str("detail"), p) {
			r.t.Errorf("detail %q does not say %q", r.str("detail"), p)
		}
	}
}

// A body that is not JSON is answered with what the parser found and where: line, column and
// offset of a body read whole, the item of an array read item by item.
func TestInvalidJSONSaysWhereAndWhat(t *testing.T) {
	e, _, p := newProjectEnv(t)
	body := "{\n  \"eventTypeName\": \"HOST_DOWN\",\n  }"
	r := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", body).wantError(400, "INVALID_JSON")
	wantDetail(r, "invalid character '}' looking for beginning of object key string", "line 3, column 3 (offset 36)")

	r = e.Owner.do("POST", "/groups/"+p+"/alertConfigs", `{"eventTypeName": "HOST_DOWN"`).wantError(400, "INVALID_JSON")
	wantDetail(r, "ends inside a value")

	items := `[{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "h1"},` + "\n" + `{"eventTypeName" "HOST_DOWN"}]`
	r = e.Owner.do("POST", "/groups/"+p+"/observations", items).wantError(400, "INVALID_JSON")
	wantDetail(r, "invalid character '\"' after object key", "at item 1")
}

// A date that does not parse is named by its attribute, with the form it must have.
func TestBadDateNamesTheAttribute(t *testing.T) {
	e, _, p := newProjectEnv(t)
	end := iso(time.Now().Add(time.Hour))
	r := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": "tomorrow", "endDate": end}).
		wantError(400, "INVALID_DATE")
	wantErrorParameter(r, "startDate")
	wantDetail(r, "Attribute startDate must be an ISO 8601 date-time", `"tomorrow" given`)

	r = e.Owner.do("POST", "/groups/"+p+"/observations", []any{hostDown("h1"), map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "h2", "at": "yesterday"}}).
		wantError(400, "INVALID_DATE")
	wantErrorParameter(r, "at")
	wantDetail(r, "Item 1: Attribute at must be an ISO 8601 date-time")
}

// A value that is not one of its enumeration is answered with the valid value it is likely a
// typo of, and the valid values when they are few or none is near.
func TestUnknownEnumValueSaysTheValidOnes(t *testing.T) {
	e, _, p := newProjectEnv(t)
	hook := map[string]any{"typeName": "WEBHOOK", "webhookUrl": "https://hooks.example.com/x", "delayMin": 0, "intervalMin": 5}
	for _, c := range []struct {
		name  string
		body  map[string]any
		param string
		says  []string
	}{
		{"typo of an event type", map[string]any{"eventTypeName": "HOST_DWN", "notifications": []any{hook}},
			"eventTypeName", []string{"Event type HOST_DWN is not an alert type. Did you mean HOST_DOWN?"}},
		{"event type like none", map[string]any{"eventTypeName": "DISK_ON_FIRE", "notifications": []any{hook}},
			"eventTypeName", []string{"Valid values: ", "HOST_DOWN", "NO_PRIMARY"}},
		{"typo of a notification type", map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{"typeName": "WEBHOK"}}},
			"notifications[0].typeName", []string{"Did you mean WEBHOOK?", "Valid values: EMAIL, SMS,"}},
		{"matcher operator", map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{hook},
			"matchers": []any{map[string]any{"fieldName": "HOSTNAME", "operator": "EQUAL", "value": "db1"}}},
			"matchers[0].operator", []string{"Did you mean EQUALS? Valid values: CONTAINS, ENDS_WITH, EQUALS,"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", c.body).wantError(400, "INVALID_ENUM_VALUE")
			wantErrorParameter(r, c.param)
			wantDetail(r, c.says...)
		})
	}
	r := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOTS"},
		"startDate": iso(time.Now()), "endDate": iso(time.Now().Add(time.Hour))}).wantError(400, "INVALID_ENUM_VALUE")
	wantDetail(r, "Unknown alert type HOTS. Did you mean HOST? Valid values: ")
}
