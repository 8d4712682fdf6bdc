package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// hostile is a structure-aware way to spoil a valid body: it rewrites the decoded value (or the
// encoded bytes) the way an attacker would.
type hostile struct {
	name  string
	spoil func(body []byte, n int) []byte
}

// invalidUTF8 stands for bytes that are not UTF-8 until after encoding (encoding/json would
// replace them).
const invalidUTF8 = "\x00INVALID\x00"

var hostiles = []hostile{
	{"huge arrays", func(b []byte, n int) []byte { return reencode(b, growArrays(n)) }},
	{"empty items", func(b []byte, n int) []byte { return reencode(b, emptyArrays(n)) }},
	{"deep nesting", func(b []byte, n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}},
	{"deep nesting in a field", func(b []byte, n int) []byte { return reencode(b, nestValues(n)) }},
	{"huge numbers", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(json.Number("1e999999"))) }},
	{"long integers", func(b []byte, _ int) []byte {
		return reencode(b, replaceScalars(json.Number("92233720368547758089223372036854775808")))
	}},
	{"negative overflow", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(json.Number("-1e309"))) }},
	{"wrong types", func(b []byte, _ int) []byte { return reencode(b, swapTypes) }},
	{"invalid UTF-8", func(b []byte, _ int) []byte {
		return bytes.ReplaceAll(reencode(b, replaceStrings(invalidUTF8)), []byte(invalidUTF8), []byte("\xff\xfe\xc0\xaf"))
	}},
	{"lone surrogates", func(b []byte, _ int) []byte {
		return bytes.ReplaceAll(reencode(b, replaceStrings(invalidUTF8)), []byte(invalidUTF8), []byte(`\ud800\udfff\ud800`))
	}},
	{"huge strings", func(b []byte, n int) []byte {
		return reencode(b, replaceStrings(strings.Repeat("x", min(64*n, 300<<10))))
	}},
	{"duplicate keys", func(b []byte, _ int) []byte { return bytes.Replace(b, []byte("{"), []byte(`{"a":1,"a":[],`), 1) }},
	{"nulls", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(nil)) }},
	{"truncated", func(b []byte, _ int) []byte { return b[:len(b)/2] }},
}

// reencode decodes body, rewrites it with f, and encodes it again (body as it is when it does
// not decode).
func reencode(body []byte, f func(any) any) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	out, err := json.Marshal(f(v))
	if err != nil {
		return body
	}
	return out
}

// walk rewrites every value below v (children first) with f.
func walk(v any, f func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = walk(c, f)
		}
	case []any:
		for i, c := range x {
			x[i] = walk(c, f)
		}
	}
	return f(v)
}

// growArrays makes each outermost array n copies of its first item (an empty object when it
// has none); arrays inside stay as they are, so the body grows by n, not n to a power.
func growArrays(n int) func(any) any {
	var grow func(v any) any
	grow = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				x[k] = grow(c)
			}
		case []any:
			var item any = map[string]any{}
			if len(x) > 0 {
				item = x[0]
			}
			return slices.Repeat([]any{item}, n)
		}
		return v
	}
	return grow
}

func emptyArrays(n int) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			if _, ok := v.([]any); ok {
				return slices.Repeat([]any{map[string]any{}}, n)
			}
			return v
		})
	}
}

func nestValues(n int) func(any) any {
	return func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k := range m {
			var deep any = "x"
			for range n {
				deep = []any{deep}
			}
			m[k] = deep
			break
		}
		return m
	}
}

func replaceScalars(with any) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			switch v.(type) {
			case map[string]any, []any:
				return v
			}
			return with
		})
	}
}

func replaceStrings(with string) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			if _, ok := v.(string); ok {
				return with
			}
			return v
		})
	}
}

// swapTypes gives every value another JSON type.
func swapTypes(v any) any {
	return walk(v, func(v any) any {
		switch x := v.(type) {
		case string:
			return json.Number("7")
		case json.Number:
			return string(x)
		case bool:
			return "true"
		case map[string]any:
			if len(x) > 0 {
				return x
			}
			return []any{}
		case []any:
			return map[string]any{"0": x}
		}
		return false
	})
}

