package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// Scenario 10, heartbeats (go run ./bench -only heartbeats): -heartbeats heartbeats with a
// period of one minute and a grace of one, made through `herald api` and each pinged over
// HTTP at the ping endpoint once a minute at a moment of its own, while one `herald worker`
// watches them (both processes of their own on the benchmark's Redis; Herald's minute is
// -heartbeat-minute, the real one unless shortened). Then, at the start of each of
// -heartbeat-miss-minutes minutes, a new 1% of them stop being pinged for two periods: each
// must be found missed and notified (HEARTBEAT_MISSED opened, its notice at a webhook
// receiver on 127.0.0.1) within 5 s of its deadline, its last ping plus period and grace as
// the due set holds it; they are pinged again after, which closes their alerts.
const (
	hbPingers         = 32 // pings in flight at once
	hbCreators        = 8  // creations in flight at once
	hbNoticeLimit     = 5 * time.Second
	hbWorkerCPUTarget = 0.10 // of one core, all heartbeats healthy
	hbMemoryTarget    = 1024 // Redis bytes a heartbeat
	hbSilentShare     = 100  // 1 in 100 go silent each minute
)

// hbRun is the state of one run of the scenario, shared by its creators, pinger and checks.
type hbRun struct {
	n       int
	minute  time.Duration
	project string
	start   time.Time // minute 0 of the pinger: heartbeat i's moment in minute k is start + k minutes + i/n of one

	urls  []string      // each heartbeat's ping URL, once made
	ids   []string      // and its id
	ready []atomic.Bool // set once urls[i] and ids[i] are

	missFrom atomic.Int64 // the minute the first silent group stops, once known (0: not yet)

	pinged, failed atomic.Int64
	maxLag         atomic.Int64 // the latest a ping was sent after its moment, in ns
	lag            atomic.Int64 // how late the last ping was sent, in ns

	mu       sync.Mutex
	failures map[string]int // failed pings by what went wrong
}

// fail counts a failed ping under why.
func (r *hbRun) fail(why string) {
	r.failed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[string]int{}
	}
	r.failures[why]++
}

// progress logs the pinger's progress every half minute until ctx ends.
func (r *hbRun) progress(ctx context.Context) {
	tick := time.NewTicker(r.minute / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		failures := fmt.Sprint(r.failures)
		r.mu.Unlock()
		log.Printf("heartbeats: minute %.1f: %d pinged, %d failed %s, the last sent %s after its moment",
			float64(time.Since(r.start))/float64(r.minute), r.pinged.Load(), r.failed.Load(), failures,
			time.Duration(r.lag.Load()).Round(time.Millisecond))
	}
}

// group is heartbeat i's silent group: those of group g stop in minute missFrom+g.
func (r *hbRun) group(i int) int { return i / max(1, r.n/hbSilentShare) }

// silent reports whether heartbeat i skips its ping of minute k: the two minutes after its
// group stops, whose second holds its deadline (two periods after its last ping).
func (r *hbRun) silent(i, k int, groups int) bool {
	from := int(r.missFrom.Load())
	g := r.group(i)
	return from > 0 && g < groups && k >= from+g && k <= from+g+1
}

// moment is heartbeat i's time to ping in minute k.
func (r *hbRun) moment(i, k int) time.Time {
	return r.start.Add(time.Duration(k)*r.minute + time.Duration(i)*r.minute/time.Duration(r.n))
}

