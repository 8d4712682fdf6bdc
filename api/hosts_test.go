package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// hostDown is a condition item about host id.
func hostDown(id string, disks ...string) map[string]any {
	o := map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": id}
	if disks != nil {
		ds := make([]map[string]any, len(disks))
		for i, d := range disks {
			ds[i] = map[string]any{"partitionName": d}
		}
		o["disks"] = ds
	}
	return o
}

func TestObservationsRegisterHostsAndDisks(t *testing.T) {
	e, _, p := newProjectEnv(t)

	measurement := map[string]any{"metricName": "ASSERT_REGULAR", "value": 3.5, "units": "RAW", "hostId": "h1",
		"hostnameAndPort": "db1.example.com:27017", "typeName": "PRIMARY", "at": "2026-01-02T03:04:05Z",
		"disks": []map[string]any{{"partitionName": "sda1"}}}
	batch := []any{
		hostDown("h1", "sda1", "/dev/sdb"),
		measurement,
		hostDown("h2", "nvme0n1p1"),
		map[string]any{"eventTypeName": "NO_PRIMARY", "active": true, "replicaSetName": "rs0"},
	}
	r := e.Owner.do("POST", "/groups/"+p+"/observations", batch).wantStatus(202)
	wantKeys(t, r.Body, "accepted") // docs/lifecycle.md#observations: 202 {"accepted": N}, not a resource
	if r.num("accepted") != 4 {
		t.Errorf("accepted = %v, want 4", r.Body["accepted"])
	}

	h, err := e.Store.Host(context.Background(), p, "h1")
	if err != nil {
		t.Fatal(err)
	}
	// The host is described by the item that described it, and last seen at the later of
	// "now" (the item without a time) and the measurement's own time.
	if h.GroupID != p || h.HostnameAndPort != "db1.example.com:27017" || h.TypeName != "PRIMARY" || time.Since(h.LastSeen.Time) > time.Minute {
		t.Errorf("host h1 = %+v", h)
	}

	for _, tc := range []struct{ host, escaped, name string }{
		{"h1", "sda1", "sda1"},
		{"h1", "%2Fdev%2Fsdb", "/dev/sdb"}, // a name with slashes travels as one escaped segment
		{"h2", "nvme0n1p1", "nvme0n1p1"},
	} {
		path := "/groups/" + p + "/hosts/" + tc.host + "/disks/" + tc.escaped
		r := e.Owner.do("GET", path, nil).wantStatus(200)
		wantKeys(t, r.Body, "partitionName", "links")
		if r.str("partitionName") != tc.name {
			t.Errorf("%s: partitionName = %q, want %q", path, r.str("partitionName"), tc.name)
		}
		if got := link(r.Body["links"], "self"); got != e.Base+path {
			t.Errorf("self = %q, want %q", got, e.Base+path)
		}
	}

	for _, tc := range []struct{ path, code string }{
		{"/groups/" + p + "/hosts/h3/disks/sda1", herald.CodeHostNotFound},
		{"/groups/" + p + "/hosts/h1:disks/disks/sda1", herald.CodeHostNotFound}, // no host id could name another key
		{"/groups/" + p + "/hosts/h1/disks/sdz", herald.CodeDiskPartitionNotFound},
		{"/groups/" + p + "/hosts/h2/disks/sda1", herald.CodeDiskPartitionNotFound}, // h1's, not h2's
		{"/groups/" + p + "/hosts/h1/disks/dev%2Fsdb", herald.CodeDiskPartitionNotFound},
		{"/groups/5f0000000000000000000000/hosts/h1/disks/sda1", herald.CodeGroupNotFound},
	} {
		e.Owner.do("GET", tc.path, nil).wantError(404, tc.code)
	}
}

