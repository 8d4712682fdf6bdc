package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// promEnv is an API whose Prometheus front door takes Basic over plain HTTP, with a project
// and a key of the given role on it.
type promEnv struct {
	*env
	project string
	door    string // http://127.0.0.1:port/prometheus/groups/{project}
}

func newPromEnv(t *testing.T, cfg api.Config) *promEnv {
	e := newEnvWith(t, cfg)
	p := e.project(e.org("acme"), "prod")
	return &promEnv{env: e, project: p, door: e.srv.URL + api.PrometheusPath + "/groups/" + p}
}

// keyFor makes a project key of role and returns its Basic Authorization header.
func (e *promEnv) keyFor(role string) string {
	c := e.key("", herald.Role{GroupID: e.project, RoleName: role})
	return basicAuth(c.user, c.pass)
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func firingAlert(name string, extra ...string) map[string]any {
	labels := map[string]string{"alertname": name, "severity": "critical"}
	for i := 0; i+1 < len(extra); i += 2 {
		labels[extra[i]] = extra[i+1]
	}
	now := time.Now().UTC()
	return map[string]any{"labels": labels, "annotations": map[string]string{"summary": name + " fired"},
		"startsAt": now.Add(-time.Minute).Format(time.RFC3339Nano), "endsAt": now.Add(4 * time.Minute).Format(time.RFC3339Nano),
		"generatorURL": "http://prometheus.local/graph?g0.expr=up"}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Prometheus' POST /api/v2/alerts with Basic credentials is answered 200 and queues each alert
// as a PROMETHEUS_ALERT observation, exactly as POST observations queues its batch.
func TestPrometheusAlertsAreQueuedAsObservations(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupMonitoringAdmin)
	resolved := firingAlert("DiskFull")
	resolved["endsAt"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	r := amPost(t, e.door+"/api/v2/alerts", auth, mustJSON(t, []any{firingAlert("HighLatency", "job", "api"), resolved}))
	r.wantStatus(200)
	if len(r.Raw) != 0 {
		t.Errorf("Alertmanager answers no body; got %s", r.Raw)
	}
	waiting, err := e.Store.PendingObservations(t.Context(), e.project, 10)
	if err != nil || len(waiting) != 1 {
		t.Fatalf("%d batches wait (%v), want 1", len(waiting), err)
	}
	var obs []herald.Observation
	if err := json.Unmarshal(waiting[0], &obs); err != nil || len(obs) != 2 {
		t.Fatalf("queued %s (%v)", waiting[0], err)
	}
	if o := obs[0]; o.EventTypeName != herald.EventTypePrometheusAlert || !*o.Active || o.Labels["job"] != "api" ||
		o.Annotations["summary"] != "HighLatency fired" || o.GeneratorURL == "" || o.EndsAt == nil || o.At == nil {
		t.Errorf("firing alert queued as %+v", o)
	}
	if *obs[1].Active {
		t.Errorf("an alert whose endsAt has passed is queued firing: %+v", obs[1])
	}
	// An empty list is taken, and queues nothing.
	amPost(t, e.door+"/api/v2/alerts", auth, []byte(`[]`)).wantStatus(200)
	if waiting, _ := e.Store.PendingObservations(t.Context(), e.project, 10); len(waiting) != 1 {
		t.Errorf("%d batches wait after an empty post", len(waiting))
	}
}

// Bad input is a 400 with the error body and queues nothing: no labels, a bad generator URL,
// not JSON, an object instead of a list, an unknown field, too many alerts, a body over its limit.
func TestPrometheusBadAlertsAreRefused(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupOwner)
	noLabels := firingAlert("X")
	delete(noLabels, "labels")
	badURL := firingAlert("X")
	badURL["generatorURL"] = "javascript:alert(1)"
	many := make([]any, 5001)
	for i := range many {
		many[i] = map[string]any{"labels": map[string]string{"a": "b"}}
	}
	for _, c := range []struct {
		name string
		body []byte
		code string
	}{
		{"no labels", mustJSON(t, []any{firingAlert("A"), noLabels}), herald.CodeInvalidObservation},
		{"bad generator URL", mustJSON(t, []any{badURL}), herald.CodeInvalidObservation},
		{"not JSON", []byte(`[{"labels":`), herald.CodeInvalidJSON},
		{"an object", []byte(`{"labels":{"a":"b"}}`), herald.CodeInvalidJSON},
		{"unknown field", []byte(`[{"labels":{"a":"b"},"status":"firing"}]`), herald.CodeInvalidAttribute},
		{"5001 alerts", mustJSON(t, many), herald.CodeRequestTooLarge},
		{"over 10 MB", append(append([]byte(`[{"labels":{"a":"`), bytes.Repeat([]byte("x"), 11<<20)...), `"}}]`...), herald.CodeRequestTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := amPost(t, e.door+"/api/v2/alerts", auth, c.body)
			r.wantError(400, c.code)
		})
	}
	if waiting, _ := e.Store.PendingObservations(t.Context(), e.project, 10); len(waiting) != 0 {
		t.Errorf("refused posts queued %d batches", len(waiting))
	}
}

