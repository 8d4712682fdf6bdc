package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// writeEndpoint is a route that takes a body, with seed bodies for the fuzzer: valid ones
// first (the first makes the resource the other endpoints act on) and ones just off valid. The
// path's {placeholders} name resources the fuzz env makes once: g a project, o its
// organization, cfg one of the project's alert configurations, alert an open project alert,
// galert an open global alert, gcfg a global configuration, mw a maintenance window, key an
// organization API key.
type writeEndpoint struct {
	method, path string
	seeds        []string
}

var writeEndpoints = []writeEndpoint{
	{"POST", "/groups/{g}/alertConfigs", []string{
		`{"eventTypeName":"HOST_DOWN","enabled":true,"notifications":[{"typeName":"GROUP","intervalMin":60,"delayMin":5,"emailEnabled":true,"smsEnabled":false,"roles":["GROUP_OWNER"]}]}`,
		`{"eventTypeName":"OUTSIDE_METRIC_THRESHOLD","metricThreshold":{"metricName":"CONNECTIONS","mode":"AVERAGE","operator":"GREATER_THAN","threshold":500,"units":"RAW"},"notifications":[{"typeName":"EMAIL","emailAddress":"ops@example.com","intervalMin":5}]}`,
		`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"GROUP","intervalMin":4}]}`,
		`{"eventTypeName":"HOST_DOWN","notifications":[]}`,
		`{"eventTypeName":"HOST_DOWN","matchers":[{"fieldName":"HOSTNAME","operator":"REGEX","value":"("}],"notifications":[{"typeName":"GROUP","roles":["GROUP_OWNER"]}]}`,
		`{"eventTypeName":"TOO_MANY_ELECTIONS","threshold":{"operator":"GREATER_THAN","threshold":1e309},"notifications":[{"typeName":"SMS","mobileNumber":"+15550100"}]}`,
	}},
	{"PUT", "/groups/{g}/alertConfigs/{cfg}", []string{
		`{"eventTypeName":"NO_PRIMARY","enabled":false,"notifications":[{"typeName":"GROUP","intervalMin":60,"roles":["GROUP_OWNER"],"emailEnabled":true}]}`,
		`{"id":"5f0000000000000000000000","eventTypeName":"NO_PRIMARY","notifications":[{"typeName":"GROUP"}]}`,
		`{"eventTypeName":"HOST_DOWN","notifications":[{"typeName":"WEBHOOK","webhookUrl":"http://[::1"}]}`,
	}},
	{"PATCH", "/groups/{g}/alertConfigs/{cfg}", []string{
		`{"enabled":true}`, `{"enabled":false}`, `{"enabled":"true"}`, `{}`, `{"enabled":true}{}`,
	}},
	{"PATCH", "/groups/{g}/alerts/{alert}", []string{
		`{"acknowledgedUntil":"2099-01-01T00:00:00Z","acknowledgementComment":"on it"}`,
		`{"acknowledgedUntil":"2000-01-01T00:00:00Z"}`, `{"acknowledgedUntil":"9999-12-31T23:59:59Z"}`,
		`{"acknowledgedUntil":"-0001-01-01T00:00:00Z"}`, `{"acknowledgedUntil":"tomorrow"}`, `{"acknowledgementComment":"x"}`,
	}},
	{"PATCH", "/globalAlerts/{galert}", []string{
		`{"acknowledgedUntil":"2099-01-01T00:00:00Z"}`, `{"acknowledgedUntil":"2000-01-01"}`, `{"acknowledgedUntil":12}`,
	}},
	{"POST", "/globalAlertConfigs", []string{
		`{"eventTypeName":"HOST_DOWN","enabled":true,"forAllGroups":true,"tags":["production"],"notifications":[{"typeName":"EMAIL","emailAddress":"ops@example.com"}]}`,
		`{"eventTypeName":"NO_PRIMARY","groupIds":["5f0000000000000000000000"],"notifications":[{"typeName":"EMAIL","emailAddress":"ops@example.com"}]}`,
		`{"eventTypeName":"HOST_DOWN","forAllGroups":true,"groupIds":[],"notifications":[{"typeName":"GROUP"}]}`,
	}},
	{"PATCH", "/globalAlertConfigs/{gcfg}", []string{
		`{"enabled":false}`, `{"enabled":null}`, `{"enabled":true,"eventTypeName":"NO_PRIMARY"}`,
	}},
	{"POST", "/groups/{g}/maintenanceWindows", []string{
		`{"alertTypeNames":["HOST"],"startDate":"2026-01-01T00:00:00Z","endDate":"2099-01-01T00:00:00Z","description":"upgrade"}`,
		`{"alertTypeNames":["HOST","REPLICA_SET"],"startDate":"2099-01-02","endDate":"2099-01-01"}`,
		`{"alertTypeNames":[],"startDate":"2026-01-01T00:00:00+14:00","endDate":"9999-12-31T23:59:59-12:00"}`,
		`{"alertTypeNames":["DISK"],"startDate":"2026-01-01T00:00:00Z","endDate":"2099-01-01T00:00:00Z"}`,
	}},
	{"PATCH", "/groups/{g}/maintenanceWindows/{mw}", []string{
		`{"description":"longer"}`, `{"endDate":"2000-01-01T00:00:00Z"}`, `{}`, `{"alertTypeNames":null}`,
	}},
	{"PUT", "/groups/{g}/integrations/WEBHOOK", []string{
		`{"type":"WEBHOOK","url":"https://hooks.example.com/in/aaaa1111","secret":"s3cret"}`,
		`{"type":"WEBHOOK","secret":"other"}`, `{"type":"PAGING","serviceKey":"k"}`, `{"type":"WEBHOOK","url":"ftp://x"}`,
	}},
	{"POST", "/groups/{g}/integrations/PAGING", []string{
		`{"type":"PAGING","serviceKey":"0123456789abcdef0123456789abcdef"}`, `{"type":"PAGING"}`, `{"type":"paging","serviceKey":"k"}`,
	}},
	{"PUT", "/groups/{g}/integrations/SCRAPER_A", []string{
		`{"type":"SCRAPER_A","username":"scraper","password":"pw","listenAddress":"10.0.0.5:9216","serviceDiscovery":"http","scheme":"http","enabled":true}`,
		`{"type":"SCRAPER_A","username":"scraper","password":"pw","listenAddress":"10.0.0.5:99999","serviceDiscovery":"file","scheme":"https","enabled":true}`,
		`{"type":"SCRAPER_A","username":"s","password":"p","listenAddress":"[::1]:9216","serviceDiscovery":"http","scheme":"https","tlsPemPath":"relative.pem","enabled":false}`,
	}},
	{"POST", "/groups/{g}/observations", []string{
		`[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h1","disks":[{"partitionName":"/dev/sda1"}]}]`,
		`[{"metricName":"CONNECTIONS","value":1e308,"units":"RAW","hostId":"h1","at":"2026-01-01T00:00:00Z"}]`,
		`[{"eventTypeName":"NO_PRIMARY","active":false,"replicaSetName":"rs0","currentValue":{"number":1,"units":"RAW"}}]`,
		`[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h1:disks"}]`, `[]`, `[{}]`, `[null]`, `{"eventTypeName":"HOST_DOWN"}`,
	}},
	{"POST", "/users", []string{
		`{"username":"jane","password":"s3cret-Passw0rd","emailAddress":"jane@example.com","firstName":"Jane","lastName":"Doe","roles":[{"roleName":"GLOBAL_READ_ONLY"}]}`,
		`{"username":"joe","password":"s3cret-Passw0rd","emailAddress":"joe@example.com","firstName":"Joe","lastName":"Doe","roles":[{"orgId":"5f0000000000000000000000","roleName":"ORG_MEMBER"}]}`,
		`{"username":"jim","password":"short","emailAddress":"jim@example.com","firstName":"Jim","lastName":"Doe","roles":[]}`,
		`{"username":"jo\"e","password":"s3cret-Passw0rd","emailAddress":"joe@example.com","firstName":"Joe","lastName":"Doe","roles":[{"roleName":""}]}`,
	}},
	{"POST", "/orgs", []string{
		`{"name":"globex"}`, `{"name":""}`, `{"name":"globex","orgId":"x"}`, `{"name":"` + strings.Repeat("n", 65) + `"}`,
	}},
	{"POST", "/groups", []string{
		`{"name":"staging","orgId":"5f0000000000000000000000"}`, `{"name":"staging"}`, `{"name":"x","orgId":"","tags":[""]}`,
	}},
	{"POST", "/admin/apiKeys", []string{
		`{"desc":"ci","roles":["GLOBAL_READ_ONLY"]}`, `{"desc":"ci","roles":[]}`, `{"desc":" ","roles":["ORG_OWNER"]}`,
	}},
	{"POST", "/orgs/{o}/apiKeys", []string{
		`{"desc":"deploy","roles":["ORG_MEMBER"]}`, `{"desc":"deploy","roles":["GLOBAL_OWNER"]}`, `{"roles":["ORG_OWNER"]}`,
	}},
	{"PATCH", "/groups/{g}/apiKeys/{key}", []string{
		`{"roles":["GROUP_READ_ONLY"]}`, `{"roles":["ORG_OWNER"]}`, `{"roles":[]}`, `{"roles":"GROUP_OWNER"}`,
	}},
}