func TestObservationsRefuseBadRequestsWhole(t *testing.T) {
	e, _, p := newProjectEnv(t)
	path := "/groups/" + p + "/observations"

	tooMany := strings.Repeat(`{"eventTypeName":"HOST_DOWN","active":true,"hostId":"never"},`, herald.MaxObservationsPerRequest+1)
	for _, tc := range []struct {
		name   string
		body   any
		code   string
		params []any
	}{
		{"empty", `[]`, herald.CodeMissingAttribute, nil},
		{"null", `null`, herald.CodeMissingAttribute, nil},
		{"an object", hostDown("never"), herald.CodeInvalidJSON, nil},
		{"unknown field", []any{hostDown("never"), map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "never", "severity": 3}}, herald.CodeInvalidAttribute, []any{"severity"}},
		{"bad time", []any{map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "never", "at": "yesterday"}}, herald.CodeInvalidDate, nil},
		{"third item's metric", []any{hostDown("never", "sda1"), hostDown("never"), map[string]any{"metricName": "NO_SUCH_METRIC", "value": 1, "units": "RAW", "hostId": "never"}}, herald.CodeInvalidObservation, []any{float64(2), "metricName"}},
		{"no active flag", []any{map[string]any{"eventTypeName": "HOST_DOWN", "hostId": "never"}}, herald.CodeMissingAttribute, []any{float64(0), "active"}},
		{"units on a condition", []any{map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "never", "units": "RAW"}}, herald.CodeInvalidObservation, []any{float64(0), "units"}},
		{"host id naming a key", []any{hostDown("never"), hostDown("never:disks")}, herald.CodeInvalidObservation, []any{float64(1), "hostId"}},
		{"host id ..", []any{hostDown("..")}, herald.CodeInvalidObservation, []any{float64(0), "hostId"}},
		{"empty partition", []any{hostDown("never", "")}, herald.CodeMissingAttribute, []any{float64(0), "disks[0].partitionName"}},
		{"control character in partition", []any{hostDown("never", "sda\n1")}, herald.CodeInvalidObservation, []any{float64(0), "disks[0].partitionName"}},
		{"too many", "[" + strings.TrimSuffix(tooMany, ",") + "]", herald.CodeRequestTooLarge, []any{float64(herald.MaxObservationsPerRequest)}},
		// Alerts from Prometheus (docs/lifecycle.md#alerts-from-prometheus).
		{"prometheus alert without labels", []any{hostDown("never"), map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": true}}, herald.CodeInvalidObservation, []any{float64(1), "labels"}},
		{"prometheus alert with a bad generator URL", []any{map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": true,
			"labels": map[string]any{"alertname": "X"}, "generatorURL": "javascript:alert(1)"}}, herald.CodeInvalidObservation, []any{float64(0), "generatorURL"}},
		{"prometheus alert with a host", []any{map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": true,
			"labels": map[string]any{"alertname": "X"}, "hostId": "never"}}, herald.CodeInvalidObservation, []any{float64(0), "hostId"}},
		{"labels on a condition", []any{map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "never", "labels": map[string]any{"a": "b"}}}, herald.CodeInvalidObservation, []any{float64(0), "labels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Owner.boundTo(t).do("POST", path, tc.body).wantError(400, tc.code)
			if tc.params != nil && fmt.Sprint(r.Body["parameters"]) != fmt.Sprint(tc.params) {
				t.Errorf("parameters = %v, want %v", r.Body["parameters"], tc.params)
			}
		})
	}
	if _, err := e.Store.Host(context.Background(), p, "never"); !herald.IsNotFound(err) {
		t.Errorf("a refused request registered its host (err %v)", err)
	}
	e.Owner.do("POST", "/groups/5f0000000000000000000000/observations", []any{hostDown("h")}).wantError(404, herald.CodeGroupNotFound)
}

// POST /observations takes alerts from Prometheus too, in the shape the Alertmanager front
// door makes them.
func TestObservationsTakePrometheusAlerts(t *testing.T) {
	e, _, p := newProjectEnv(t)
	batch := []any{
		map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": true, "labels": map[string]any{"alertname": "HighLatency", "severity": "critical"},
			"annotations": map[string]any{"summary": "slow"}, "generatorURL": "http://prometheus:9090/graph", "at": "2026-01-02T03:04:05Z",
			"endsAt": "2026-01-02T03:08:05Z"},
		map[string]any{"eventTypeName": "PROMETHEUS_ALERT", "active": false, "labels": map[string]any{"alertname": "Gone"}},
	}
	if r := e.Owner.do("POST", "/groups/"+p+"/observations", batch).wantStatus(202); r.num("accepted") != 2 {
		t.Errorf("accepted = %v, want 2", r.Body["accepted"])
	}
}

func TestObservationsAndDisksNeedTheirRoles(t *testing.T) {
	e, org, p := newProjectEnv(t)
	other := e.project(org, "staging")
	batch := []any{hostDown("h1", "sda1")}

	readOnly := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
	readOnly.do("POST", "/groups/"+p+"/observations", batch).wantError(401, herald.CodeUserUnauthorized)
	if _, err := e.Store.Host(context.Background(), p, "h1"); !herald.IsNotFound(err) {
		t.Errorf("a refused request registered its host (err %v)", err)
	}
	e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).
		do("POST", "/groups/"+p+"/observations", batch).wantError(401, herald.CodeUserUnauthorized)

	e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin}).
		do("POST", "/groups/"+p+"/observations", batch).wantStatus(202)
	readOnly.do("GET", "/groups/"+p+"/hosts/h1/disks/sda1", nil).wantStatus(200)
	e.key(org, herald.Role{GroupID: other, RoleName: herald.GroupOwner}).
		do("GET", "/groups/"+p+"/hosts/h1/disks/sda1", nil).wantError(401, herald.CodeUserUnauthorized)
}