// Basic carries the private key itself: over plain HTTP it is refused unless the operator
// allows it, over TLS it is taken.
func TestPrometheusBasicNeedsTLSUnlessAllowed(t *testing.T) {
	e := newPromEnv(t, api.Config{})
	auth := e.keyFor(herald.GroupOwner)
	r := raw(t, "GET", e.door+"/api/v2/alerts", auth, nil)
	r.wantError(401, herald.CodeBasicRequiresHTTPS)
	if strings.Contains(e.Logs(), strings.TrimPrefix(auth, "Basic ")) {
		t.Error("the credentials were logged")
	}
	// Digest still works over HTTP on the front door.
	e.Owner.do("GET", api.PrometheusPath+"/groups/"+e.project+"/api/v2/alerts", nil).wantStatus(200)

	// The same server over TLS takes Basic.
	st := store.New(storetest.Redis(t))
	srv := httptest.NewTLSServer(apitest.New(t, st, dispatch.NewDispatcher(st, herald.SystemClock{}), nil, api.Config{}))
	t.Cleanup(srv.Close)
	k, priv := apitest.OwnerKey(t, st, "prom")
	owner := &client{t: t, base: srv.URL + api.BasePath, user: k.PublicKey, pass: priv, httpc: srv.Client()}
	orgR := owner.do("POST", "/orgs", map[string]any{"name": "tls"})
	p := owner.do("POST", "/groups", map[string]any{"name": "tls", "orgId": orgR.str("id")}).str("id")
	rawVia(t, srv.Client(), "GET", srv.URL+api.PrometheusPath+"/groups/"+p+"/api/v2/alerts", basicAuth(k.PublicKey, priv), nil).wantStatus(200)
	// Basic is the front door's only: the rest of the API refuses it even over TLS.
	rawVia(t, srv.Client(), "GET", srv.URL+api.BasePath+"/groups/"+p, basicAuth(k.PublicKey, priv), nil).wantStatus(401)
}

// A wrong private key is a 401, and guessing is throttled like Digest guesses: after the
// limit, even the right key is answered 429 from that address.
func TestPrometheusBasicWrongKeyIsThrottled(t *testing.T) {
	limits := store.AuthLimits{Window: time.Minute, PerPair: 3, PerAddress: 100, PerName: 50}
	e := newPromEnv(t, api.Config{BasicOverHTTP: true, AuthLimits: limits})
	c := e.key("", herald.Role{GroupID: e.project, RoleName: herald.GroupOwner})
	for i := range 3 {
		r := raw(t, "GET", e.door+"/api/v2/alerts", basicAuth(c.user, fmt.Sprintf("wrong-%d", i)), nil)
		r.wantStatus(401)
	}
	r := raw(t, "GET", e.door+"/api/v2/alerts", basicAuth(c.user, c.pass), nil)
	r.wantError(429, herald.CodeRateLimited)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// An unknown key is a 401 too.
	raw(t, "GET", e.door+"/api/v2/alerts", basicAuth("nobody", "x"), nil).wantStatus(401)
}