// hostileBudget is the most one request may allocate: a small multiple of what it sends, and
// a fixed allowance for serving any request at all.
func hostileBudget(body []byte) uint64 { return 40*uint64(len(body)) + 16<<20 }

// checkHostileAnswer: never a 5xx, every 4xx with the error body, memory within budget.
func checkHostileAnswer(t *testing.T, what string, r *response, body []byte, alloc uint64) {
	t.Helper()
	switch {
	case r.Status >= 500:
		t.Errorf("%s: %d: %s", what, r.Status, r.Raw)
	case r.Status >= 400:
		if r.num("error") != float64(r.Status) || r.str("errorCode") == "" || r.str("detail") == "" || r.Body["parameters"] == nil {
			t.Errorf("%s: %d without the error body: %.200s", what, r.Status, r.Raw)
		}
	}
	if alloc > hostileBudget(body) {
		t.Errorf("%s: a %d-byte body allocated %d bytes (budget %d)", what, len(body), alloc, hostileBudget(body))
	}
}

// TestHostileBodies spoils a valid body of every write route in every hostile way, as the
// global owner (who gets furthest): no 5xx, no panic, the error body on every refusal, and
// memory bounded by the body's size.
func TestHostileBodies(t *testing.T) {
	e := newEnv(t)
	paths := fuzzPaths(t, e)
	for i, ep := range writeEndpoints {
		for _, h := range hostiles {
			for _, n := range []int{3, 20_000} {
				body := h.spoil([]byte(ep.seeds[0]), n)
				var r *response
				alloc := allocated(func() {
					r = e.Owner.send(ep.method, paths[i], body, http.Header{"Content-Type": {"application/json"}})
				})
				checkHostileAnswer(t, fmt.Sprintf("%s %s, %s ×%d", ep.method, ep.path, h.name, n), r, body, alloc)
			}
		}
	}
}

// FuzzHostileBodies is TestHostileBodies driven by the fuzzer: any endpoint, any hostile way,
// any size, from any base body (the seeds are each endpoint's valid bodies). Its seeds run
// in go test.
func FuzzHostileBodies(f *testing.F) {
	for i, ep := range writeEndpoints {
		for j := range hostiles {
			f.Add(uint8(i), uint8(j), uint16(1000), []byte(ep.seeds[0]))
		}
	}
	e := newEnvTB(f)
	var paths []string
	f.Fuzz(func(t *testing.T, endpoint, way uint8, n uint16, base []byte) {
		e.t, e.Owner.t = t, t
		if paths == nil {
			paths = fuzzPaths(t, e)
		}
		i, h := int(endpoint)%len(writeEndpoints), hostiles[int(way)%len(hostiles)]
		body := h.spoil(base, int(n)%20_000+1)
		var r *response
		alloc := allocated(func() {
			r = e.Owner.send(writeEndpoints[i].method, paths[i], body, http.Header{"Content-Type": {"application/json"}})
		})
		checkHostileAnswer(t, fmt.Sprintf("%s %s, %s", writeEndpoints[i].method, writeEndpoints[i].path, h.name), r, body, alloc)
	})
}

