package api_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// ping calls a heartbeat's ping URL without credentials.
func ping(t *testing.T, method, url string, body string) *response {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return raw(t, method, url, "", b)
}

func createHeartbeat(e *env, p string, body map[string]any) *response {
	e.t.Helper()
	return e.Owner.do("POST", "/groups/"+p+"/heartbeats", body).wantStatus(201)
}

// A heartbeat's life through the API: created with its ping URL in full, read back masked,
// pinged (success, start, failure, exit codes) without credentials, paused and resumed, its
// token re-issued (the old URL stops working), renamed, deleted; each change recorded.
func TestHeartbeatLifecycle(t *testing.T) {
	e, _, p := newProjectEnv(t)
	r := createHeartbeat(e, p, map[string]any{"name": "backup", "periodMin": 60, "graceMin": 5})
	id, url := r.str("id"), r.str("pingUrl")
	if r.str("status") != herald.HeartbeatNew || !strings.Contains(url, api.PingPath) || strings.Contains(url, "*") {
		t.Fatalf("created: %s", r.Raw)
	}
	for _, k := range []string{"tokenHash", "tokenTail", "since", "missed", "failed"} {
		if _, ok := r.Body[k]; ok {
			t.Errorf("the answer shows the stored-only field %s: %s", k, r.Raw)
		}
	}
	token := url[strings.LastIndex(url, "/")+1:]
	self := "/groups/" + p + "/heartbeats/" + id
	got := e.Owner.do("GET", self, nil).wantStatus(200)
	if masked := got.str("pingUrl"); strings.Contains(masked, token) || !strings.HasSuffix(masked, "****"+token[len(token)-4:]) {
		t.Fatalf("read back, the ping URL is %q, want it masked", masked)
	}
	if list := e.Owner.do("GET", "/groups/"+p+"/heartbeats", nil).wantStatus(200).results(); len(list) != 1 || strings.Contains(list[0]["pingUrl"].(string), token) {
		t.Fatalf("list: %v", list)
	}

	if ping(t, "GET", url, "").wantStatus(200); string(ping(t, "HEAD", url, "").Raw) != "" {
		t.Error("HEAD answered a body")
	}
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatUp || got.str("lastPing") == "" {
		t.Fatalf("after a ping: %s", got.Raw)
	}
	ping(t, "POST", url+"/start", "").wantStatus(200)
	if got := e.Owner.do("GET", self, nil); got.str("lastStart") == "" || got.str("status") != herald.HeartbeatUp {
		t.Fatalf("after a start: %s", got.Raw)
	}
	ping(t, "POST", url+"/fail", "line 1\nerror: disk full\n").wantStatus(200)
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatDown || got.str("lastFailure") == "" ||
		got.str("lastBody") != "line 1\nerror: disk full\n" {
		t.Fatalf("after a failure: %s", got.Raw)
	}
	ping(t, "GET", url+"/0", "").wantStatus(200)
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatUp {
		t.Fatalf("after exit code 0: %s", got.Raw)
	}
	ping(t, "GET", url+"/3", "").wantStatus(200)
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatDown {
		t.Fatalf("after exit code 3: %s", got.Raw)
	}

	if got := e.Owner.do("POST", self+"/pause", nil).wantStatus(200); got.str("status") != herald.HeartbeatPaused {
		t.Fatalf("paused: %s", got.Raw)
	}
	ping(t, "GET", url, "").wantStatus(200) // recorded, but a paused heartbeat stays paused
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatPaused {
		t.Fatalf("pinged while paused: %s", got.Raw)
	}
	if got := e.Owner.do("POST", self+"/resume", nil).wantStatus(200); got.str("status") == herald.HeartbeatPaused {
		t.Fatalf("resumed: %s", got.Raw)
	}

	re := e.Owner.do("POST", self+"/token", nil).wantStatus(200)
	newURL := re.str("pingUrl")
	if newURL == url || strings.Contains(newURL, "*") {
		t.Fatalf("re-issued: %s", re.Raw)
	}
	ping(t, "GET", url, "").wantError(404, herald.CodeResourceNotFound)
	ping(t, "GET", newURL, "").wantStatus(200)

	if got := e.Owner.do("PATCH", self, map[string]any{"name": "nightly backup", "schedule": "0 3 * * *", "timeZone": "Europe/Paris"}).wantStatus(200); got.str("name") != "nightly backup" ||
		got.str("schedule") != "0 3 * * *" || got.num("periodMin") != 0 {
		t.Fatalf("patched: %s", got.Raw)
	}
	e.Owner.do("DELETE", self, nil).wantStatus(204)
	e.Owner.do("GET", self, nil).wantError(404, herald.CodeHeartbeatNotFound)
	ping(t, "GET", newURL, "").wantError(404, herald.CodeResourceNotFound)

	types := map[string]int{}
	for _, ev := range e.Owner.do("GET", "/groups/"+p+"/events?itemsPerPage=100", nil).wantStatus(200).results() {
		if ev["heartbeatId"] == id {
			types[ev["eventTypeName"].(string)]++
		}
	}
	if types[herald.EventHeartbeatAdded] != 1 || types[herald.EventHeartbeatChanged] != 4 || types[herald.EventHeartbeatDeleted] != 1 {
		t.Errorf("audit events of the heartbeat: %v", types)
	}
}

