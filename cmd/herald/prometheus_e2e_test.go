package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store/storetest"
)

// End to end with the real programs: Debian's prometheus and amtool (installed by .ci/run)
// against herald dev (API, engine, worker and scheduler in one process) on a real Redis, a
// webhook receiver on 127.0.0.1 taking the notices.

// requireProgram is the path of a program the test drives, skipping the test when it is not
// installed, except under CI (which installs it), where its absence fails the test.
func requireProgram(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it): %v", path, err)
		}
		t.Skipf("%s is not installed (Debian's prometheus and prometheus-alertmanager packages; .ci/run installs them)", path)
	}
	return path
}

// notices is a webhook receiver: every notice Herald sent, in order.
type notices struct {
	url    string
	mu     sync.Mutex
	alerts []herald.Alert
}

func startNotices(t *testing.T) *notices {
	n := &notices{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a herald.Alert
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &a); err != nil {
			t.Errorf("a notice that is not an alert: %s", b)
		}
		n.mu.Lock()
		n.alerts = append(n.alerts, a)
		n.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	n.url = srv.URL + "/hook"
	return n
}

// count is how many notices with status came for the fingerprint.
func (n *notices) count(fingerprint, status string) int {
	return n.countWhere(func(a herald.Alert) bool { return a.Fingerprint == fingerprint && a.Status == status })
}

// countWhere is how many notices match.
func (n *notices) countWhere(match func(herald.Alert) bool) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, a := range n.alerts {
		if match(a) {
			c++
		}
	}
	return c
}

func (n *notices) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, a := range n.alerts {
		fmt.Fprintf(&b, "%s %s %s %v\n", a.ID, a.Status, a.Fingerprint, a.Labels)
	}
	return b.String()
}

// promMinute is herald dev's minute in these tests: a notification repeating every 5 minutes
// (the least intervalMin) repeats every 5 s.
const promMinute = time.Second

// promHerald is herald dev with a project whose one configuration sends PROMETHEUS_ALERT
// notices to a webhook at once and repeats them every intervalMin.
type promHerald struct {
	api                   clusterAPI
	addr, project         string
	publicKey, privateKey string
	door                  string // the project's front door: http://addr/prometheus/groups/{project}
	hooks                 *notices
	repeat                time.Duration
}

func startPromHerald(t *testing.T) *promHerald {
	t.Helper()
	redisURL := storetest.URL(storetest.Redis(t))
	h := &promHerald{addr: testkit.FreeLoopbackAddr(t), publicKey: "prom", privateKey: "7c0d2f4e-prometheus-e2e-key", hooks: startNotices(t)}
	startRole(t, "dev", "herald dev", "HERALD_REDIS_URL="+redisURL, "HERALD_LISTEN="+h.addr,
		"HERALD_BOOTSTRAP_KEY="+h.publicKey+":"+h.privateKey, "HERALD_MINUTE="+promMinute.String(), "HERALD_LOG_LEVEL=warn")
	waitReady(t, 20*time.Second, "herald dev", h.addr)
	h.api = newClusterAPI("http://"+h.addr+api.BasePath, h.publicKey, h.privateKey)
	var org, project struct{ ID string }
	var defaults struct{ Results []struct{ ID string } }
	h.api.call(t, "POST", "/orgs", map[string]any{"name": "prom"}, http.StatusCreated, &org)
	h.api.call(t, "POST", "/groups", map[string]any{"name": "prom", "orgId": org.ID}, http.StatusCreated, &project)
	h.api.call(t, "GET", "/groups/"+project.ID+"/alertConfigs?itemsPerPage=500", nil, http.StatusOK, &defaults)
	for _, c := range defaults.Results {
		h.api.call(t, "PATCH", "/groups/"+project.ID+"/alertConfigs/"+c.ID, map[string]any{"enabled": false}, http.StatusOK, nil)
	}
	const intervalMin = 5
	h.api.call(t, "POST", "/groups/"+project.ID+"/alertConfigs", map[string]any{"eventTypeName": herald.EventTypePrometheusAlert, "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": h.hooks.url, "delayMin": 0, "intervalMin": intervalMin}}},
		http.StatusCreated, nil)
	h.project, h.repeat = project.ID, intervalMin*promMinute
	h.door = "http://" + h.addr + api.PrometheusPath + "/groups/" + project.ID
	return h
}