// TestHostileTimes posts the times of a broken or hostile clock to every entry that takes a
// time (docs/api.md#times): the report's dates (the year 1, 1700), a second before 2000, and a
// time something happened more than a day ahead. Each is refused with the error body naming
// the item and field, and changes nothing: no batch is queued, no window made or changed, the
// alert is not acknowledged. Times at the bounds are taken.
func TestHostileTimes(t *testing.T) {
	e, _, p := newProjectEnv(t)
	a := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, time.Now().Add(-time.Hour)))
	now := time.Now().UTC()
	soon, later := now.Add(time.Hour).Format(time.RFC3339), now.Add(2*time.Hour).Format(time.RFC3339)
	ahead := now.Add(herald.MaxRequestTimeAhead + time.Hour).Format(time.RFC3339)
	window := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows",
		map[string]any{"alertTypeNames": []string{"HOST"}, "startDate": soon, "endDate": later}).wantStatus(200)

	var (
		observations = "/groups/" + p + "/observations"
		amAlerts     = api.PrometheusPath + "/groups/" + p + "/api/v2/alerts"
		amSilences   = api.PrometheusPath + "/groups/" + p + "/api/v2/silences"
		windows      = "/groups/" + p + "/maintenanceWindows"
		ack          = "/groups/" + p + "/alerts/" + a.ID
	)
	hostAt := func(at string) map[string]any {
		return map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "h1", "at": at}
	}
	promAt := func(starts, ends string) map[string]any {
		o := map[string]any{"labels": map[string]string{"alertname": "S1"}, "startsAt": starts}
		if ends != "" {
			o["endsAt"] = ends
		}
		return o
	}
	silenceAt := func(starts, ends string) map[string]any {
		return map[string]any{"matchers": []map[string]any{{"name": "alertname", "value": "S1"}},
			"startsAt": starts, "endsAt": ends, "createdBy": "ops", "comment": "clock"}
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		code               string
		params             []any
	}{
		{"observation at the year 1", "POST", observations, []any{hostAt("0001-01-02T00:00:00Z")}, herald.CodeInvalidObservation, []any{0, "at"}},
		{"observation at 1700", "POST", observations, []any{hostAt(soon), hostAt("1700-01-01T00:00:00Z")}, herald.CodeInvalidObservation, []any{1, "at"}},
		{"observation a second before 2000", "POST", observations, []any{hostAt("1999-12-31T23:59:59Z")}, herald.CodeInvalidObservation, []any{0, "at"}},
		{"observation over a day ahead", "POST", observations, []any{hostAt(ahead)}, herald.CodeInvalidObservation, []any{0, "at"}},
		{"observation endsAt 1700", "POST", observations, []any{map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": true,
			"labels": map[string]string{"alertname": "S1"}, "endsAt": "1700-01-01T00:00:00Z"}}, herald.CodeInvalidObservation, []any{0, "endsAt"}},
		{"Prometheus startsAt the year 1", "POST", amAlerts, []any{promAt("0001-01-02T00:00:00Z", "")}, herald.CodeInvalidObservation, []any{0, "startsAt"}},
		{"Prometheus startsAt 1700", "POST", amAlerts, []any{promAt(soon, ""), promAt("1700-01-01T00:00:00Z", "")}, herald.CodeInvalidObservation, []any{1, "startsAt"}},
		{"Prometheus startsAt over a day ahead", "POST", amAlerts, []any{promAt(ahead, "")}, herald.CodeInvalidObservation, []any{0, "startsAt"}},
		{"Prometheus endsAt 1999", "POST", amAlerts, []any{promAt("2000-01-01T00:00:00Z", "1999-12-31T23:59:59Z")}, herald.CodeInvalidObservation, []any{0, "endsAt"}},
		{"silence startsAt 1700", "POST", amSilences, silenceAt("1700-01-01T00:00:00Z", later), herald.CodeInvalidDate, []any{"startsAt"}},
		{"silence endsAt the year 1", "POST", amSilences, silenceAt(soon, "0001-01-02T00:00:00Z"), herald.CodeInvalidDate, []any{"endsAt"}},
		{"window startDate 1700", "POST", windows, map[string]any{"alertTypeNames": []string{"HOST"},
			"startDate": "1700-01-01T00:00:00Z", "endDate": later}, herald.CodeInvalidDate, []any{"startDate"}},
		{"window moved to the year 1", "PATCH", windows + "/" + window.str("id"), map[string]any{"startDate": "0001-01-02"}, herald.CodeInvalidDate, []any{"startDate"}},
		{"acknowledged until the year 1", "PATCH", ack, map[string]any{"acknowledgedUntil": "0001-01-02T00:00:00Z"}, herald.CodeInvalidDate, []any{"acknowledgedUntil"}},
	} {
		r := e.Owner.do(c.method, c.path, c.body)
		if r.Status != 400 || r.str("errorCode") != c.code || fmt.Sprint(r.Body["parameters"]) != fmt.Sprint(c.params) {
			t.Errorf("%s: %d %s, want 400 %s naming %v", c.name, r.Status, r.Raw, c.code, c.params)
			continue
		}
		checkHostileAnswer(t, c.name, r, nil, 0)
	}
	if waiting, err := e.Store.PendingObservations(t.Context(), p, 10); err != nil || len(waiting) != 0 {
		t.Errorf("refused requests queued %d batches (%v)", len(waiting), err)
	}
	if r := e.Owner.do("GET", windows, nil).wantStatus(200); r.num("totalCount") != 1 || r.results()[0]["startDate"] != window.str("startDate") {
		t.Errorf("refused requests made or changed windows: %s", r.Raw)
	}
	if r := e.Owner.do("GET", ack, nil).wantStatus(200); r.Body["acknowledgedUntil"] != nil {
		t.Errorf("a refused acknowledgement acknowledged the alert: %s", r.Raw)
	}

	// At the bounds: taken. A zero startsAt is no time, as Alertmanager takes it.
	e.Owner.do("POST", observations, []any{hostAt("2000-01-01T00:00:00Z"), hostAt(now.Add(herald.MaxRequestTimeAhead).Format(time.RFC3339))}).wantStatus(202)
	e.Owner.do("POST", amAlerts, []any{promAt("2000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"), promAt("0001-01-01T00:00:00Z", "")}).wantStatus(200)
	e.Owner.do("POST", amSilences, silenceAt("2000-01-01T00:00:00Z", "9999-12-31T23:59:59Z")).wantStatus(200)
	e.Owner.do("PATCH", ack, map[string]any{"acknowledgedUntil": "9999-12-31T23:59:59Z"}).wantStatus(200)
	e.Owner.do("PATCH", ack, map[string]any{"acknowledgedUntil": "2000-01-01T00:00:00Z"}).wantStatus(200)
	if r := e.Owner.do("GET", ack, nil).wantStatus(200); r.Body["acknowledgedUntil"] != nil {
		t.Errorf("acknowledging until 2000 did not un-acknowledge: %s", r.Raw)
	}
}