// Bad input to every heartbeat endpoint is a 400 with the error body naming the field, and
// changes nothing.
func TestHeartbeatBadInput(t *testing.T) {
	e, _, p := newProjectEnv(t)
	list := "/groups/" + p + "/heartbeats"
	r := createHeartbeat(e, p, map[string]any{"name": "taken", "periodMin": 5, "graceMin": 1})
	self := list + "/" + r.str("id")
	before := string(e.Owner.do("GET", self, nil).wantStatus(200).Raw)
	for _, c := range []struct {
		body  any
		code  string
		field string
	}{
		{map[string]any{"periodMin": 5, "graceMin": 1}, herald.CodeMissingAttribute, "name"},
		{map[string]any{"name": "", "periodMin": 5, "graceMin": 1}, herald.CodeInvalidAttribute, "name"},
		{map[string]any{"name": "a\x00b", "periodMin": 5, "graceMin": 1}, herald.CodeInvalidAttribute, "name"},
		{map[string]any{"name": strings.Repeat("n", 201), "periodMin": 5, "graceMin": 1}, herald.CodeInvalidAttribute, "name"},
		{map[string]any{"name": "x", "graceMin": 1}, herald.CodeMissingAttribute, "periodMin"},
		{map[string]any{"name": "x", "periodMin": 0, "graceMin": 1}, herald.CodeInvalidAttribute, "periodMin"},
		{map[string]any{"name": "x", "periodMin": 44641, "graceMin": 1}, herald.CodeInvalidAttribute, "periodMin"},
		{map[string]any{"name": "x", "periodMin": -1, "graceMin": 1}, herald.CodeInvalidAttribute, "periodMin"},
		{map[string]any{"name": "x", "periodMin": 5}, herald.CodeMissingAttribute, "graceMin"},
		{map[string]any{"name": "x", "periodMin": 5, "graceMin": 0}, herald.CodeInvalidAttribute, "graceMin"},
		{map[string]any{"name": "x", "periodMin": 5, "graceMin": 10081}, herald.CodeInvalidAttribute, "graceMin"},
		{map[string]any{"name": "x", "schedule": "every day", "graceMin": 1}, herald.CodeInvalidAttribute, "schedule"},
		{map[string]any{"name": "x", "schedule": "61 * * * *", "graceMin": 1}, herald.CodeInvalidAttribute, "schedule"},
		{map[string]any{"name": "x", "schedule": "", "graceMin": 1}, herald.CodeInvalidAttribute, "schedule"},
		{map[string]any{"name": "x", "schedule": "0 3 * * *", "timeZone": "Mars/Olympus", "graceMin": 1}, herald.CodeInvalidAttribute, "timeZone"},
		{map[string]any{"name": "x", "periodMin": 5, "timeZone": "UTC", "graceMin": 1}, herald.CodeInvalidAttribute, "timeZone"},
		{map[string]any{"name": "x", "periodMin": 5, "schedule": "0 3 * * *", "graceMin": 1}, herald.CodeInvalidAttribute, "schedule"},
		{map[string]any{"name": "x", "periodMin": 5, "graceMin": 1, "labelMatchers": []any{map[string]any{"value": "v"}}}, herald.CodeMissingAttribute, "labelMatchers[0].name"},
		{map[string]any{"name": "x", "periodMin": 5, "graceMin": 1, "labelMatchers": []any{map[string]any{"name": "a", "value": ".*", "isRegex": true}}}, herald.CodeInvalidAttribute, "labelMatchers"},
		{map[string]any{"name": "taken", "periodMin": 5, "graceMin": 1}, herald.CodeHeartbeatAlreadyExists, "name"},
		{map[string]any{"name": "x", "periodMin": "5", "graceMin": 1}, herald.CodeInvalidAttribute, "periodMin"},
		{map[string]any{"name": "x", "periodMin": 5, "graceMin": 1, "status": "UP"}, "", ""},
	} {
		r := e.Owner.do("POST", list, c.body)
		if r.Status != 400 || (c.code != "" && r.str("errorCode") != c.code) {
			t.Errorf("POST %v: %d %s, want 400 %s", c.body, r.Status, r.Raw, c.code)
			continue
		}
		r.wantError(400, r.str("errorCode"))
		if c.field != "" && !strings.Contains(string(r.Raw), `"`+c.field+`"`) {
			t.Errorf("POST %v: the error does not name %s: %s", c.body, c.field, r.Raw)
		}
		if c.code == herald.CodeMissingAttribute || c.code == herald.CodeHeartbeatAlreadyExists || c.field == "" {
			continue
		}
		// The same value in an update of the existing heartbeat.
		patch := map[string]any{}
		for k, v := range c.body.(map[string]any) {
			if k == c.field || (c.field == "timeZone" && k == "schedule") || strings.HasPrefix(c.field, k) {
				patch[k] = v
			}
		}
		if c.field == "schedule" && patch["periodMin"] == nil && c.body.(map[string]any)["periodMin"] != nil {
			patch["periodMin"] = 5
		}
		if pr := e.Owner.do("PATCH", self, patch); pr.Status != 400 {
			t.Errorf("PATCH %v: %d %s, want 400", patch, pr.Status, pr.Raw)
		}
	}
	createHeartbeat(e, p, map[string]any{"name": "other", "periodMin": 5, "graceMin": 1})
	e.Owner.do("PATCH", self, map[string]any{"name": "other"}).wantError(400, herald.CodeHeartbeatAlreadyExists)
	e.Owner.do("PATCH", self, map[string]any{}).wantError(400, herald.CodeMissingAttribute)
	e.Owner.do("PATCH", self, "[1]").wantError(400, herald.CodeInvalidJSON)
	if after := string(e.Owner.do("GET", self, nil).wantStatus(200).Raw); after != before {
		t.Errorf("refused requests changed the heartbeat:\n%s\n%s", before, after)
	}
	if n := e.Owner.do("GET", list, nil).wantStatus(200).num("totalCount"); n != 2 {
		t.Errorf("%v heartbeats, want the 2 created", n)
	}
	for _, path := range []string{self + "x", list + "/5f0000000000000000000000"} {
		e.Owner.do("GET", path, nil).wantError(404, herald.CodeHeartbeatNotFound)
		e.Owner.do("PATCH", path, map[string]any{"graceMin": 2}).wantError(404, herald.CodeHeartbeatNotFound)
		e.Owner.do("DELETE", path, nil).wantError(404, herald.CodeHeartbeatNotFound)
		for _, a := range []string{"pause", "resume", "token"} {
			e.Owner.do("POST", path+"/"+a, nil).wantError(404, herald.CodeHeartbeatNotFound)
		}
	}
}

