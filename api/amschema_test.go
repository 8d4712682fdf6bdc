package api_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// The front door's answers validate against Alertmanager v0.28's own API document (the
// schemas of its answers, in testdata/alertmanager-v2-schemas.json): alerts listed with and
// without filters, silenced or not, and one no configuration took; status; silences listed and read one by one; a silence's
// creation. amtool and other clients of Alertmanager's generated client refuse an answer
// that does not.
func TestPrometheusAnswersFollowAlertmanagerSchemas(t *testing.T) {
	b, err := os.ReadFile("testdata/alertmanager-v2-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the schemas are not valid OpenAPI 3: %v", err)
	}
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupMonitoringAdmin)
	check := func(path, schema string, wantItems int) {
		t.Helper()
		r := raw(t, "GET", e.door+path, auth, nil).wantStatus(200)
		checkSchema(t, doc, schema, path, r.Raw)
		var items []any
		if wantItems >= 0 && (json.Unmarshal(r.Raw, &items) != nil || len(items) != wantItems) {
			t.Errorf("%s lists %d items, want %d: %s", path, len(items), wantItems, r.Raw)
		}
	}
	check("/api/v2/alerts", "gettableAlerts", 0)
	now := time.Now()
	for _, name := range []string{"Latency", "DiskFull"} {
		labels := herald.Labels{"alertname": name, "job": "api"}
		a := herald.Alert{ID: herald.NewID(now), GroupID: e.project, AlertConfigID: "cfg1", EventTypeName: herald.EventTypePrometheusAlert,
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), Labels: labels, Fingerprint: labels.Fingerprint(),
			Annotations: herald.Labels{"summary": name + " fired"}, GeneratorURL: "http://prometheus.local/graph?g0.expr=up"}
		if err := e.Store.SaveAlert(t.Context(), a, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	// One no configuration took, as the engine keeps it (under the project's lease).
	unrouted := herald.UnroutedOf(herald.PostableAlert{Labels: herald.Labels{"alertname": "Unrouted"}}.Observation(now), now)
	lock, ok, err := e.Store.LockProject(t.Context(), e.project, time.Minute)
	if err != nil || !ok {
		t.Fatalf("take the project's lease: %v %v", ok, err)
	}
	if _, err := lock.UpdateUnrouted(t.Context(), e.project, []store.UnroutedChange{{Target: "u", Alert: &unrouted}}, now); err != nil {
		t.Fatal(err)
	}
	r := amPost(t, e.door+"/api/v2/silences", auth, mustJSON(t, silence("alertname", "Latency"))).wantStatus(200)
	checkSchema(t, doc, "postSilencesAnswer", "POST /api/v2/silences", r.Raw)
	id := r.str("silenceID")
	check("/api/v2/alerts", "gettableAlerts", 3)
	check("/api/v2/alerts?silenced=false", "gettableAlerts", 2)
	check(`/api/v2/alerts?filter=alertname%3D~"Disk.*"&active=true&receiver=cfg.*`, "gettableAlerts", 1)
	check("/api/v2/status", "alertmanagerStatus", -1)
	check("/api/v2/silences", "gettableSilences", 1)
	check("/api/v2/silence/"+id, "gettableSilence", -1)
}

// checkSchema validates body (JSON) against the named schema of doc.
func checkSchema(t *testing.T, doc *openapi3.T, schema, what string, body []byte) {
	t.Helper()
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		t.Fatalf("no schema %s", schema)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v: %s", what, err, body)
	}
	if err := ref.Value.VisitJSON(v); err != nil {
		t.Errorf("%s does not follow Alertmanager's %s: %v\n%s", what, schema, err, body)
	}
}