// A delayMin or intervalMin over its bound (a year of minutes) is refused with the error body,
// on project and global configurations, and creates nothing: 2147483647, a common "never",
// used to wrap into "at once", and 307445735 into a repeat every 26 s.
func TestHostileDelayAndInterval(t *testing.T) {
	e, _, p := newProjectEnv(t)
	configs := "/groups/" + p + "/alertConfigs"
	before := e.Owner.do("GET", configs, nil).wantStatus(200).num("totalCount")
	for _, c := range []struct {
		path, field string
		value       int
		code        string
	}{
		{configs, "delayMin", 2147483647, herald.CodeInvalidAttribute},
		{configs, "delayMin", herald.MaxDelayMin + 1, herald.CodeInvalidAttribute},
		{configs, "intervalMin", 307445735, herald.CodeNotificationIntervalRange},
		{"/globalAlertConfigs", "delayMin", 2147483647, herald.CodeInvalidAttribute},
		{"/globalAlertConfigs", "intervalMin", herald.MaxIntervalMin + 1, herald.CodeNotificationIntervalRange},
	} {
		body := map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "forAllGroups": true,
			"notifications": []any{map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com", c.field: c.value}}}
		if c.path == configs {
			delete(body, "forAllGroups")
		}
		r := e.Owner.do("POST", c.path, body).wantError(400, c.code)
		if params, _ := r.Body["parameters"].([]any); len(params) != 1 || params[0] != "notifications[0]."+c.field {
			t.Errorf("%s %s %d: parameters %v", c.path, c.field, c.value, r.Body["parameters"])
		}
	}
	if n := e.Owner.do("GET", configs, nil).wantStatus(200).num("totalCount"); n != before {
		t.Errorf("refused configurations were created: %v, were %v", n, before)
	}
	if n := e.Owner.do("GET", "/globalAlertConfigs", nil).wantStatus(200).num("totalCount"); n != 0 {
		t.Errorf("refused global configurations were created: %v", n)
	}
	e.Owner.do("POST", configs, map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{"typeName": "EMAIL",
		"emailAddress": "ops@example.com", "delayMin": herald.MaxDelayMin, "intervalMin": herald.MaxIntervalMin}}}).wantStatus(201)
}