// Pings that do not name a heartbeat are 404 (and count in the throttle until it answers
// 429); other methods 405; a body past 10 KB is cut, not refused.
func TestHeartbeatHostilePings(t *testing.T) {
	e := newEnvWith(t, api.Config{AuthLimits: store.AuthLimits{Window: time.Minute, PerPair: 5, PerAddress: 5, PerName: 1000}})
	p := e.project(e.org("acme"), "prod")
	url := createHeartbeat(e, p, map[string]any{"name": "job", "periodMin": 5, "graceMin": 1}).str("pingUrl")
	root := strings.TrimSuffix(e.Base, api.BasePath)
	ping(t, "PUT", url, "").wantError(405, herald.CodeMethodNotAllowed)
	ping(t, "DELETE", url, "").wantError(405, herald.CodeMethodNotAllowed)
	for _, bad := range []string{url + "/256", url + "/-1", url + "/01", url + "/done", url + "/fail/x"} {
		ping(t, "GET", bad, "").wantError(404, herald.CodeResourceNotFound)
	}
	big := strings.Repeat("x", herald.MaxPingBody+500)
	ping(t, "POST", url+"/fail", big).wantStatus(200)
	hb := e.Owner.do("GET", "/groups/"+p+"/heartbeats", nil).results()[0]
	if got := hb["lastBody"].(string); len(got) != herald.MaxPingBody {
		t.Errorf("kept %d bytes of the body, want %d", len(got), herald.MaxPingBody)
	}
	// Unknown tokens: 404 until the address's failures reach the throttle, then 429.
	for i := range 5 {
		r := ping(t, "GET", root+api.PingPath+"unknown-token-"+string(rune('a'+i)), "")
		r.wantError(404, herald.CodeResourceNotFound)
	}
	r := ping(t, "GET", root+api.PingPath+"another", "")
	r.wantError(429, herald.CodeRateLimited)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if strings.Contains(e.Logs(), strings.TrimPrefix(url, root+api.PingPath)) {
		t.Error("the log shows a ping token")
	}
}

