//go:build linux

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// workerLease is the lease a worker's sessions hold (HERALD_ENGINE_LEASE's default).
const workerLease = 8 * time.Second

// A worker stopped (SIGSTOP) for longer than its lease while its sessions evaluate reports and
// send their notices, and resumed (SIGCONT) once the other worker has taken its projects over.
// Every condition must have one alert: the resumed worker's sessions commit nothing (their
// writes are fenced by the lease they lost). Nothing may be sent twice but what the stopped
// worker had committed and not yet recorded as sent when it stopped (its projects' outbox
// then, read at once): the at-least-once window, which the worker taking over sends again.
func workerPaused(t *testing.T, sc scale) row {
	// A target taking 200 ms keeps the sessions busy sending; reports keep coming, a few hosts
	// at a time, before the stop, during it and after the worker resumed.
	c, h, l, ps := webhookScene(t, clusterSpec{workers: 2, schedulers: 1}, 200*time.Millisecond, "lease", sc.leaseProjects, sc.leaseHosts)
	const chunk = 3
	var wg sync.WaitGroup
	for _, p := range ps { // every project's agent at once: hosts down, a few at a time, then up
		wg.Go(func() {
			for _, active := range []bool{true, false} {
				for from := 0; from < len(p.hosts); from += chunk {
					l.report(t, p.g, p.hosts[from:min(from+chunk, len(p.hosts))], active, "webhook")
					time.Sleep(600 * time.Millisecond)
				}
			}
		})
	}
	// Stop the worker with the most deliveries under way, once both are at work.
	time.Sleep(3 * time.Second)
	var victim *proc
	waitUntil(t, 15*time.Second, "a worker to send", func() (bool, string) {
		i, sending := busiestWorker(c, h)
		if len(sending) > 0 {
			victim = c.workers[i]
		}
		return victim != nil, fmt.Sprintf("%d requests waiting", h.busy())
	})
	if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Cleanup(func() { _ = victim.cmd.Process.Signal(syscall.SIGCONT) })
	window := unsent(t, c, ps)
	const pause = workerLease + 4*time.Second
	time.Sleep(pause)
	if err := victim.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	wg.Wait()
	loaded := time.Now()
	done, tl := awaitAll(c, h, l, nil, 90*time.Second, sc.settle)
	checkRoles(t, c)
	checkPromises(t, tl)

	times := map[string]int{}
	for _, n := range h.notices() {
		times[n.key]++
	}
	var twice, beyond []string
	for k, n := range times {
		if n > 1 {
			twice = append(twice, k)
			if !window[k] {
				beyond = append(beyond, k)
			}
		}
	}
	slices.Sort(beyond)
	if len(beyond) > 0 {
		t.Errorf("%d notices sent twice that were not waiting to be sent when the worker stopped, e.g. %v", len(beyond), beyond[:min(5, len(beyond))])
	}
	alerts, conditions := alertsPerCondition(t, c, ps)
	if alerts != conditions || tl.extra > 0 {
		t.Errorf("%d alerts for %d conditions (%d extra by their notices): a paused session committed after another took its project",
			alerts, conditions, tl.extra)
	}
	return row{scale: fmt.Sprintf("%d alerts, SIGSTOP %s", sc.leaseProjects*sc.leaseHosts, pause), tally: tl, recovery: since(latest(resumed, loaded), done),
		figure: fmt.Sprintf("%d notices waiting to be sent at the stop, %d of them sent twice, none other; %d alerts for %d conditions; all arrived %s after the stop",
			len(window), len(twice), alerts, conditions, since(stopped, done).Round(100*time.Millisecond))}
}

// unsent are the delivery ids of the notices in the outbox of the projects of ps now: committed
// and not yet recorded as sent. The outbox is read where store/engine.go keeps it, each entry
// as store.OutboxNotices reads it.
func unsent(t *testing.T, c *cluster, ps []project) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range ps {
		entries, err := c.redis.ctl.ZRange(context.Background(), "herald:{g:"+p.g.project+"}:outbox", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			ns, err := store.OutboxNotices([]byte(e))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range ns {
				var d struct {
					DeliveryID string `json:"deliveryId"`
				}
				if err := json.Unmarshal(n, &d); err != nil {
					t.Fatal(err)
				}
				out[d.DeliveryID] = true
			}
		}
	}
	return out
}

// alertsPerCondition counts the alerts of the projects of ps, and the conditions (hosts) they
// are about, through the API.
func alertsPerCondition(t *testing.T, c *cluster, ps []project) (alerts, conditions int) {
	t.Helper()
	hosts := map[string]bool{}
	for _, p := range ps {
		for page := 1; ; page++ {
			var res struct {
				Results []struct{ HostnameAndPort string }
			}
			c.admin.call(t, "GET", fmt.Sprintf("/groups/%s/alerts?itemsPerPage=500&pageNum=%d", p.g.project, page), nil, http.StatusOK, &res)
			for _, a := range res.Results {
				alerts++
				hosts[a.HostnameAndPort] = true
			}
			if len(res.Results) < 500 {
				break
			}
		}
	}
	return alerts, len(hosts)
}