// FuzzWriteEndpoints sends any body to every write endpoint, as the global owner: whatever it
// is, the answer is never a 5xx, and every 4xx carries the error body.
func FuzzWriteEndpoints(f *testing.F) {
	for i, ep := range writeEndpoints {
		for _, s := range slices.Concat(ep.seeds, []string{``, `null`, `{`, `[]`, `"x"`}) {
			f.Add(uint8(i), []byte(s))
		}
	}
	e := newEnvTB(f)
	var paths []string // the endpoints' paths with the env's ids, made by the first input
	f.Fuzz(func(t *testing.T, endpoint uint8, body []byte) {
		e.t, e.Owner.t = t, t
		if paths == nil {
			paths = fuzzPaths(t, e)
		}
		i := int(endpoint) % len(writeEndpoints)
		r := e.Owner.do(writeEndpoints[i].method, paths[i], body)
		switch {
		case r.Status >= 500:
			t.Fatalf("%s %s answered %d to %q: %s\nlog tail: %s", writeEndpoints[i].method, paths[i], r.Status, body, r.Raw, logTail(e.Logs()))
		case r.Status >= 400:
			wantKeys(t, r.Body, "detail", "error", "errorCode", "parameters", "reason")
			if r.num("error") != float64(r.Status) || r.str("reason") != http.StatusText(r.Status) || r.str("detail") == "" || r.str("errorCode") == "" {
				t.Fatalf("%s %s: error body does not match status %d: %s", writeEndpoints[i].method, paths[i], r.Status, r.Raw)
			}
		}
	})
}