// Roles: a read-only key reads alerts and silences but cannot post alerts or silences.
func TestPrometheusReadOnlyCannotPost(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	ro := e.keyFor(herald.GroupReadOnly)
	amPost(t, e.door+"/api/v2/alerts", ro, mustJSON(t, []any{firingAlert("A")})).wantError(401, herald.CodeUserUnauthorized)
	amPost(t, e.door+"/api/v2/silences", ro, mustJSON(t, silence("alertname", "A"))).wantError(401, herald.CodeUserUnauthorized)
	raw(t, "GET", e.door+"/api/v2/alerts", ro, nil).wantStatus(200)
	raw(t, "GET", e.door+"/api/v2/silences", ro, nil).wantStatus(200)
	raw(t, "GET", e.door+"/api/v2/status", ro, nil).wantStatus(200)
	if waiting, _ := e.Store.PendingObservations(t.Context(), e.project, 10); len(waiting) != 0 {
		t.Errorf("a refused post queued %d batches", len(waiting))
	}
}

func silence(name, value string) map[string]any {
	now := time.Now().UTC()
	return map[string]any{"matchers": []map[string]any{{"name": name, "value": value, "isRegex": false, "isEqual": true}},
		"startsAt": now.Format(time.RFC3339), "endsAt": now.Add(time.Hour).Format(time.RFC3339),
		"createdBy": "ops", "comment": "deploy"}
}

// A silence made through the front door is a maintenance window with matchers: listed,
// readable, suppressing the alerts its matchers select in GET alerts, and expired by DELETE.
func TestPrometheusSilencesAreWindows(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupMonitoringAdmin)
	ctx := t.Context()
	now := time.Now()
	for _, name := range []string{"Latency", "DiskFull"} {
		labels := herald.Labels{"alertname": name, "job": "api"}
		a := herald.Alert{ID: herald.NewID(now), GroupID: e.project, AlertConfigID: "cfg1", EventTypeName: herald.EventTypePrometheusAlert,
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), Labels: labels, Fingerprint: labels.Fingerprint()}
		if err := e.Store.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	r := amPost(t, e.door+"/api/v2/silences", auth, mustJSON(t, silence("alertname", "Latency")))
	r.wantStatus(200)
	id := r.str("silenceID")
	if id == "" {
		t.Fatalf("no silenceID: %s", r.Raw)
	}
	w, err := e.Store.Window(ctx, e.project, id)
	if err != nil || len(w.Matchers) != 1 || w.CreatedBy != "ops" || w.Description != "deploy" {
		t.Fatalf("window %+v (%v)", w, err)
	}
	e.Owner.do("GET", "/groups/"+e.project+"/maintenanceWindows/"+id, nil).wantStatus(200)

	var alerts []herald.GettableAlert
	getJSON(t, e.door+"/api/v2/alerts", auth, &alerts)
	states := map[string]herald.GettableAlert{}
	for _, a := range alerts {
		states[a.Labels["alertname"]] = a
	}
	if a := states["Latency"]; a.Status.State != "suppressed" || len(a.Status.SilencedBy) != 1 || a.Status.SilencedBy[0] != id || a.Fingerprint == "" {
		t.Errorf("silenced alert shown as %+v", a)
	}
	if a := states["DiskFull"]; a.Status.State != "active" || len(a.Status.SilencedBy) != 0 {
		t.Errorf("unsilenced alert shown as %+v", a)
	}
	getJSON(t, e.door+"/api/v2/alerts?silenced=false", auth, &alerts)
	if len(alerts) != 1 || alerts[0].Labels["alertname"] != "DiskFull" {
		t.Errorf("silenced=false lists %+v", alerts)
	}
	getJSON(t, e.door+`/api/v2/alerts?filter=alertname%3D~"Disk.*"&filter=job%3D"api"`, auth, &alerts)
	if len(alerts) != 1 || alerts[0].Labels["alertname"] != "DiskFull" {
		t.Errorf("filter lists %+v", alerts)
	}

	var silences []herald.GettableSilence
	getJSON(t, e.door+"/api/v2/silences", auth, &silences)
	if len(silences) != 1 || silences[0].ID != id || silences[0].Status.State != "active" || silences[0].Comment != "deploy" {
		t.Errorf("silences %+v", silences)
	}
	getJSON(t, e.door+`/api/v2/silences?filter=alertname%3D"Other"`, auth, &silences)
	if len(silences) != 0 {
		t.Errorf("a filter that selects nothing lists %+v", silences)
	}
	raw(t, "DELETE", e.door+"/api/v2/silence/"+id, auth, nil).wantStatus(200)
	raw(t, "GET", e.door+"/api/v2/silence/"+id, auth, nil).wantError(404, herald.CodeMaintenanceWindowNotFound)
	getJSON(t, e.door+"/api/v2/alerts?silenced=false", auth, &alerts)
	if len(alerts) != 2 {
		t.Errorf("after expiry, %d unsilenced alerts, want 2", len(alerts))
	}
	if w, _ := e.Store.Window(ctx, e.project, id); w.EndDate.After(time.Now()) {
		t.Errorf("an expired silence's window ends at %s", w.EndDate)
	}
}