// heartbeats is scenario 10.
func (b *bench) heartbeats(ctx context.Context) ([]figure, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n, minute, groups := b.sizes.Heartbeats, b.sizes.HBMinute, b.sizes.HBMissRounds
	minuteEnv := "HERALD_MINUTE=" + minute.String()
	a, err := b.startAPIUnderTest(ctx, minuteEnv)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	w, err := b.startWorker(minuteEnv)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	recv, err := startKeyedReceiver(0, heartbeatNoticeKeys)
	if err != nil {
		return nil, err
	}
	defer recv.stop()
	admin := apiClient{base: a.base + api.BasePath, http: keepAliveClient(benchPublicKey, benchPrivateKey)}
	r := &hbRun{n: n, minute: minute, urls: make([]string, n), ids: make([]string, n), ready: make([]atomic.Bool, n)}
	if r.project, err = setUpHeartbeatProject(ctx, admin, recv.URL); err != nil {
		return nil, err
	}
	memBefore, err := b.redis.usedMemory(ctx)
	if err != nil {
		return nil, err
	}
	clientsBefore, err := b.redis.clientsMemory(ctx)
	if err != nil {
		return nil, err
	}

	r.start = time.Now()
	pinger := make(chan error, 1)
	go func() { pinger <- r.ping(ctx, groups) }()
	go r.progress(ctx)
	log.Printf("heartbeats: making %d (period 1, grace 1, a minute of %s) and pinging each once a minute", n, minute)
	if err := r.create(ctx, a.base, n); err != nil {
		return nil, err
	}
	made := time.Since(r.start)
	// Every heartbeat pinged once since it was made: the end of the minute after the one the
	// last was made in.
	pingedAll := r.start.Add((made/minute + 2) * minute)
	log.Printf("heartbeats: %d made in %s (%.0f /s); every one pinged by %s", n, made.Round(time.Millisecond),
		float64(n)/made.Seconds(), time.Until(pingedAll).Round(time.Second))
	if err := r.sleepOrFail(ctx, pingedAll, pinger); err != nil {
		return nil, err
	}
	memAfter, err := b.redis.usedMemory(ctx)
	if err != nil {
		return nil, err
	}
	clientsAfter, err := b.redis.clientsMemory(ctx)
	if err != nil {
		return nil, err
	}
	events, err := b.redis.memoryOf(ctx, "herald:{g:"+r.project+"}:event*")
	if err != nil {
		return nil, err
	}
	if text, err := b.redis.keyBreakdown(ctx); err == nil {
		log.Printf("heartbeats: Redis memory by key pattern (MEMORY USAGE):\n%s", text)
	}

	// A minute with every heartbeat healthy: the worker's CPU, the others' beside.
	log.Printf("heartbeats: measuring the worker's CPU over a minute with every heartbeat pinged in time")
	cpu0, err := cpuOf(a.process, w, b.redis.pid())
	if err != nil {
		return nil, err
	}
	pinged0, t0 := r.pinged.Load(), time.Now()
	if err := r.sleepOrFail(ctx, t0.Add(minute), pinger); err != nil {
		return nil, err
	}
	cpu1, err := cpuOf(a.process, w, b.redis.pid())
	if err != nil {
		return nil, err
	}
	window, pings := time.Since(t0), r.pinged.Load()-pinged0

	// The misses: a new 1% silent at the start of each minute from the next one.
	from := int(time.Since(r.start)/minute) + 1
	r.missFrom.Store(int64(from))
	log.Printf("heartbeats: from minute %d, %d groups of %d go silent, one a minute", from, groups, n/hbSilentShare)
	deadlines, err := r.deadlines(ctx, store.New(b.redis.Client), groups, pinger)
	if err != nil {
		return nil, err
	}
	last := slices.MaxFunc(deadlines, func(x, y hbDeadline) int { return x.at.Compare(y.at) })
	wantKeys := map[string]time.Time{}
	for _, d := range deadlines {
		wantKeys[noticeKey("OPEN", heartbeatName(d.i))] = d.at
	}
	if err := recv.waitForKeys(ctx, wantKeys, time.Until(last.at)+hbNoticeLimit+patience(len(wantKeys))); err != nil {
		got, _ := recv.results()
		return nil, fmt.Errorf("%w (%d deliveries came, first %v; worker: %s; api: %s)", err, len(got), got[:min(1, len(got))], w.tail(), a.tail())
	}
	arrivals, duplicates := recv.results()
	var lateness []time.Duration
	unexpected := 0
	for _, a := range arrivals {
		if dl, ok := wantKeys[a.Key]; ok {
			lateness = append(lateness, a.At.Sub(dl))
		} else if len(a.Key) > 5 && a.Key[:5] == "OPEN " {
			unexpected++
		}
	}
	if len(lateness) == 0 {
		return nil, errors.New("no miss was notified")
	}
	slices.Sort(lateness)
	early := 0
	for _, l := range lateness {
		if l < 0 {
			early++
		}
	}
	cancel()
	<-pinger

	perHB := float64(memAfter-memBefore) / float64(n)
	cpuShare := func(i int) float64 { return float64(cpu1[i]-cpu0[i]) / float64(window) }
	p99, worst := quantile(lateness, 0.99), lateness[len(lateness)-1]
	return []figure{
		{Name: "10. heartbeats made", Value: fmt.Sprintf("%d, a minute of %s, in %s (%.0f /s)", n, minute, made.Round(time.Millisecond), float64(n)/made.Seconds())},
		{Name: "10. Redis memory per heartbeat", Value: fmt.Sprintf("%.0f B (used_memory +%s; of it their creation's audit events %.0f B a heartbeat, connections' buffers %+d KiB)",
			perHB, mib(memAfter-memBefore), float64(events)/float64(n), (clientsAfter-clientsBefore)>>10),
			Target: fmt.Sprintf("≤ %d B", hbMemoryTarget), Result: judge(perHB <= hbMemoryTarget)},
		{Name: "10. worker CPU, every heartbeat healthy", Value: fmt.Sprintf("%.1f %% of a core over %s (api %.1f %%, redis-server %.1f %%, for %.0f pings/s, %d failed, latest ping %s after its moment)",
			100*cpuShare(1), window.Round(time.Second), 100*cpuShare(0), 100*cpuShare(2), float64(pings)/window.Seconds(), r.failed.Load(),
			time.Duration(r.maxLag.Load()).Round(time.Millisecond)),
			Target: fmt.Sprintf("< %.0f %%", 100*hbWorkerCPUTarget), Result: judge(cpuShare(1) < hbWorkerCPUTarget)},
		{Name: "10. missed heartbeats notified", Value: fmt.Sprintf("%d of %d (%d duplicates)", len(lateness), len(wantKeys), duplicates),
			Target: "all", Result: judge(len(lateness) == len(wantKeys) && duplicates == 0)},
		{Name: "10. notice − deadline, p99 / max", Value: fmt.Sprintf("%s / %s", p99.Round(time.Millisecond), worst.Round(time.Millisecond)),
			Target: "p99 ≤ " + hbNoticeLimit.String(), Result: judge(p99 <= hbNoticeLimit)},
		{Name: "10. misses notified before their deadline, or of heartbeats pinged in time", Value: fmt.Sprintf("%d, %d", early, unexpected),
			Target: "0, 0", Result: judge(early == 0 && unexpected == 0)},
	}, nil
}