// newEnvTB is newEnv for a fuzz target: the server and its Redis live as long as tb. Its
// clients report to the *testing.T of each input, set by the target.
func newEnvTB(tb testing.TB) *env {
	tb.Helper()
	st := store.New(storetest.Redis(tb))
	logs := &testkit.Buffer{}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(logs), zap.DebugLevel))
	srv := apitest.Serve(tb, st, dispatch.NewDispatcher(st, herald.SystemClock{}), log, api.Config{GitHash: "testhash", Version: "test"})
	k, priv := apitest.OwnerKey(tb, st, "fuzz owner")
	base := srv.URL + api.BasePath
	return &env{srv: srv, Base: base, Store: st, logs: logs, Owner: &client{base: base, user: k.PublicKey, pass: priv, KeyID: k.ID}}
}

// fuzzPaths makes the resources the write endpoints act on and returns the endpoints' paths.
func fuzzPaths(t *testing.T, e *env) []string {
	org := e.org("fuzz")
	p := e.project(org, "fuzz")
	ids := map[string]string{"{g}": p, "{o}": org}
	create := func(path, endpoint string, status int) string {
		i := slices.IndexFunc(writeEndpoints, func(ep writeEndpoint) bool { return ep.method == "POST" && ep.path == endpoint })
		return e.Owner.do("POST", path, writeEndpoints[i].seeds[0]).wantStatus(status).str("id")
	}
	ids["{cfg}"] = create("/groups/"+p+"/alertConfigs", "/groups/{g}/alertConfigs", 201)
	ids["{gcfg}"] = create("/globalAlertConfigs", "/globalAlertConfigs", 201)
	ids["{mw}"] = create("/groups/"+p+"/maintenanceWindows", "/groups/{g}/maintenanceWindows", 200)
	ids["{key}"] = create("/orgs/"+org+"/apiKeys", "/orgs/{o}/apiKeys", 201)
	now := time.Now()
	for _, global := range []bool{false, true} {
		a := herald.Alert{ID: herald.NewID(now), GroupID: p, AlertConfigID: ids["{cfg}"], EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: "h1"}
		name := "{alert}"
		if global {
			a.AlertConfigID, name = ids["{gcfg}"], "{galert}"
		}
		if err := e.Store.SaveAlert(context.Background(), a, global, ""); err != nil {
			t.Fatal(err)
		}
		ids[name] = a.ID
	}
	paths := make([]string, len(writeEndpoints))
	for i, ep := range writeEndpoints {
		paths[i] = ep.path
		for ph, id := range ids {
			paths[i] = strings.ReplaceAll(paths[i], ph, id)
		}
		if strings.Contains(paths[i], "{") {
			t.Fatalf("no id for %s", ep.path)
		}
	}
	return paths
}

// logTail is the last lines of a log, where a failure's cause is.
func logTail(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}
