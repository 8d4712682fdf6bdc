package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// The API read scenario: GET /groups/{id}/alerts/{id} with Digest authentication from 64
// keep-alive clients, each keeping its nonce and counting nc up a request as agents and
// dashboards do, against a plain net/http handler encoding the same alert in the same run.
//
// Both servers are processes of their own: Herald is `herald api` built from ./cmd/herald
// (logging at info, as deployed), the plain handler is this benchmark started again in its
// plain-server mode. The load generator (this process) is never measured: CPU per request is
// the server process's CPU time (/proc) plus, for Herald, Redis's (INFO cpu), over the run.
// With -profile, `herald api` writes its own CPU profile (HERALD_CPU_PROFILE) beside the
// scenario's.

// Targets of the read scenario.
const (
	readClients     = 64
	readRatioTarget = 0.5
	readP99Target   = 10 * time.Millisecond
	readCPUTarget   = 100 * time.Microsecond
)

// benchKey is the global owner key the benchmark's `herald api` is started with.
const benchPublicKey, benchPrivateKey = "bench", "0f3c9a4e-bench-private-key"

// apiUnderTest is the `herald api` process the scenario loads, and its base URL.
type apiUnderTest struct {
	*process
	base string
}

// startAPIUnderTest starts `herald api` on the benchmark's Redis, with env added to its
// settings.
func (b *bench) startAPIUnderTest(ctx context.Context, env ...string) (*apiUnderTest, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	c, err := b.startHerald("api", append([]string{"HERALD_LISTEN=" + addr, "HERALD_BOOTSTRAP_KEY=" + benchPublicKey + ":" + benchPrivateKey}, env...)...)
	if err != nil {
		return nil, err
	}
	if err := waitServing(ctx, c, "http://"+addr+"/readyz"); err != nil {
		c.stop()
		return nil, err
	}
	return &apiUnderTest{process: c, base: "http://" + addr}, nil
}

// startWorker starts `herald worker` on the benchmark's Redis, with env added to its settings.
func (b *bench) startWorker(env ...string) (*process, error) {
	return b.startHerald("worker", append([]string{fmt.Sprintf("HERALD_WORKER_CONCURRENCY=%d", b.sizes.Concurrency), "HERALD_ALLOW_PRIVATE_TARGETS=true"}, env...)...)
}

// apiRead is the scenario.
func (b *bench) apiRead(ctx context.Context) ([]figure, error) {
	a, err := b.startAPIUnderTest(ctx)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	admin := apiClient{base: a.base + api.BasePath, http: keepAliveClient(benchPublicKey, benchPrivateKey)}
	path, alert, err := b.openOneAlert(ctx, admin)
	if err != nil {
		return nil, err
	}
	plain, err := b.startPlainServer(ctx, alert)
	if err != nil {
		return nil, err
	}
	defer plain.child.stop()

	var rounds []readRound
	for round := 1; round <= b.sizes.ReadRounds; round++ {
		r, err := b.readRound(ctx, a, plain, path, round)
		if err != nil {
			return nil, err
		}
		rounds = append(rounds, r)
	}
	return readFigures(rounds, b.sizes.ReadFor), nil
}

// readRound is one round of scenario 7: the plain handler loaded, then Herald, the same way.
type readRound struct {
	plain, herald            loadResult
	plainCPU, apiCPU, redis  time.Duration
	plainOthers, heraldOther string // how the machine's CPU went meanwhile
}

func (r readRound) ratio() float64 { return r.herald.rate() / r.plain.rate() }

// cpuPerRequest is Herald's CPU (API + Redis) a request.
func (r readRound) cpuPerRequest() time.Duration {
	return (r.apiCPU + r.redis) / time.Duration(max(1, r.herald.ok))
}

