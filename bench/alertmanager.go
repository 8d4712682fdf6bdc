package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Alertmanager, run beside Herald in the storm scenario (storm.go) for the same storm: never
// part of Herald, and never in this repository. Get it with
//
//	go install github.com/prometheus/alertmanager/cmd/alertmanager@v0.28.1
//
// and the benchmark finds it on PATH, in $(go env GOPATH)/bin, or where -alertmanager says.
var alertmanagerBin = flag.String("alertmanager", "", "Alertmanager binary the storm is compared with (default: alertmanager on PATH, else $(go env GOPATH)/bin/alertmanager)")

// alertmanagerWant is the version the comparison was made with.
const alertmanagerWant = "0.28.1"

// alertmanagerConfig is the configuration that gives Alertmanager its best honest throughput
// for a storm of distinct alerts, each one notification: every alert its own group
// (group_by '...', all labels), sent as soon as its group exists (group_wait 0s), never again
// within the run (group_interval and repeat_interval an hour), resolved alerts not sent; the
// run starts it without a cluster (no gossip, no peer wait before a notification).
const alertmanagerConfig = `route:
  receiver: bench
  group_by: ['...']
  group_wait: 0s
  group_interval: 1h
  repeat_interval: 1h
receivers:
  - name: bench
    webhook_configs:
      - url: %q
        send_resolved: false
`

// alertmanagerSetup is alertmanagerConfig and the flags it runs with, in a line of the report.
const alertmanagerSetup = "in memory, no cluster (--cluster.listen-address=); route group_by ['...'] (every alert its own group), " +
	"group_wait 0s, group_interval 1h, repeat_interval 1h; one webhook receiver, send_resolved false"

// findAlertmanager is the binary to run, or why there is none.
func findAlertmanager() (string, error) {
	if *alertmanagerBin != "" {
		return *alertmanagerBin, nil
	}
	if p, err := exec.LookPath("alertmanager"); err == nil {
		return p, nil
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "alertmanager")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no alertmanager binary: go install github.com/prometheus/alertmanager/cmd/alertmanager@v" +
		alertmanagerWant + ", or give its path with -alertmanager")
}

// alertmanagerVersion is bin's version: what --version says, or, for a build of go install
// (which stamps none), its main module's version from the build information.
func alertmanagerVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	// "alertmanager, version 0.28.1 (branch: ..., revision: ...)"; empty from go install.
	if _, v, ok := strings.Cut(string(out), "version "); ok {
		if v, _, _ = strings.Cut(v, " "); strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return "", fmt.Errorf("%s states no version, and go version -m could not read one: %w", bin, err)
	}
	// "\tmod\tgithub.com/prometheus/alertmanager\tv0.28.1\th1:..."
	for line := range strings.SplitSeq(string(info), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" {
			return strings.TrimPrefix(f[2], "v"), nil
		}
	}
	return "", fmt.Errorf("%s states no version", bin)
}

// alertmanager is one Alertmanager process on 127.0.0.1, in memory (its storage in dir),
// notifying webhookURL.
type alertmanager struct {
	proc *process
	base string
	api  apiClient // its API v2, without authentication
}

func startAlertmanager(ctx context.Context, bin, dir, webhookURL string) (*alertmanager, error) {
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, alertmanagerConfig, webhookURL), 0o600); err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	p, err := startProcess("alertmanager", dir, bin, []string{"--config.file=" + cfg, "--storage.path=" + filepath.Join(dir, "am-data"),
		"--web.listen-address=" + addr, "--cluster.listen-address=", "--log.level=warn"}, nil)
	if err != nil {
		return nil, err
	}
	am := &alertmanager{proc: p, base: "http://" + addr, api: apiClient{base: "http://" + addr, http: &http.Client{Timeout: time.Minute}}}
	if err := waitServing(ctx, p, am.base+"/-/ready"); err != nil {
		p.stop()
		return nil, fmt.Errorf("alertmanager did not get ready: %w", err)
	}
	return am, nil
}

// amAlert is an alert as Alertmanager's API v2 takes it.
type amAlert struct {
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
}

// post sends alerts for hosts <prefix>-from … <prefix>-(to-1) in one request.
// post sends alerts (an encoded list, amAlertsDown) to Alertmanager's API.
func (am *alertmanager) post(ctx context.Context, alerts json.RawMessage) error {
	return am.api.call(ctx, http.MethodPost, "/api/v2/alerts", alerts, http.StatusOK, nil)
}

// amAlertsDown are firing HostDown alerts, starting now, for instances <prefix>-from …
// <prefix>-(to-1).
func amAlertsDown(prefix string, from, to int) []amAlert {
	now := time.Now()
	alerts := make([]amAlert, 0, to-from)
	for h := from; h < to; h++ {
		alerts = append(alerts, amAlert{Labels: map[string]string{"alertname": "HostDown", "instance": fmt.Sprintf("%s-%d", prefix, h)}, StartsAt: now})
	}
	return alerts
}

func (am *alertmanager) stop() { am.proc.stop() }

// alertmanagerKeys are the alerts a notification of Alertmanager's webhook carries, by their
// instance label: an alert notified twice is a duplicate.
func alertmanagerKeys(body []byte, _ http.Header) []string {
	var n struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if json.Unmarshal(body, &n) != nil {
		return []string{"undecodable"}
	}
	keys := make([]string, 0, len(n.Alerts))
	for _, a := range n.Alerts {
		keys = append(keys, a.Labels["instance"])
	}
	return keys
}