// A ping while Redis is down is 503 with Retry-After (nothing stored); once Redis is back the
// same ping is taken.
func TestHeartbeatPingRedisDown(t *testing.T) {
	e, _, p := newProjectEnv(t)
	url := createHeartbeat(e, p, map[string]any{"name": "job", "periodMin": 5, "graceMin": 1}).str("pingUrl")
	var down atomic.Bool
	e.Store.Redis().AddHook(downHook{down: &down, err: redisDownError(t)})
	down.Store(true)
	r := ping(t, "GET", url, "")
	r.wantError(http.StatusServiceUnavailable, herald.CodeServiceUnavailable)
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	down.Store(false)
	if got := e.Owner.do("GET", "/groups/"+p+"/heartbeats", nil).results()[0]; got["lastPing"] != nil {
		t.Fatalf("a refused ping was recorded: %v", got)
	}
	ping(t, "GET", url, "").wantStatus(200)
}

// Watchdog mode: an alert posted to the Alertmanager front door that matches a heartbeat's
// labelMatchers pings it and is not queued as an alert; other alerts are queued as before.
func TestHeartbeatWatchdog(t *testing.T) {
	e := newPromEnv(t, api.Config{BasicOverHTTP: true})
	auth := e.keyFor(herald.GroupMonitoringAdmin)
	r := createHeartbeat(e.env, e.project, map[string]any{"name": "prometheus", "periodMin": 5, "graceMin": 2,
		"labelMatchers": []any{map[string]any{"name": "alertname", "value": "Watchdog"}}})
	self := "/groups/" + e.project + "/heartbeats/" + r.str("id")
	amPost(t, e.door+"/api/v2/alerts", auth, mustJSON(t, []any{firingAlert("Watchdog")})).wantStatus(200)
	if got := e.Owner.do("GET", self, nil).wantStatus(200); got.str("status") != herald.HeartbeatUp || got.str("lastPing") == "" {
		t.Fatalf("after a Watchdog alert: %s", got.Raw)
	}
	if waiting, _ := e.Store.PendingObservations(t.Context(), e.project, 10); len(waiting) != 0 {
		t.Fatalf("the Watchdog alert was queued as an alert: %s", waiting)
	}
	amPost(t, e.door+"/api/v2/alerts", auth, mustJSON(t, []any{firingAlert("Watchdog"), firingAlert("HighLatency")})).wantStatus(200)
	waiting, _ := e.Store.PendingObservations(t.Context(), e.project, 10)
	if len(waiting) != 1 || strings.Contains(string(waiting[0]), "Watchdog") || !strings.Contains(string(waiting[0]), "HighLatency") {
		t.Fatalf("queued %s, want HighLatency alone", waiting)
	}
}