// setUpHeartbeatProject makes the scenario's project: its default configurations disabled,
// and one that sends HEARTBEAT_MISSED to the webhook at hook, at once.
func setUpHeartbeatProject(ctx context.Context, admin apiClient, hook string) (string, error) {
	var org, project struct{ ID string }
	if err := admin.call(ctx, "POST", "/orgs", map[string]any{"name": "bench"}, http.StatusCreated, &org); err != nil {
		return "", err
	}
	if err := admin.call(ctx, "POST", "/groups", map[string]any{"name": "bench", "orgId": org.ID}, http.StatusCreated, &project); err != nil {
		return "", err
	}
	var defaults struct{ Results []struct{ ID string } }
	if err := admin.call(ctx, "GET", "/groups/"+project.ID+"/alertConfigs?itemsPerPage=500", nil, http.StatusOK, &defaults); err != nil {
		return "", err
	}
	for _, c := range defaults.Results {
		if err := admin.call(ctx, "PATCH", "/groups/"+project.ID+"/alertConfigs/"+c.ID, map[string]any{"enabled": false}, http.StatusOK, nil); err != nil {
			return "", err
		}
	}
	return project.ID, admin.call(ctx, "POST", "/groups/"+project.ID+"/alertConfigs", map[string]any{
		"eventTypeName": herald.EventTypeHeartbeatMissed, "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": hook, "delayMin": 0, "intervalMin": 1440}},
	}, http.StatusCreated, nil)
}

func heartbeatName(i int) string { return fmt.Sprintf("hb-%06d", i) }