// quietFor checks that no further OPEN notice of fingerprint comes for d (two repeat intervals:
// the repeat the acknowledgement or silence should have stopped would have come by then).
func (h *promHerald) quietFor(t *testing.T, fingerprint string, d time.Duration, why string) {
	t.Helper()
	before := h.hooks.count(fingerprint, herald.StatusOpen)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if n := h.hooks.count(fingerprint, herald.StatusOpen); n != before {
			t.Fatalf("%s: a repeat came (%d notices, %d before):\n%s", why, n, before, h.hooks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runPrometheus runs prometheus on dir's prometheus.yml, keeping its data in dir and serving
// on addr, until the test ends or kill is called; when the test fails, its output is logged.
func runPrometheus(t *testing.T, prometheus, dir, addr string, args ...string) (kill func()) {
	t.Helper()
	cmd := exec.Command(prometheus, append([]string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr, "--log.level=warn"}, args...)...)
	var promLog lockedBuffer
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		kill()
		if t.Failed() {
			t.Logf("prometheus:\n%s", promLog.String())
		}
	})
	return kill
}

// gauge is the scrape target: it exposes the gauge up_flag, which the test flips.
type gauge struct{ v atomic.Int64 }

func (f *gauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE up_flag gauge\nup_flag %d\n", f.v.Load())
}

