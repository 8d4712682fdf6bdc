package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/metrics"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// startRoleServingMetrics starts `herald role` as a child process on redisURL with
// HERALD_METRICS_LISTEN on a free loopback port, and returns the base URL it serves on (read
// from its log).
func startRoleServingMetrics(t *testing.T, role, redisURL string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HERALD_TEST_ROLE="+role, "HERALD_REDIS_URL="+redisURL,
		"HERALD_METRICS_LISTEN=127.0.0.1:0", "HERALD_LOG_LEVEL=info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			var entry struct{ Msg, Address string }
			if json.Unmarshal(lines.Bytes(), &entry) == nil && strings.HasPrefix(entry.Msg, "serving /metrics") {
				found <- "http://" + entry.Address
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // the child never blocks on a full pipe
	}()
	select {
	case base := <-found:
		return base
	case <-time.After(10 * time.Second):
		t.Fatalf("herald %s did not say where it serves its metrics within 10s", role)
		return ""
	}
}

// fetch gets url and returns its status and body.
func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, body := testkit.Get(t, url)
	return resp.StatusCode, body
}

// Workers and schedulers, which have no API, serve /metrics, /healthz and /readyz on
// HERALD_METRICS_LISTEN. A scheduler's metrics include the installation's gauges and its jobs'
// lateness; a worker's leave the gauges to the API and the schedulers, and show every delivery
// series at zero before any delivery.
func TestRolesServeMetrics(t *testing.T) {
	redisURL := storetest.URL(storetest.Redis(t))
	for _, tc := range []struct {
		role        string
		has, hasNot []string
	}{
		{"worker", []string{"go_goroutines", "process_resident_memory_bytes", `herald_deliveries_total{kind="WEBHOOK",outcome="delivered"} 0`, `herald_deliveries_total{kind="SMS",outcome="failed"} 0`}, []string{"herald_queue_size", "herald_open_alerts"}},
		{"scheduler", []string{"go_goroutines", `herald_queue_size{queue="engine",state="pending"}`,
			`herald_open_alerts{scope="project",status="open"}`, `herald_schedule_lateness_seconds_count{task="reconcile"}`,
			`herald_scheduler_runs_total{job="retention",outcome="failed"} 0`}, nil},
	} {
		t.Run(tc.role, func(t *testing.T) {
			base := startRoleServingMetrics(t, tc.role, redisURL)
			for _, path := range []string{"/healthz", "/readyz"} {
				if code, body := fetch(t, base+path); code != http.StatusOK || !strings.Contains(body, `"status"`) {
					t.Errorf("GET %s: %d %s", path, code, body)
				}
			}
			// The scheduler's first reconcile runs as it starts: its lateness shows soon after, or
			// at the next one (every 5 s) if the first ran before this scheduler knew it leads.
			// The wait is bounded well past that: a loaded machine is slow, not wrong.
			var body string
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if _, body = fetch(t, base+"/metrics"); containsEvery(body, tc.has) {
					break
				}
			}
			for _, s := range tc.has {
				if !strings.Contains(body, s) {
					t.Errorf("/metrics has no %s", s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(body, s) {
					t.Errorf("/metrics has %s", s)
				}
			}
		})
	}
}

func containsEvery(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// /readyz answers 503 while Redis does not answer, /healthz 200 all the same; Shutdown stops
// serving.
func TestHealthServerReadiness(t *testing.T) {
	rdb := storetest.Redis(t)
	h := newHealthServer("127.0.0.1:0", store.New(rdb), metrics.New().Handler(), zap.NewNop())
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + h.addr
	if code, _ := fetch(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d with Redis up", code)
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if code, body := fetch(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d %s without Redis, want 503", code, body)
	}
	if code, _ := fetch(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d without Redis, want 200", code)
	}
	h.Shutdown()
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after Shutdown")
	}
}

// The health listener bounds every phase of a connection, idle time included, and closes an
// idle keep-alive connection once its idle timeout passes.
func TestHealthServerClosesIdleConnections(t *testing.T) {
	h := newHealthServer("127.0.0.1:0", store.New(storetest.Redis(t)), metrics.New().Handler(), zap.NewNop())
	if h.srv.IdleTimeout <= 0 || h.srv.ReadHeaderTimeout <= 0 || h.srv.ReadTimeout <= 0 || h.srv.WriteTimeout <= 0 {
		t.Fatalf("unbounded timeouts: idle %s, read header %s, read %s, write %s",
			h.srv.IdleTimeout, h.srv.ReadHeaderTimeout, h.srv.ReadTimeout, h.srv.WriteTimeout)
	}
	h.srv.IdleTimeout = 200 * time.Millisecond
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	conn, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	started := time.Now()
	if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an idle connection stayed open %s (read %d, %v)", time.Since(started), n, err)
	}
}