// The batch endpoints (observations, the front door's alerts) refuse what every other body is
// refused for (docs/api.md#conventions), whichever reader takes the body (compact: read whole
// by hand; indented: streamed by encoding/json): an object naming a member twice, in any case
// or within a label set, is 400 INVALID_JSON naming it; a string that is not UTF-8 (which
// encoding/json would read as U+FFFD) is 400 INVALID_ATTRIBUTE naming the attribute that holds
// it. Nothing is queued. Two label names that differ only in case are two labels.
func TestBatchBodiesRefuseDuplicateNamesAndInvalidUTF8(t *testing.T) {
	e, _, p := newProjectEnv(t)
	const prom = `{"labels":{"alertname":"X","job":"api"},"annotations":{"summary":"s"}}`
	obsProm := `{"eventTypeName":"PROMETHEUS_ALERT","active":true,` + prom[1:]
	host := `{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h","hostnameAndPort":"h:27017"}`
	type spoil struct {
		name, item, code, param string
	}
	labelSpoils := func(item string) []spoil {
		return []spoil{
			{"a member twice", strings.Replace(item, `{`, `{"annotations":{},`, 1), "INVALID_JSON", "annotations"},
			{"a member twice in another case", strings.Replace(item, `{`, `{"Annotations":{},`, 1), "INVALID_JSON", "annotations"},
			{"a label twice", strings.Replace(item, `"job":"api"`, `"job":"api","job":"web"`, 1), "INVALID_JSON", "job"},
			{"a label name not UTF-8", strings.Replace(item, `"job"`, "\"j\xffob\"", 1), "INVALID_ATTRIBUTE", "labels"},
			{"a label value not UTF-8", strings.Replace(item, `"api"`, "\"a\xc0\xafpi\"", 1), "INVALID_ATTRIBUTE", "labels.job"},
			{"an annotation not UTF-8", strings.Replace(item, `"s"`, "\"\xfe\"", 1), "INVALID_ATTRIBUTE", "annotations.summary"},
		}
	}
	for _, ep := range []struct {
		path, good string
		spoils     []spoil
		status     int
	}{
		{"/groups/" + p + "/observations", host, append(labelSpoils(obsProm),
			spoil{"a host's name not UTF-8", strings.Replace(host, `"h:27017"`, "\"h\xff:27017\"", 1), "INVALID_ATTRIBUTE", "hostnameAndPort"},
			spoil{"a host id twice", strings.Replace(host, `"hostId":"h"`, `"hostId":"h","hostId":"i"`, 1), "INVALID_JSON", "hostId"}), 202},
		{api.PrometheusPath + "/groups/" + p + "/api/v2/alerts", prom, labelSpoils(prom), 200},
	} {
		for _, s := range ep.spoils {
			compact := []byte("[" + ep.good + "," + s.item + "]")
			var indented bytes.Buffer
			if err := json.Indent(&indented, compact, "", "  "); err != nil {
				t.Fatal(err)
			}
			for _, body := range [][]byte{compact, indented.Bytes()} {
				r := e.Owner.do("POST", ep.path, body).wantError(400, s.code)
				params, _ := r.Body["parameters"].([]any)
				if len(params) != 1 || !strings.EqualFold(fmt.Sprint(params[0]), s.param) {
					t.Errorf("%s, %s: the answer names %v, want %s: %s", ep.path, s.name, params, s.param, r.Raw)
				}
				if s.code != "INVALID_JSON" && !strings.HasPrefix(r.str("detail"), "Item 1: ") {
					t.Errorf("%s, %s: the answer does not say which item: %s", ep.path, s.name, r.Raw)
				}
			}
		}
		if waiting, _ := e.Store.PendingObservations(t.Context(), p, 10); len(waiting) != 0 {
			t.Fatalf("%s: refused bodies queued %d batches", ep.path, len(waiting))
		}
	}
	caseLabels := strings.Replace(prom, `"job":"api"`, `"job":"api","Job":"web"`, 1)
	e.Owner.do("POST", "/groups/"+p+"/observations", "["+strings.Replace(obsProm, `"job":"api"`, `"job":"api","Job":"web"`, 1)+"]").wantStatus(202)
	e.Owner.do("POST", api.PrometheusPath+"/groups/"+p+"/api/v2/alerts", "["+caseLabels+"]").wantStatus(200)
	waiting, err := e.Store.PendingObservations(t.Context(), p, 10)
	if err != nil || len(waiting) != 2 {
		t.Fatalf("%d batches wait (%v), want 2", len(waiting), err)
	}
	for _, b := range waiting {
		var obs []herald.Observation
		if err := json.Unmarshal(b, &obs); err != nil || len(obs) != 1 || obs[0].Labels["job"] != "api" || obs[0].Labels["Job"] != "web" {
			t.Errorf("queued %s (%v), want the labels job and Job", b, err)
		}
	}
}

