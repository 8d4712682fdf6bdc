package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// Scenario 6: Prometheus re-sends every firing alert each resend interval. With n alerts open
// (first notices delivered, the next repeat an hour away), one re-post round (every alert again,
// in Prometheus' batches of 64, through the Alertmanager front door with Basic as Prometheus
// authenticates) is measured: CPU of Herald's process and of redis-server per batch, Redis
// commands per alert (INFO commandstats, less what the idle worker's polling issues over the
// same time), and deliveries (none: a refresh changes nothing). The same alerts re-posted to a
// real Alertmanager (-alertmanager, v0.28) give its CPU per batch for comparison.
var (
	prometheusAlerts = flag.Int("prometheus-alerts", 50_000, "scenario 6: firing alerts Prometheus re-sends (-quick: 5,000)")
)

const (
	prometheusBatch    = 64               // Prometheus' notifier sends at most 64 alerts a request
	prometheusInterval = 15 * time.Second // the re-send interval the figures are judged against
)

func (b *bench) prometheus(ctx context.Context) ([]figure, error) {
	n := *prometheusAlerts
	if b.quick && !flagGiven("prometheus-alerts") {
		n = 5_000
	}
	r, err := b.startRig(ctx, time.Minute, webhookNotification{DelayMin: 0, IntervalMin: 60})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	if err := r.api.call(ctx, "POST", "/groups/"+r.project+"/alertConfigs", map[string]any{
		"eventTypeName": herald.EventTypePrometheusAlert, "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": r.recv.URL, "delayMin": 0, "intervalMin": 60}},
	}, http.StatusCreated, nil); err != nil {
		return nil, err
	}
	door := strings.TrimSuffix(r.api.base, api.BasePath) + api.PrometheusPath + "/groups/" + r.project + "/api/v2/alerts"
	batches := promBatches(n)
	post := func(url, auth string) error {
		for _, body := range batches {
			if err := postAlerts(ctx, url, auth, body); err != nil {
				return err
			}
		}
		return nil
	}
	log.Printf("prometheus: opening %d alerts", n)
	if err := post(door, r.basic); err != nil {
		return nil, err
	}
	if err := r.recv.waitFor(ctx, n, patience(n)); err != nil {
		return nil, err
	}
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	// What the idle worker's polling costs in Redis commands, over as long as a round takes.
	log.Printf("prometheus: re-posting %d alerts in %d batches", n, len(batches))
	d0, _ := r.recv.counts()
	u0, err := b.usage(ctx)
	if err != nil {
		return nil, err
	}
	if err := post(door, r.basic); err != nil {
		return nil, err
	}
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	u1, err := b.usage(ctx)
	if err != nil {
		return nil, err
	}
	round := u1.at.Sub(u0.at)
	idle, err := b.idleCommands(ctx, round)
	if err != nil {
		return nil, err
	}
	d1, dup := r.recv.counts()
	cpu := (u1.self - u0.self) + (u1.server - u0.server)
	perBatch := cpu / time.Duration(len(batches))
	share := float64(cpu) / float64(prometheusInterval)
	ops := float64(u1.commands-u0.commands-idle) / float64(n)
	figs := []figure{
		{Name: "6. Prometheus re-post round (Herald)", Value: fmt.Sprintf("%d alerts in %d batches of %d, %s until the engine settled", n, len(batches), prometheusBatch, round.Round(time.Millisecond)),
			Target: "≤ " + prometheusInterval.String(), Result: judge(round <= prometheusInterval)},
		{Name: "6. CPU per re-post batch (Herald + Redis)", Value: fmt.Sprintf("%s (this process, which is also the posting client, %s; redis-server %s a round)", perBatch.Round(time.Microsecond),
			(u1.self - u0.self).Round(time.Millisecond), (u1.server - u0.server).Round(time.Millisecond))},
		{Name: "6. CPU share of every " + prometheusInterval.String() + " round", Value: fmt.Sprintf("%.1f%% of a core", 100*share)},
		{Name: "6. Redis commands per re-posted alert", Value: fmt.Sprintf("%.2f (idle polling over the round subtracted: %d)", ops, idle)},
		{Name: "6. deliveries during the re-post", Value: strconv.Itoa(d1 - d0 + dup), Target: "0", Result: judge(d1-d0+dup == 0)},
	}
	return append(figs, b.alertmanagerFigure(ctx, batches)...), nil
}

// usage is a point of the measurement: CPU of this process and redis-server, Redis commands
// processed so far.
type usage struct {
	at           time.Time
	self, server time.Duration
	commands     int64
}