// Runs that overlap are paired by their run id: an end ping (a success or a failure) with
// ?rid= ends the start of the same rid, and the heartbeat shows that run's duration
// (lastDurationMs) and the runs still open, at most 10 (a start past that forgets the oldest).
// A start and end without a rid pair as one run. A rid that is not one is 400 naming rid, and
// changes nothing; an end whose rid has no start is a ping all the same.
func TestHeartbeatRunIDs(t *testing.T) {
	e := newEnv(t)
	p := e.project(e.org("acme"), "prod")
	r := createHeartbeat(e, p, map[string]any{"name": "job", "periodMin": 60, "graceMin": 5})
	url, self := r.str("pingUrl"), "/groups/"+p+"/heartbeats/"+r.str("id")
	runs := func() (open []string, duration float64) {
		t.Helper()
		got := e.Owner.do("GET", self, nil).wantStatus(200)
		rs, _ := got.Body["runs"].([]any)
		for _, x := range rs {
			open = append(open, x.(map[string]any)["rid"].(string))
		}
		d, _ := got.Body["lastDurationMs"].(float64)
		return open, d
	}
	ping(t, "GET", url+"/start?rid=a", "").wantStatus(200)
	time.Sleep(20 * time.Millisecond) // a duration of run a above 0
	ping(t, "GET", url+"/start?rid=b", "").wantStatus(200)
	if open, d := runs(); strings.Join(open, ",") != "a,b" || d != 0 {
		t.Fatalf("two runs started: open %v, last duration %v", open, d)
	}
	ping(t, "GET", url+"?rid=b", "").wantStatus(200) // b ends first: paired with its own start
	_, db := runs()
	ping(t, "POST", url+"/fail?rid=a", "a failed").wantStatus(200)
	open, da := runs()
	if len(open) != 0 || da < db+19 || db < 0 {
		t.Fatalf("after b then a ended: open %v, durations b %v, a %v (a started 20 ms before b)", open, db, da)
	}
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatDown {
		t.Errorf("a run ended with a failure: %s", got.Raw)
	}

	// Without a rid: a start and an end are one run; an end without a start is a ping.
	ping(t, "GET", url+"/start", "").wantStatus(200)
	ping(t, "GET", url+"/0", "").wantStatus(200)
	if open, _ := runs(); len(open) != 0 {
		t.Fatalf("a start and an end without rid left %v open", open)
	}
	ping(t, "GET", url+"?rid=never-started", "").wantStatus(200)
	if got := e.Owner.do("GET", self, nil); got.str("status") != herald.HeartbeatUp {
		t.Errorf("an end of a run never started is a success all the same: %s", got.Raw)
	}

	// Bounded: 12 starts keep the last 10.
	for i := range 12 {
		ping(t, "GET", url+"/start?rid=r"+string(rune('a'+i)), "").wantStatus(200)
	}
	if open, _ := runs(); len(open) != herald.MaxOpenRuns || open[0] != "rc" || open[9] != "rl" {
		t.Fatalf("after 12 starts: %v, want rc … rl", open)
	}

	// Hostile run ids: 400 naming rid, nothing recorded.
	before := e.Owner.do("GET", self, nil).wantStatus(200).Raw
	for _, bad := range []string{"?rid=" + strings.Repeat("x", herald.MaxRunID+1), "?rid=a%20b", "?rid=%00", "?rid=a/b",
		"?rid=%C3%A9", "?rid=a&rid=b", "/start?rid=a%2Cb"} {
		r := ping(t, "GET", url+bad, "")
		r.wantError(400, herald.CodeInvalidAttribute)
		if params, _ := r.Body["parameters"].([]any); len(params) == 0 || params[0] != "rid" {
			t.Errorf("%s: %s, want the error to name rid", bad, r.Raw)
		}
	}
	if after := e.Owner.do("GET", self, nil).wantStatus(200).Raw; string(after) != string(before) {
		t.Errorf("refused pings changed the heartbeat:\n%s\n%s", before, after)
	}
	ping(t, "GET", url+"?rid=", "").wantStatus(200) // empty: no run id
	ping(t, "GET", url+"?rid="+strings.Repeat("x", herald.MaxRunID), "").wantStatus(200)
}