// A real Prometheus scrapes a gauge; its rule up_flag > 0 fires and Prometheus posts the alert
// to Herald's front door (Basic auth, path_prefix). Herald opens the alert and a webhook gets
// the notice with its fingerprint; it repeats until acknowledged through Herald's API; when the
// gauge drops, Prometheus resolves the alert and the resolution notice arrives.
func TestRealPrometheusAlertsThroughHerald(t *testing.T) {
	prometheus := requireProgram(t, "/usr/bin/prometheus")
	h := startPromHerald(t)
	target := &gauge{}
	target.v.Store(1)
	ts := httptest.NewServer(target)
	t.Cleanup(ts.Close)
	targetAddr := strings.TrimPrefix(ts.URL, "http://")

	dir := t.TempDir()
	rules := `groups:
  - name: herald
    rules:
      - alert: FlagUp
        expr: up_flag > 0
        labels:
          severity: critical
        annotations:
          summary: the flag is up
          description: up_flag is {{ $value }}
`
	startPrometheus(t, prometheus, h, dir, rules, targetAddr)

	fp := herald.Labels{"alertname": "FlagUp", "instance": targetAddr, "job": "flag", "severity": "critical"}.Fingerprint()
	waitFor(t, 60*time.Second, "the first notice of FlagUp", func() (bool, string) {
		return h.hooks.count(fp, herald.StatusOpen) >= 1, h.hooks.String()
	})
	waitFor(t, 3*h.repeat, "a repeat of the notice", func() (bool, string) {
		return h.hooks.count(fp, herald.StatusOpen) >= 2, h.hooks.String()
	})
	id := onlyOpenAlert(t, h.api, h.project)
	var a herald.Alert
	h.api.call(t, "GET", "/groups/"+h.project+"/alerts/"+id, nil, http.StatusOK, &a)
	if a.Fingerprint != fp || a.Labels["severity"] != "critical" || a.Annotations["summary"] != "the flag is up" || a.GeneratorURL == "" {
		t.Errorf("the alert does not carry Prometheus' labels, annotations and generator URL: %+v", a)
	}
	h.api.call(t, "PATCH", "/groups/"+h.project+"/alerts/"+id, map[string]any{
		"acknowledgedUntil": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgementComment": "on it"}, http.StatusOK, nil)
	h.quietFor(t, fp, 2*h.repeat, "acknowledged")

	target.v.Store(0)
	waitFor(t, 60*time.Second, "the resolution notice", func() (bool, string) {
		return h.hooks.count(fp, herald.StatusClosed) >= 1, h.hooks.String()
	})
}

// amtool against Herald's front door, its URL carrying an API key: an alert amtool adds opens
// and is listed by `amtool alert query`; `amtool silence add` silences it (the next repeat is
// not sent), `amtool silence query` lists the silence, `amtool silence expire` ends it and the
// repeats resume.
func TestAmtoolAgainstHerald(t *testing.T) {
	amtool := requireProgram(t, "/usr/bin/amtool")
	h := startPromHerald(t)
	amURL := "--alertmanager.url=http://" + h.publicKey + ":" + h.privateKey + "@" + h.addr + api.PrometheusPath + "/groups/" + h.project
	run := func(args ...string) string {
		t.Helper()
		// amtool warns on stderr that Herald's version is not its own: stdout is its answer.
		cmd := exec.Command(amtool, append([]string{amURL}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("amtool %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	run("alert", "add", "alertname=DiskFull", "severity=warning", "--annotation=summary=disk is full")
	fp := herald.Labels{"alertname": "DiskFull", "severity": "warning"}.Fingerprint()
	waitFor(t, 30*time.Second, "the notice of DiskFull", func() (bool, string) {
		return h.hooks.count(fp, herald.StatusOpen) >= 1, h.hooks.String()
	})
	if out := run("alert", "query"); !strings.Contains(out, "DiskFull") || !strings.Contains(out, "disk is full") {
		t.Fatalf("amtool alert query does not list DiskFull:\n%s", out)
	}
	if out := run("alert", "query", "alertname=Other"); strings.Contains(out, "DiskFull") {
		t.Fatalf("amtool alert query alertname=Other lists DiskFull:\n%s", out)
	}

	id := strings.TrimSpace(run("silence", "add", "alertname=DiskFull", "-c", "replacing the disk", "-d", "1h"))
	if !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
		t.Fatalf("amtool silence add printed %q, not an id", id)
	}
	if out := run("silence", "query"); !strings.Contains(out, id[:8]) || !strings.Contains(out, "replacing the disk") {
		t.Fatalf("amtool silence query does not list the silence:\n%s", out)
	}
	if out := run("alert", "query", "--silenced"); !strings.Contains(out, "DiskFull") {
		t.Fatalf("amtool alert query --silenced does not list the silenced alert:\n%s", out)
	}
	h.quietFor(t, fp, 2*h.repeat, "silenced")

	run("silence", "expire", id)
	if out := run("silence", "query"); strings.Contains(out, id[:8]) {
		t.Fatalf("an expired silence is still listed:\n%s", out)
	}
	before := h.hooks.count(fp, herald.StatusOpen)
	waitFor(t, 3*h.repeat, "the repeats to resume after the silence expired", func() (bool, string) {
		return h.hooks.count(fp, herald.StatusOpen) > before, h.hooks.String()
	})
}

// startPrometheus runs a real Prometheus in dir with rules (rules.yml), scraping target
// (host:port) every second, evaluating every second and sending its alerts to h's front door
// every second; it returns a function that kills it (runPrometheus).
func startPrometheus(t *testing.T, prometheus string, h *promHerald, dir, rules, target string) (kill func()) {
	t.Helper()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: flag
    static_configs:
      - targets: [%q]
alerting:
  alertmanagers:
    - scheme: http
      path_prefix: %q
      basic_auth:
        username: %q
        password: %q
      static_configs:
        - targets: [%q]
`, filepath.Join(dir, "rules.yml"), target, api.PrometheusPath+"/groups/"+h.project, h.publicKey, h.privateKey, h.addr)
	for name, body := range map[string]string{"rules.yml": rules, "prometheus.yml": config} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return runPrometheus(t, prometheus, dir, testkit.FreeLoopbackAddr(t), "--rules.alert.resend-delay=1s")
}