// create makes heartbeats 0 … n-1 through the API at base, hbCreators at once.
func (r *hbRun) create(ctx context.Context, base string, n int) error {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	errs := make(chan error, hbCreators)
	var wg sync.WaitGroup
	for range hbCreators {
		c := apiClient{base: base + api.BasePath, http: keepAliveClient(benchPublicKey, benchPrivateKey)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var h struct{ ID, PingURL string }
				if err := c.call(ctx, "POST", "/groups/"+r.project+"/heartbeats",
					map[string]any{"name": heartbeatName(i), "periodMin": 1, "graceMin": 1}, http.StatusCreated, &h); err != nil {
					errs <- err
					return
				}
				r.urls[i], r.ids[i] = h.PingURL, h.ID
				r.ready[i].Store(true)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ping pings every heartbeat made at its moment of each minute, but for the silent ones, until
// ctx ends (nil then); hbPingers requests in flight at once, each on a connection of its own.
func (r *hbRun) ping(ctx context.Context, groups int) error {
	type job struct {
		i  int
		at time.Time
	}
	jobs := make(chan job, 4*hbPingers)
	var wg sync.WaitGroup
	for range hbPingers {
		c := keepAliveClient("", "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r.lag.Store(int64(time.Since(j.at)))
				for lag := int64(time.Since(j.at)); ; {
					if was := r.maxLag.Load(); lag <= was || r.maxLag.CompareAndSwap(was, lag) {
						break
					}
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.urls[j.i], nil)
				if err != nil {
					r.fail(err.Error())
					continue
				}
				resp, err := c.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						r.fail(err.Error())
					}
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					r.fail(resp.Status)
					continue
				}
				r.pinged.Add(1)
			}
		}()
	}
	defer func() { close(jobs); wg.Wait() }()
	for k := 0; ; k++ {
		for i := range r.n {
			at := r.moment(i, k)
			if d := time.Until(at); d > 2*time.Millisecond {
				if err := sleepUntil(ctx, at); err != nil {
					return nil
				}
			}
			if !r.ready[i].Load() || r.silent(i, k, groups) {
				continue
			}
			select {
			case jobs <- job{i, at}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// sleepOrFail waits until t, failing if the pinger stopped meanwhile.
func (r *hbRun) sleepOrFail(ctx context.Context, t time.Time, pinger chan error) error {
	select {
	case err := <-pinger:
		return fmt.Errorf("the pinger stopped: %v", err)
	case <-time.After(time.Until(t)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hbDeadline is a silent heartbeat's deadline, as the due set held it once it went silent.
type hbDeadline struct {
	i  int
	at time.Time
}

// deadlines reads the deadline of each silent heartbeat from the due set, half a minute into
// the first minute its group is silent: its last ping was the minute before, and its deadline
// is a minute later.
func (r *hbRun) deadlines(ctx context.Context, st *store.Store, groups int, pinger chan error) ([]hbDeadline, error) {
	size := max(1, r.n/hbSilentShare)
	var out []hbDeadline
	from := int(r.missFrom.Load())
	for g := range groups {
		if err := r.sleepOrFail(ctx, r.start.Add(time.Duration(from+g)*r.minute+r.minute/2), pinger); err != nil {
			return nil, err
		}
		for i := g * size; i < min((g+1)*size, r.n); i++ {
			at, err := st.HeartbeatDue(ctx, r.project, r.ids[i])
			if err != nil {
				return nil, err
			}
			if at.IsZero() {
				return nil, fmt.Errorf("heartbeat %s has no deadline half a minute after it went silent", heartbeatName(i))
			}
			out = append(out, hbDeadline{i, at})
		}
	}
	return out, nil
}

// cpuOf is the CPU time used so far by api, worker and redis-server (pid), in that order.
func cpuOf(api, worker *process, redisPID int) ([3]time.Duration, error) {
	return (&heraldProcs{api: api, worker: worker}).cpuTimes(redisPID)
}

// heartbeatNoticeKeys tells a heartbeat alert's notices apart by their status and heartbeat:
// "OPEN <name>", "CLOSED <name>".
func heartbeatNoticeKeys(body []byte, _ http.Header) []string {
	var a struct{ Status, HeartbeatName string }
	if err := json.Unmarshal(body, &a); err != nil {
		return []string{"undecodable"}
	}
	return []string{noticeKey(a.Status, a.HeartbeatName)}
}

func noticeKey(status, name string) string { return status + " " + name }

// waitForKeys waits until a delivery of every key of want has arrived.
func (r *receiver) waitForKeys(ctx context.Context, want map[string]time.Time, within time.Duration) error {
	missing := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for k := range want {
			if pk, ok := packKey(k); ok {
				if _, seen := r.seen[pk]; !seen {
					n++
				}
			} else if !r.longSeen[k] {
				n++
			}
		}
		return n
	}
	err := poll(ctx, within, func() (bool, error) { return missing() == 0, nil })
	if err != nil {
		return fmt.Errorf("%d of %d notices did not arrive: %w", missing(), len(want), err)
	}
	return nil
}

// memoryOf is MEMORY USAGE of every key matching pattern, each counted whole (SAMPLES 0).
func (rs *redisServer) memoryOf(ctx context.Context, pattern string) (int64, error) {
	var total int64
	var cursor uint64
	for {
		keys, next, err := rs.Client.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return 0, err
		}
		for _, k := range keys {
			n, err := rs.Client.MemoryUsage(ctx, k, 0).Result()
			if err != nil {
				continue // gone since the scan
			}
			total += n
		}
		if cursor = next; cursor == 0 {
			return total, nil
		}
	}
}