// Every other body refuses a string that is not UTF-8 alike, naming the attribute, and
// changes nothing.
func TestBodiesRefuseInvalidUTF8(t *testing.T) {
	e, _, p := newProjectEnv(t)
	window := `{"alertTypeNames":["HOST"],"startDate":"2026-01-01T00:00:00Z","endDate":"2099-01-01T00:00:00Z","description":"%s"}`
	r := e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", fmt.Sprintf(window, "deploy \xff")).wantError(400, "INVALID_ATTRIBUTE")
	if params, _ := r.Body["parameters"].([]any); len(params) != 1 || params[0] != "description" {
		t.Errorf("the answer names %v, want description: %s", params, r.Raw)
	}
	if got := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows", nil).wantStatus(200).results(); len(got) != 0 {
		t.Errorf("a refused body made a window: %v", got)
	}
	e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", fmt.Sprintf(window, "deploy é")).wantStatus(200)
}

// An answer that shows a secret (a private key, once; the answer to the request that carried
// a password) is kept by no cache; every answer of the API, whatever its status, tells the
// browser not to read its body as anything but its Content-Type.
func TestSecretAnswersAreNotStoredAndNothingIsSniffed(t *testing.T) {
	e, org, p := newProjectEnv(t)
	secrets := map[string]*response{
		"a global key":        e.Owner.do("POST", "/admin/apiKeys", map[string]any{"desc": "ci", "roles": []string{"GLOBAL_READ_ONLY"}}).wantStatus(201),
		"an organization key": e.Owner.do("POST", "/orgs/"+org+"/apiKeys", map[string]any{"desc": "deploy", "roles": []string{"ORG_MEMBER"}}).wantStatus(201),
		"a user":              e.Owner.do("POST", "/users", userBody("ops", role(herald.GlobalReadOnly))).wantStatus(201),
	}
	for what, r := range secrets {
		if got := r.Header.Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
			t.Errorf("the answer creating %s has Cache-Control %q, want no-store", what, got)
		}
	}
	answers := map[string]*response{
		"a read":                   e.Owner.do("GET", "/groups/"+p, nil).wantStatus(200),
		"an error":                 e.Owner.do("GET", "/groups/"+herald.NewID(time.Now()), nil).wantStatus(404),
		"a challenge":              raw(t, "GET", e.Base+"/groups/"+p, "", nil).wantStatus(401),
		"a wrong method":           e.Owner.do("PUT", "/orgs", nil).wantStatus(405),
		"the front door":           e.Owner.do("GET", api.PrometheusPath+"/groups/"+p+"/api/v2/alerts", nil).wantStatus(200),
		"the front door's ok":      e.Owner.do("GET", api.PrometheusPath+"/groups/"+p+"/-/healthy", nil).wantStatus(200),
		"health":                   raw(t, "GET", strings.TrimSuffix(e.Base, api.BasePath)+"/healthz", "", nil).wantStatus(200),
		"a path served by nothing": raw(t, "GET", strings.TrimSuffix(e.Base, api.BasePath)+"/nothing", "", nil),
	}
	for what, r := range answers {
		if got := r.Header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q, want nosniff", what, r.Status, got)
		}
	}
}
