package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store/storetest"
)

// countType is how many notices of event type typ with status came.
func (n *notices) countType(typ, status string) int {
	return n.countWhere(func(a herald.Alert) bool { return a.EventTypeName == typ && a.Status == status })
}

// Watchdog mode with a real Prometheus: its always-firing Watchdog alert pings a heartbeat
// whose labelMatchers select it, and opens no alert of its own. Prometheus stopped, the
// heartbeat is missed and HEARTBEAT_MISSED opens; started again, the alert closes.
func TestRealPrometheusWatchdog(t *testing.T) {
	prometheus := requireProgram(t, "/usr/bin/prometheus")
	h := startPromHerald(t)
	h.api.call(t, "POST", "/groups/"+h.project+"/alertConfigs", map[string]any{"eventTypeName": herald.EventTypeHeartbeatMissed, "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": h.hooks.url, "delayMin": 0, "intervalMin": 60}}},
		http.StatusCreated, nil)
	var hb struct{ ID, Status, LastPing string }
	h.api.call(t, "POST", "/groups/"+h.project+"/heartbeats", map[string]any{"name": "prometheus", "periodMin": 3, "graceMin": 2,
		"labelMatchers": []any{map[string]any{"name": "alertname", "value": "Watchdog"}}}, http.StatusCreated, &hb)
	target := httptest.NewServer(&gauge{})
	t.Cleanup(target.Close)
	rules := `groups:
  - name: herald
    rules:
      - alert: Watchdog
        expr: vector(1)
        labels:
          severity: none
`
	dir := t.TempDir()
	targetAddr := strings.TrimPrefix(target.URL, "http://")
	kill := startPrometheus(t, prometheus, h, dir, rules, targetAddr)
	self := "/groups/" + h.project + "/heartbeats/" + hb.ID
	waitFor(t, 60*time.Second, "Watchdog to ping the heartbeat", func() (bool, string) {
		h.api.call(t, "GET", self, nil, http.StatusOK, &hb)
		return hb.Status == herald.HeartbeatUp, hb.Status
	})
	if n := h.hooks.countType(herald.EventTypePrometheusAlert, herald.StatusOpen); n != 0 {
		t.Fatalf("the Watchdog alert opened an alert of its own:\n%s", h.hooks)
	}

	// (A heartbeat counts from its creation: Prometheus starting slower than period + grace
	// may have made it missed already, and its first Watchdog closed that alert.)
	var opened, closed int
	waitFor(t, 10*time.Second, "no HEARTBEAT_MISSED open while Prometheus runs", func() (bool, string) {
		opened, closed = h.hooks.countType(herald.EventTypeHeartbeatMissed, herald.StatusOpen), h.hooks.countType(herald.EventTypeHeartbeatMissed, herald.StatusClosed)
		return opened == closed, h.hooks.String()
	})
	kill()
	stopped := time.Now()
	waitFor(t, 30*time.Second, "HEARTBEAT_MISSED", func() (bool, string) {
		return h.hooks.countType(herald.EventTypeHeartbeatMissed, herald.StatusOpen) > opened, h.hooks.String()
	})
	after := time.Since(stopped)
	t.Logf("HEARTBEAT_MISSED opened %s after Prometheus stopped (period 3, grace 2 minutes of %s)", after, promMinute)
	if after < 3*promMinute { // its last Watchdog came at most a resend delay (1 s) before
		t.Errorf("HEARTBEAT_MISSED opened %s after Prometheus stopped, before period + grace could pass", after)
	}

	startPrometheus(t, prometheus, h, dir, rules, targetAddr)
	waitFor(t, 60*time.Second, "the heartbeat's resolution", func() (bool, string) {
		return h.hooks.countType(herald.EventTypeHeartbeatMissed, herald.StatusClosed) > closed, h.hooks.String()
	})
}

// `herald api` counts heartbeats' minutes in HERALD_MINUTE, as the workers do: a heartbeat of
// period 1 reads LATE once a shortened minute has passed without a ping, and a ping makes it
// UP again. (Read by the workers only, the API's heartbeats were late a real minute after
// their ping and found missed only at its deadline in real minutes.)
func TestAPIRoleHeartbeatMinute(t *testing.T) {
	const minute = time.Second
	redisURL := storetest.URL(storetest.Redis(t))
	addr := testkit.FreeLoopbackAddr(t)
	startRole(t, "api", "herald api", "HERALD_REDIS_URL="+redisURL, "HERALD_LISTEN="+addr,
		"HERALD_BOOTSTRAP_KEY=hbapi:3f1c2e9a-heartbeat-minute-key", "HERALD_MINUTE="+minute.String(), "HERALD_LOG_LEVEL=warn")
	waitReady(t, 20*time.Second, "herald api", addr)
	c := newClusterAPI("http://"+addr+api.BasePath, "hbapi", "3f1c2e9a-heartbeat-minute-key")
	var org, project struct{ ID string }
	c.call(t, "POST", "/orgs", map[string]any{"name": "hb"}, http.StatusCreated, &org)
	c.call(t, "POST", "/groups", map[string]any{"name": "hb", "orgId": org.ID}, http.StatusCreated, &project)
	var hb struct{ ID, Status, PingURL string }
	c.call(t, "POST", "/groups/"+project.ID+"/heartbeats", map[string]any{"name": "job", "periodMin": 1, "graceMin": 60}, http.StatusCreated, &hb)
	self, pingURL := "/groups/"+project.ID+"/heartbeats/"+hb.ID, hb.PingURL // shown whole only now
	status := func() (bool, string) {
		c.call(t, "GET", self, nil, http.StatusOK, &hb)
		return hb.Status == herald.HeartbeatLate, hb.Status
	}
	waitFor(t, 10*minute, "the heartbeat to be late after its period of one minute", status)
	resp, err := http.Get(pingURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c.call(t, "GET", self, nil, http.StatusOK, &hb); resp.StatusCode != http.StatusOK || hb.Status != herald.HeartbeatUp {
		t.Fatalf("after a ping (%s): %s", resp.Status, hb.Status)
	}
	waitFor(t, 10*minute, "the heartbeat to be late again a minute after its ping", status)
}