// readRound loads the plain handler and then Herald for -read-for each.
func (b *bench) readRound(ctx context.Context, a *apiUnderTest, plain *plainServer, path string, round int) (readRound, error) {
	var r readRound
	d := b.sizes.ReadFor
	log.Printf("apiread: plain net/http handler, %d clients for %s (round %d of %d)", readClients, d, round, b.sizes.ReadRounds)
	plainCPU0, err := plain.child.cpuTime()
	if err != nil {
		return r, err
	}
	plainBusy, err := startBusyWindow()
	if err != nil {
		return r, err
	}
	// With -profile, the load generator's own CPU against each server has a profile of its
	// own (the scenario's profile holds both): the clients' cost a request is part of what the
	// ratio weighs, the two servers sharing the machine with them.
	if err := b.profileTo(fmt.Sprintf("apiread.plain-clients.%d", round)); err != nil {
		return r, err
	}
	if r.plain, err = runLoad(ctx, clientsOf(readClients, "", ""), d, http.StatusOK, 0, getter(plain.base+path)); err != nil {
		return r, fmt.Errorf("plain handler: %w", err)
	}
	plainCPU1, err := plain.child.cpuTime()
	if err != nil {
		return r, err
	}
	r.plainCPU = plainCPU1 - plainCPU0
	if r.plainOthers, err = plainBusy.end(r.plainCPU); err != nil {
		return r, err
	}

	log.Printf("apiread: Herald with Digest, %d clients for %s (round %d of %d)", readClients, d, round, b.sizes.ReadRounds)
	api0, redis0, err := b.heraldCPU(ctx, a)
	if err != nil {
		return r, err
	}
	heraldBusy, err := startBusyWindow()
	if err != nil {
		return r, err
	}
	if err := b.profileTo(fmt.Sprintf("apiread.herald-clients.%d", round)); err != nil {
		return r, err
	}
	if r.herald, err = runLoad(ctx, clientsOf(readClients, benchPublicKey, benchPrivateKey), d, http.StatusOK, 0, getter(a.base+api.BasePath+path)); err != nil {
		return r, fmt.Errorf("herald: %w", err)
	}
	if err := b.profileTo("apiread.after-loads"); err != nil {
		return r, err
	}
	api1, redis1, err := b.heraldCPU(ctx, a)
	if err != nil {
		return r, err
	}
	r.apiCPU, r.redis = api1-api0, redis1-redis0
	if r.heraldOther, err = heraldBusy.end(r.apiCPU + r.redis); err != nil {
		return r, err
	}
	n := time.Duration(max(1, r.herald.ok))
	log.Printf("apiread: round %d: plain %.0f/s, Herald %.0f/s, %.3f×; Herald's CPU a request: API %s, Redis %s", round,
		r.plain.rate(), r.herald.rate(), r.ratio(), (r.apiCPU / n).Round(100*time.Nanosecond), (r.redis / n).Round(100*time.Nanosecond))
	return r, nil
}

// readFigures are scenario 7's figures over its rounds: the ratio and rates the median round's
// (every round's ratio beside it), p99 and CPU a request, which have targets, the worst
// round's.
func readFigures(rounds []readRound, d time.Duration) []figure {
	m, ratios := medianBy(rounds, readRound.ratio)
	slowest, costliest := m, m // the rounds of the worst p99 and of the most CPU a request
	for _, r := range rounds {
		if r.herald.p99() > slowest.herald.p99() {
			slowest = r
		}
		if r.cpuPerRequest() > costliest.cpuPerRequest() {
			costliest = r
		}
	}
	ratio := m.ratio()
	figs := []figure{
		{Name: "7. GET alert, plain net/http → req/s", Value: fmt.Sprintf("%.0f /s, p99 %s, %s CPU/request", m.plain.rate(),
			m.plain.p99().Round(10*time.Microsecond), perRequest(m.plainCPU, m.plain.ok))},
		{Name: "7. GET alert with Digest, Herald → req/s", Value: fmt.Sprintf("%.0f /s (%d clients, %s)", m.herald.rate(), readClients, d)},
		{Name: "7. Herald ÷ plain handler", Value: fmt.Sprintf("%.3f×%s", ratio, roundsNote(ratios)),
			Target: fmt.Sprintf("≥ %.1f×", readRatioTarget), Result: judge(ratio >= readRatioTarget)},
		{Name: "7. Herald p99", Value: slowest.herald.p99().Round(10 * time.Microsecond).String(), Target: "≤ " + readP99Target.String(), Result: judge(slowest.herald.p99() <= readP99Target)},
	}
	per := costliest.cpuPerRequest()
	return append(figs, figure{Name: "7. Herald CPU/request (API + Redis)", Value: fmt.Sprintf("%s (%s + %s)",
		per.Round(time.Microsecond), perRequest(costliest.apiCPU, costliest.herald.ok), perRequest(costliest.redis, costliest.herald.ok)),
		Target: "≤ " + readCPUTarget.String(), Result: judge(per <= readCPUTarget)},
		figure{Name: "7. the machine meanwhile (CPU, % of a core)", Value: fmt.Sprintf("plain: %s; Herald: %s", m.plainOthers, m.heraldOther)})
}

// busyWindow is a load window's start, to tell how the machine's CPU went over it: to the
// servers measured, to this process (the load generator), and to other processes (other
// builds and benchmarks on a shared machine; rates and p99 suffer from them far more than
// CPU per request).
type busyWindow struct {
	start            time.Time
	machine, clients time.Duration
}

func startBusyWindow() (busyWindow, error) {
	machine, err := machineBusy()
	if err != nil {
		return busyWindow{}, err
	}
	clients, err := processCPU()
	return busyWindow{start: time.Now(), machine: machine, clients: clients}, err
}