// A silence Alertmanager would refuse is a 400 and creates nothing.
func TestPrometheusBadSilencesAreRefused(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupOwner)
	badRegex := silence("alertname", "(")
	badRegex["matchers"].([]map[string]any)[0]["isRegex"] = true
	matchesEverything := silence("alertname", ".*")
	matchesEverything["matchers"].([]map[string]any)[0]["isRegex"] = true
	noMatchers := silence("a", "b")
	noMatchers["matchers"] = []any{}
	noComment := silence("a", "b")
	delete(noComment, "comment")
	backwards := silence("a", "b")
	backwards["endsAt"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for name, body := range map[string]map[string]any{"bad regex": badRegex, "matches everything": matchesEverything,
		"no matchers": noMatchers, "no comment": noComment, "ends before it starts": backwards} {
		r := amPost(t, e.door+"/api/v2/silences", auth, mustJSON(t, body))
		if r.Status != 400 || r.str("errorCode") == "" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	var silences []herald.GettableSilence
	getJSON(t, e.door+"/api/v2/silences", auth, &silences)
	if len(silences) != 0 {
		t.Errorf("refused silences were created: %+v", silences)
	}
	raw(t, "GET", e.door+`/api/v2/alerts?filter=alertname%3D~"("`, auth, nil).wantError(400, herald.CodeInvalidQueryParameter)
}

// Status says what amtool reads; healthy and ready answer 200.
func TestPrometheusStatusAndHealth(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupReadOnly)
	var st struct {
		Cluster struct {
			Status string `json:"status"`
			Peers  []any  `json:"peers"`
		} `json:"cluster"`
		Config      map[string]string `json:"config"`
		VersionInfo map[string]string `json:"versionInfo"`
		Uptime      string            `json:"uptime"`
	}
	getJSON(t, e.door+"/api/v2/status", auth, &st)
	if st.Cluster.Status != "disabled" || st.Cluster.Peers == nil || st.VersionInfo["version"] != "test" || st.Uptime == "" {
		t.Errorf("status %+v", st)
	}
	raw(t, "GET", e.door+"/-/healthy", auth, nil).wantStatus(200)
	raw(t, "GET", e.door+"/-/ready", auth, nil).wantStatus(200)
}

// amPost posts body as JSON, as Prometheus and amtool do, with an Authorization header.
func amPost(t *testing.T, url, authorization string, body []byte) *response {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authorization)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readResponse(t, resp)
}

func getJSON(t *testing.T, url, auth string, out any) {
	t.Helper()
	r := raw(t, "GET", url, auth, nil)
	r.wantStatus(200)
	if err := json.Unmarshal(r.Raw, out); err != nil {
		t.Fatalf("%s: %v: %s", url, err, r.Raw)
	}
}

// With Redis down, Prometheus is told 503 with Retry-After (it retries the batch), not 500.
func TestPrometheusRedisDownIsServiceUnavailable(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupMonitoringAdmin)
	var down atomic.Bool
	e.Store.Redis().AddHook(downHook{down: &down, err: redisDownError(t)})
	down.Store(true)
	r := amPost(t, e.door+"/api/v2/alerts", auth, mustJSON(t, []any{firingAlert("A")}))
	r.wantError(503, herald.CodeServiceUnavailable)
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	down.Store(false)
	amPost(t, e.door+"/api/v2/alerts", auth, mustJSON(t, []any{firingAlert("A")})).wantStatus(200)
}