func (b *bench) usage(ctx context.Context) (usage, error) {
	u := usage{at: time.Now()}
	var err1, err2, err3 error
	u.self, err1 = processCPU()
	u.server, err2 = b.redis.cpuTime(ctx)
	u.commands, err3 = b.redis.commands(ctx)
	return u, errors.Join(err1, err2, err3)
}

// idleCommands is how many Redis commands are processed over d with nothing to do.
func (b *bench) idleCommands(ctx context.Context, d time.Duration) (int64, error) {
	c0, err := b.redis.commands(ctx)
	if err != nil {
		return 0, err
	}
	if err := sleepUntil(ctx, time.Now().Add(d)); err != nil {
		return 0, err
	}
	c1, err := b.redis.commands(ctx)
	return c1 - c0, err
}

// promBatches is n firing alerts as Prometheus posts them: 64 a request, endsAt four resend
// intervals ahead, each with the labels and annotations a real rule gives.
func promBatches(n int) [][]byte {
	now := time.Now().UTC()
	var out [][]byte
	for i := 0; i < n; i += prometheusBatch {
		var alerts []herald.PostableAlert
		for j := i; j < min(i+prometheusBatch, n); j++ {
			start, end := herald.At(now.Add(-time.Minute)), herald.At(now.Add(time.Hour))
			alerts = append(alerts, herald.PostableAlert{
				Labels:      herald.Labels{"alertname": "InstanceDown", "instance": fmt.Sprintf("node-%d:9100", j), "job": "node", "severity": "critical"},
				Annotations: herald.Labels{"summary": fmt.Sprintf("node-%d is down", j), "description": "node-exporter has not answered for 5 minutes."},
				StartsAt:    &start, EndsAt: &end, GeneratorURL: "http://prometheus.example.com:9090/graph?g0.expr=up+%3D%3D+0",
			})
		}
		b, _ := json.Marshal(alerts)
		out = append(out, b)
	}
	return out
}

func postAlerts(ctx context.Context, url, auth string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

// alertmanagerFigure posts the batches to a real Alertmanager twice (the second time re-posts,
// as Prometheus does) and reports its CPU per re-post batch, or that it was not measured.
func (b *bench) alertmanagerFigure(ctx context.Context, batches [][]byte) []figure {
	name := "6. CPU per re-post batch (Alertmanager, for comparison)"
	bin, err := findAlertmanager()
	if err != nil {
		log.Printf("prometheus: Alertmanager not measured: %v", err)
		return []figure{{Name: name, Value: "not measured: " + err.Error()}}
	}
	perBatch, version, err := alertmanagerRePost(ctx, bin, batches)
	if err != nil {
		log.Printf("prometheus: Alertmanager not measured: %v", err)
		return []figure{{Name: name, Value: "not measured: " + err.Error()}}
	}
	return []figure{{Name: name, Value: fmt.Sprintf("%s (%s, one process, in memory; the client not counted)", perBatch.Round(time.Microsecond), version)}}
}

func alertmanagerRePost(ctx context.Context, binary string, batches [][]byte) (time.Duration, string, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return 0, "", err
	}
	version := path
	dir, err := os.MkdirTemp("", "bench-alertmanager")
	if err != nil {
		return 0, "", err
	}
	defer os.RemoveAll(dir)
	config := "route:\n  receiver: none\nreceivers:\n  - name: none\n"
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(config), 0o600); err != nil {
		return 0, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, path, "--config.file="+filepath.Join(dir, "alertmanager.yml"), "--storage.path="+dir,
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr + "/api/v2/alerts"
	if err := poll(ctx, 20*time.Second, func() (bool, error) {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		return 0, "", err
	}
	for _, body := range batches { // the first post creates them
		if err := postAlerts(ctx, url, "", body); err != nil {
			return 0, "", err
		}
	}
	c0, err := childCPU(cmd.Process.Pid)
	if err != nil {
		return 0, "", err
	}
	for _, body := range batches {
		if err := postAlerts(ctx, url, "", body); err != nil {
			return 0, "", err
		}
	}
	c1, err := childCPU(cmd.Process.Pid)
	return (c1 - c0) / time.Duration(len(batches)), version, err
}

// childCPU is the CPU time (user and system) a process used so far, from /proc/<pid>/stat.
func childCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	const ticks = 100 // USER_HZ
	return time.Duration(utime+stime) * time.Second / ticks, errors.Join(err1, err2)
}

// flagGiven reports whether the command line set the flag.
func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