// end says how the window's CPU went, servers being what the servers measured spent over it.
func (w busyWindow) end(servers time.Duration) (string, error) {
	machine, err := machineBusy()
	if err != nil {
		return "", err
	}
	clients, err := processCPU()
	if err != nil {
		return "", err
	}
	elapsed := time.Since(w.start)
	share := func(d time.Duration) string { return fmt.Sprintf("%.0f%%", 100*max(d, 0).Seconds()/elapsed.Seconds()) }
	c := clients - w.clients
	return fmt.Sprintf("servers %s, clients %s, other processes %s", share(servers), share(c), share(machine-w.machine-servers-c)), nil
}

// heraldCPU is the CPU time of the API process and of Redis so far.
func (b *bench) heraldCPU(ctx context.Context, a *apiUnderTest) (api, redis time.Duration, err error) {
	if redis, err = b.redis.cpuTime(ctx); err != nil {
		return 0, 0, err
	}
	api, err = a.cpuTime()
	return api, redis, err
}

func perRequest(cpu time.Duration, n int) string {
	return (cpu / time.Duration(max(1, n))).Round(time.Microsecond).String()
}

// clientsOf makes n keep-alive clients, with Digest credentials when username is set.
func clientsOf(n int, username, password string) []*http.Client {
	cs := make([]*http.Client, n)
	for i := range cs {
		cs[i] = keepAliveClient(username, password)
	}
	return cs
}

// getter makes GET requests of url.
func getter(url string) func(ctx context.Context, _ int) (*http.Request, error) {
	return func(ctx context.Context, _ int) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	}
}

// openOneAlert makes a project through the API whose default HOST_DOWN configuration opens an
// alert for one host a worker is told is down, and returns the alert's path under the API's
// base (and the alert). The worker stops once it is open: the reads measure the API.
func (b *bench) openOneAlert(ctx context.Context, c apiClient) (string, herald.Alert, error) {
	var org, project struct{ ID string }
	if err := c.call(ctx, "POST", "/orgs", map[string]any{"name": "bench"}, http.StatusCreated, &org); err != nil {
		return "", herald.Alert{}, err
	}
	if err := c.call(ctx, "POST", "/groups", map[string]any{"name": "bench", "orgId": org.ID}, http.StatusCreated, &project); err != nil {
		return "", herald.Alert{}, err
	}
	w, err := b.startWorker()
	if err != nil {
		return "", herald.Alert{}, err
	}
	defer w.stop()
	active := true
	obs := []herald.Observation{{EventTypeName: "HOST_DOWN", Active: &active, HostID: "read-0", HostnameAndPort: "read-0.example.com:27017"}}
	if err := c.call(ctx, "POST", "/groups/"+project.ID+"/observations", obs, http.StatusAccepted, nil); err != nil {
		return "", herald.Alert{}, err
	}
	var list struct{ Results []herald.Alert }
	err = poll(ctx, time.Minute, func() (bool, error) {
		err := c.call(ctx, "GET", "/groups/"+project.ID+"/alerts", nil, http.StatusOK, &list)
		return len(list.Results) > 0, err
	})
	if err != nil {
		return "", herald.Alert{}, fmt.Errorf("no alert opened: %w", err)
	}
	a := list.Results[0]
	return "/groups/" + project.ID + "/alerts/" + a.ID, a, nil
}

// The plain-server mode: this benchmark, started with plainServerEnv set to an address and
// plainAlertEnv to an alert's JSON, serves that alert as a plain net/http handler would.
const (
	plainServerEnv = "HERALD_BENCH_PLAIN_ADDR"
	plainAlertEnv  = "HERALD_BENCH_PLAIN_ALERT"
)

// plainServer is the plain handler's process and base URL.
type plainServer struct {
	child *process
	base  string
}

// startPlainServer starts this benchmark again in its plain-server mode, serving alert.
func (b *bench) startPlainServer(ctx context.Context, alert herald.Alert) (*plainServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(alert)
	if err != nil {
		return nil, err
	}
	c, err := startProcess("plain", b.redis.dir, self, nil, []string{plainServerEnv + "=" + addr, plainAlertEnv + "=" + string(raw)})
	if err != nil {
		return nil, err
	}
	if err := waitServing(ctx, c, "http://"+addr+"/readyz"); err != nil {
		c.stop()
		return nil, err
	}
	return &plainServer{child: c, base: "http://" + addr}, nil
}

// servePlain is the plain-server mode: GET /groups/{groupId}/alerts/{alertId} answers the alert
// with a self link, encoded per request, as an API without authentication or store would.
func servePlain(addr, alertJSON string) error {
	var alert herald.Alert
	if err := json.Unmarshal([]byte(alertJSON), &alert); err != nil {
		return err
	}
	type link struct {
		Href string `json:"href"`
		Rel  string `json:"rel"`
	}
	type body struct {
		herald.Alert
		Links []link `json:"links"`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /groups/{groupId}/alerts/{alertId}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("alertId") != alert.ID {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body{alert, []link{{Href: "http://" + r.Host + r.URL.Path, Rel: "self"}}})
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