// An agent's batch of thousands of items is the normal case: it is taken in one request, with
// a Redis command count that grows with the hosts it names, not with its items.
func TestObservationsTakeALargeBatch(t *testing.T) {
	e, _, p := newProjectEnv(t)
	const items, hosts = 5000, 50
	batch := make([]any, items)
	for i := range batch {
		h := "host-" + strconv.Itoa(i%hosts)
		if i%2 == 0 {
			batch[i] = hostDown(h, "data"+strconv.Itoa(i%7))
		} else {
			batch[i] = map[string]any{"metricName": "CONNECTIONS", "value": float64(i), "units": "RAW", "hostId": h}
		}
	}
	before := commandsProcessed(t, e)
	start := time.Now()
	r := e.Owner.do("POST", "/groups/"+p+"/observations", batch).wantStatus(202)
	t.Logf("%d items accepted in %v", items, time.Since(start))
	if r.num("accepted") != items {
		t.Errorf("accepted = %v, want %d", r.Body["accepted"], items)
	}
	n := commandsProcessed(t, e) - before
	t.Logf("%d Redis commands", n)
	if n > 4*hosts {
		t.Errorf("the request took %d Redis commands for %d hosts: more than a few per host", n, hosts)
	}
	for _, hd := range [][2]string{{"host-0", "data0"}, {"host-48", "data6"}, {"host-2", "data2"}} {
		e.Owner.do("GET", "/groups/"+p+"/hosts/"+hd[0]+"/disks/"+hd[1], nil).wantStatus(200)
	}
	// host-1 only ever sent measurements, without disks.
	e.Owner.do("GET", "/groups/"+p+"/hosts/host-1/disks/data1", nil).wantError(404, herald.CodeDiskPartitionNotFound)
}

var totalCommands = regexp.MustCompile(`total_commands_processed:(\d+)`)

// commandsProcessed is the number of commands the env's Redis has run (counting this query).
func commandsProcessed(t *testing.T, e *env) int {
	t.Helper()
	info, err := e.Store.Redis().Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := totalCommands.FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no total_commands_processed in INFO stats")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// An accepted batch waits for the engine as it came, compacted: the engine decodes the bytes
// the API validated, with nothing added or lost (an agent's "HostId" reads as hostId for both).
func TestObservationsWaitAsSent(t *testing.T) {
	e, _, p := newProjectEnv(t)
	body := "[\n  {\"eventTypeName\": \"HOST_DOWN\", \"active\": true, \"HostId\": \"h1\", \"currentValue\": null},\n" +
		"  {\"metricName\": \"ASSERT_REGULAR\", \"value\": 3.50, \"units\": \"RAW\", \"hostId\": \"h2\"}\n]\n"
	e.Owner.do("POST", "/groups/"+p+"/observations", body).wantStatus(202)
	waiting, err := e.Store.PendingObservations(t.Context(), p, 10)
	if err != nil || len(waiting) != 1 {
		t.Fatalf("%d batches wait (%v), want 1", len(waiting), err)
	}
	want := `[{"eventTypeName":"HOST_DOWN","active":true,"HostId":"h1","currentValue":null},` +
		`{"metricName":"ASSERT_REGULAR","value":3.50,"units":"RAW","hostId":"h2"}]`
	if string(waiting[0]) != want {
		t.Errorf("waiting batch\n%s\nwant\n%s", waiting[0], want)
	}
	var obs []herald.Observation
	if err := json.Unmarshal(waiting[0], &obs); err != nil || len(obs) != 2 || obs[0].HostID != "h1" || *obs[1].Value != 3.5 {
		t.Errorf("the engine reads %+v (%v)", obs, err)
	}
	compact := `[{"eventTypeName":"HOST_DOWN","active":false,"hostId":"h3"}]`
	e.Owner.do("POST", "/groups/"+p+"/observations", compact).wantStatus(202)
	if waiting, err = e.Store.PendingObservations(t.Context(), p, 10); err != nil || len(waiting) != 2 || string(waiting[1]) != compact {
		t.Errorf("waiting %q (%v), want the compact batch as sent last", waiting, err)
	}
}
