//go:build linux

// The cluster test tells which worker process sent each webhook by asking the kernel who owns
// the sending socket (/proc), hence Linux only; CI runs on Debian.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/apiclient"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// What the cluster test opens: alerts spread over projects, since one project is one session
// at a time and the workers share projects, not alerts.
const (
	clusterProjects  = 10
	alertsPerProject = 100
	clusterAlerts    = clusterProjects * alertsPerProject
)

// The workers' settings. A concurrency of 2 means that one worker cannot take every project's
// session at once, so the second must take its share (see hookLatency); with 20 each,
// whichever polled first could legitimately take every one.
const (
	clusterConcurrency     = 2
	clusterQueuePriorities = "engine=12,deliveries-webhook=8"
)

// One Redis, one API, two workers and two schedulers, each a real process: 1,000 alerts opened
// through the API get their first notice exactly once, both workers deliver some; then the
// leading scheduler is killed and the other one takes over the periodic work within 30 s.
func TestClusterSharesWorkAndSurvivesItsLeader(t *testing.T) {
	rdb := storetest.Redis(t)
	redisURL := storetest.URL(rdb)
	st := store.New(rdb)
	inspector := asynq.NewInspectorFromRedisClient(rdb)
	hooks := startHookLog(t)

	const publicKey, privateKey = "cluster", "5d1f3c0a-cluster-test-key"
	apiAddr := testkit.FreeLoopbackAddr(t)
	startRole(t, "api", "api", "HERALD_REDIS_URL="+redisURL, "HERALD_LISTEN="+apiAddr,
		"HERALD_BOOTSTRAP_KEY="+publicKey+":"+privateKey, "HERALD_LOG_LEVEL=warn")
	var workers []*child
	for i := 1; i <= 2; i++ {
		workers = append(workers, startRole(t, "worker", fmt.Sprintf("worker-%d", i), "HERALD_REDIS_URL="+redisURL,
			"HERALD_ALLOW_PRIVATE_TARGETS=true", "HERALD_LOG_LEVEL=warn",
			"HERALD_WORKER_CONCURRENCY="+strconv.Itoa(clusterConcurrency), "HERALD_QUEUE_PRIORITIES="+clusterQueuePriorities))
	}
	hooks.attribute(workers)
	var schedulers []*child
	for i := 1; i <= 2; i++ {
		// Info level: a scheduler says when it starts leading, which is how the test finds the
		// leader (the lease in Redis holds a random token).
		schedulers = append(schedulers, startRole(t, "scheduler", fmt.Sprintf("scheduler-%d", i), "HERALD_REDIS_URL="+redisURL,
			"HERALD_RECONCILE_INTERVAL=1s", "HERALD_LOG_LEVEL=info"))
	}

	waitReady(t, 15*time.Second, "the API", apiAddr)
	waitFor(t, 15*time.Second, "both workers to serve Herald's queues with their settings", func() (bool, string) {
		return workersServing(inspector, workers)
	})

	a := newClusterAPI("http://"+apiAddr+api.BasePath, publicKey, privateKey)
	projects := make([]string, clusterProjects)
	for i := range projects {
		projects[i] = a.webhookProject(t, fmt.Sprintf("p%d", i), hooks.url)
	}
	// A project no observation reaches until the leader is killed: no session of it has ever
	// run, so none has a tick queued (the storm's projects have, for their claims' ends), and
	// only a scheduler's reconcile can give it one.
	quiet := a.webhookProject(t, "quiet", hooks.url)
	// Disabling the default configurations queued a task each; the workers start the
	// observations with every slot free.
	waitFor(t, 15*time.Second, "the engine to be idle", func() (bool, string) { return engineIdle(inspector) })

	// Every project's observations at once, as agents report: each its own client, since a
	// digest client's requests must reach the API in the order of their nonce counts.
	start := time.Now()
	errs := make(chan error, len(projects))
	for i, p := range projects {
		agent := newClusterAPI(a.base, publicKey, privateKey)
		go func() { errs <- agent.observe(p, numberedHosts(fmt.Sprintf("p%d-h", i), alertsPerProject)) }()
	}
	for range projects {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "every alert's first notice", func() (bool, string) {
		n := hooks.distinct()
		return n >= clusterAlerts, fmt.Sprintf("%d of %d notices", n, clusterAlerts)
	})
	t.Logf("%d first notices delivered in %s", clusterAlerts, time.Since(start).Round(time.Millisecond))

	// Every alert the API lists got its first notice, once; nothing else was sent.
	for _, p := range projects {
		for _, id := range a.openAlerts(t, p) {
			if n := hooks.firstNotices(id); n != 1 {
				t.Errorf("alert %s of project %s: first notice received %d times, want 1", id, p, n)
			}
		}
	}
	if n := hooks.distinct(); n != clusterAlerts {
		t.Errorf("%d distinct notices, want %d", n, clusterAlerts)
	}
	bySender := hooks.bySender()
	t.Logf("deliveries by sending process: %v", bySender)
	for _, w := range workers {
		if bySender[w.name] == 0 {
			t.Errorf("%s delivered nothing: %v", w.name, bySender)
		}
	}
	if n := bySender[unknownSender]; n > 0 {
		t.Errorf("%d deliveries came from a socket no worker owns", n)
	}

	// The leader dies; the other scheduler must take over the periodic work.
	leader, standby := leadingScheduler(t, schedulers)
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = leader.cmd.Wait()
	killed := time.Now()
	// Nothing but a scheduler's reconcile gives the quiet project a session, so observations
	// queued with no task for them (as when a task was lost) are evaluated only if the
	// surviving scheduler runs. (A storm project's queued tick, for the end of its notices'
	// claims, once evaluated them 284 ms after the kill, before the standby led.)
	waitFor(t, 15*time.Second, "the engine to be idle", func() (bool, string) { return engineIdle(inspector) })
	lost, err := json.Marshal(downObservations([]string{"after-leader"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendObservations(context.Background(), quiet, lost); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second-time.Since(killed), "the surviving scheduler to have the task-less observation evaluated", func() (bool, string) {
		n := hooks.distinct()
		return n == clusterAlerts+1, fmt.Sprintf("%d notices", n)
	})
	t.Logf("%s killed; %s took over: the task-less observation was delivered %s later",
		leader.name, standby.name, time.Since(killed).Round(time.Millisecond))
	// Logs are written in batches at least every logFlushInterval: the line may trail the work.
	waitFor(t, 2*time.Second, standby.name+" to say it leads", func() (bool, string) {
		return standby.leads(), standby.logs.String()
	})
	if d := hooks.duplicates(); d > 0 {
		t.Errorf("%d notices delivered more than once, with nothing crashing but a scheduler", d)
	}
}

// HERALD_QUEUE_PRIORITIES changes the priorities it names and keeps the others; 0 takes a queue
// away; a queue that does not exist, or a worker left with none, is refused.
func TestQueuePriorities(t *testing.T) {
	withWebhook8 := dispatch.DefaultQueues()
	withWebhook8[dispatch.DeliveryQueue("WEBHOOK")] = 8
	engine100 := dispatch.DefaultQueues()
	engine100[dispatch.QueueEngine] = 100
	paging := dispatch.DeliveryQueue("PAGING")
	var allZero, onlyPaging []string // every queue 0; every queue 0 but paging 1
	for q := range dispatch.DefaultQueues() {
		allZero = append(allZero, q+"=0")
		if q != paging {
			onlyPaging = append(onlyPaging, q+"=0")
		}
	}
	onlyPaging = append(onlyPaging, paging+"=1")
	for _, c := range []struct {
		spec string
		want map[string]int // nil: refused
	}{
		{"", dispatch.DefaultQueues()},
		{" deliveries-webhook=8 ", withWebhook8},
		{strings.Join(onlyPaging, ","), map[string]int{paging: 1}},
		{"deliveries-webhook", nil},
		{"deliveries-pager=3", nil},
		{"engine=-1", nil},
		{"engine=100", engine100}, // the highest
		{"engine=101", nil},
		{"engine=100000000", nil}, // asynq lists each queue priority times at every try
		{"engine=high", nil},
		{"engine=3,engine=4", nil},
		{strings.Join(allZero, ","), nil},
	} {
		got, err := queuePriorities(c.spec)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q: accepted as %v", c.spec, got)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
}

// child is a `herald <role>` process: the test binary re-executed (see TestMain).
type child struct {
	name string
	cmd  *exec.Cmd
	logs lockedBuffer
}

// startRole starts a child process playing role with env, killed when the test ends; when the
// test fails, its output is logged.
func startRole(t *testing.T, role, name string, env ...string) *child {
	t.Helper()
	c := &child{name: name, cmd: exec.Command(os.Args[0], "-test.run=^$")}
	// No metrics listener: its default port is fixed, and children cannot share it.
	c.cmd.Env = append(append(os.Environ(), "HERALD_TEST_ROLE="+role, "HERALD_METRICS_LISTEN="), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.logs, &c.logs
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the test
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("output of %s:\n%s", c.name, c.logs.String())
		}
	})
	return c
}

// leads reports whether a scheduler's last word on leadership is that it leads.
func (c *child) leads() bool {
	out := c.logs.String()
	return strings.LastIndex(out, "this scheduler leads") > strings.LastIndex(out, "another scheduler leads")
}

// leadingScheduler waits until exactly one of schedulers leads, and returns it and the other.
func leadingScheduler(t *testing.T, schedulers []*child) (leader, standby *child) {
	t.Helper()
	waitFor(t, 10*time.Second, "one scheduler to lead", func() (bool, string) {
		var leading []string
		for _, s := range schedulers {
			if s.leads() {
				leading = append(leading, s.name)
			}
		}
		return len(leading) == 1, fmt.Sprintf("leading: %v", leading)
	})
	if schedulers[0].leads() {
		return schedulers[0], schedulers[1]
	}
	return schedulers[1], schedulers[0]
}

// workersServing reports whether each worker process has registered with asynq, with the
// concurrency and queue priorities the test gave it.
func workersServing(ins *asynq.Inspector, workers []*child) (bool, string) {
	servers, err := ins.Servers()
	if err != nil {
		return false, err.Error()
	}
	want := dispatch.DefaultQueues()
	want[dispatch.QueueEngine], want[dispatch.DeliveryQueue("WEBHOOK")] = 12, 8 // clusterQueuePriorities
	byPID := map[int]*asynq.ServerInfo{}
	for _, s := range servers {
		byPID[s.PID] = s
	}
	for _, w := range workers {
		s := byPID[w.cmd.Process.Pid]
		if s == nil {
			return false, w.name + " not registered"
		}
		if s.Concurrency != clusterConcurrency || !maps.Equal(s.Queues, want) {
			return false, fmt.Sprintf("%s serves %v with concurrency %d", w.name, s.Queues, s.Concurrency)
		}
	}
	return true, ""
}

// engineIdle reports whether no task of Herald's waits to run, runs, or waits for a retry.
func engineIdle(ins *asynq.Inspector) (bool, string) {
	lists := map[string]func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		"pending": ins.ListPendingTasks, "active": ins.ListActiveTasks, "retry": ins.ListRetryTasks}
	for q := range dispatch.DefaultQueues() {
		for state, list := range lists {
			tasks, err := list(q, asynq.PageSize(1))
			if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
				return false, err.Error()
			}
			if len(tasks) > 0 {
				return false, fmt.Sprintf("%s has %s tasks", q, state)
			}
		}
	}
	return true, ""
}

// waitFor polls cond every 20 ms until it holds, failing the test after within with what
// cond last said.
func waitFor(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ok bool
		if ok, state = cond(); ok {
			return
		}
	}
	t.Fatalf("waited %s for %s: %s", within.Round(time.Millisecond), what, state)
}

// waitReady waits until what (a process serving the API) answers 200 at addr's /readyz.
func waitReady(t *testing.T, within time.Duration, what, addr string) {
	t.Helper()
	waitFor(t, within, what+" to be ready", func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// clusterAPI calls the API process with digest authentication, one request at a time.
type clusterAPI struct {
	base string
	api  *apiclient.Client
}

func newClusterAPI(base, publicKey, privateKey string) clusterAPI {
	return clusterAPI{base: base, api: apiclient.New(base, publicKey, privateKey, 30*time.Second)}
}

// do sends body as JSON, checks the answer's status and decodes it into out (when not nil).
func (a clusterAPI) do(method, path string, body any, want int, out any) error {
	return a.api.Do(context.Background(), method, path, body, want, out)
}

// call is do for the test's goroutine: an error fails the test.
func (a clusterAPI) call(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	if err := a.do(method, path, body, want, out); err != nil {
		t.Fatal(err)
	}
}

// webhookProject creates a project whose only enabled configuration is HOST_DOWN with one
// WEBHOOK notification to url: at once, repeating only after an hour.
func (a clusterAPI) webhookProject(t *testing.T, name, url string) string {
	t.Helper()
	id, err := a.api.ProjectWithOnly(context.Background(), name, map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": url, "delayMin": 0, "intervalMin": 60}}})
	if err != nil {
		t.Fatalf("project %s: %v", name, err)
	}
	return id
}

// observe reports hosts down in one request.
func (a clusterAPI) observe(project string, hostIDs []string) error {
	return a.do("POST", "/groups/"+project+"/observations", downObservations(hostIDs), http.StatusAccepted, nil)
}

// openAlerts lists the ids of a project's open alerts.
func (a clusterAPI) openAlerts(t *testing.T, project string) []string {
	t.Helper()
	var page struct {
		TotalCount int
		Results    []struct{ ID string }
	}
	a.call(t, "GET", "/groups/"+project+"/alerts?status=OPEN&itemsPerPage=500", nil, http.StatusOK, &page)
	if page.TotalCount != alertsPerProject || len(page.Results) != alertsPerProject {
		t.Fatalf("project %s has %d open alerts (%d listed), want %d", project, page.TotalCount, len(page.Results), alertsPerProject)
	}
	ids := make([]string, len(page.Results))
	for i, r := range page.Results {
		ids[i] = r.ID
	}
	return ids
}

func numberedHosts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func downObservations(hostIDs []string) []herald.Observation {
	active := true
	out := make([]herald.Observation, len(hostIDs))
	for i, h := range hostIDs {
		out[i] = herald.Observation{EventTypeName: "HOST_DOWN", Active: &active, HostID: h, HostnameAndPort: h + ":27017"}
	}
	return out
}

// unknownSender is what hookLog records for a delivery from a socket no worker process owns.
const unknownSender = "unknown"

// hookLog is the webhook receiver of the cluster test: it counts deliveries by Idempotency-Key
// and by the worker process that sent them. A webhook names no worker, so the receiver asks
// the kernel: when a connection comes in, it finds the client socket's inode in
// /proc/net/tcp and the worker process holding a descriptor on it in /proc/<pid>/fd.
type hookLog struct {
	url  string
	port int

	mu      sync.Mutex
	workers map[int]string // pid -> name
	times   map[string]int // Idempotency-Key -> deliveries
	sender  map[string]int // sending process -> deliveries
}

type senderKey struct{}

func startHookLog(t *testing.T) *hookLog {
	h := &hookLog{workers: map[int]string{}, times: map[string]int{}, sender: map[string]int{}}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, senderKey{}, h.owner(c.RemoteAddr().(*net.TCPAddr).Port))
	}
	srv.Start()
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook"
	h.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return h
}

// attribute makes the receiver tell deliveries of workers apart.
func (h *hookLog) attribute(workers []*child) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range workers {
		h.workers[w.cmd.Process.Pid] = w.name
	}
}

// A real endpoint takes a moment to answer; this one takes 100 ms, so that a session (100
// deliveries, 64 at a time) keeps its worker's slot busy for 200 ms or more. A worker with both
// slots busy cannot take a third project, and the other worker, which looks for tasks every
// 50 ms, finds it waiting: both must deliver, whatever the order the tasks came in.
const hookLatency = 100 * time.Millisecond

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	time.Sleep(hookLatency)
	sender, _ := r.Context().Value(senderKey{}).(string)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.times[r.Header.Get("Idempotency-Key")]++
	h.sender[sender]++
}

// owner names the worker process whose socket connected from 127.0.0.1:port to the receiver.
func (h *hookLog) owner(port int) string {
	inode := socketInode(port, h.port)
	if inode == "" {
		return unknownSender
	}
	h.mu.Lock()
	workers := maps.Clone(h.workers)
	h.mu.Unlock()
	for pid, name := range workers {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); link == "socket:["+inode+"]" {
				return name
			}
		}
	}
	return unknownSender
}

// socketInode is the inode of the IPv4 TCP socket from 127.0.0.1:local to 127.0.0.1:remote, or
// "" when there is none.
func socketInode(local, remote int) string {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	// Addresses are hex, the IPv4 address in the kernel's (little-endian) byte order.
	wantLocal, wantRemote := fmt.Sprintf("0100007F:%04X", local), fmt.Sprintf("0100007F:%04X", remote)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && fs[1] == wantLocal && fs[2] == wantRemote {
			return fs[9]
		}
	}
	return ""
}

// distinct is how many different notices arrived.
func (h *hookLog) distinct() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.times)
}

// duplicates is how many deliveries repeated a notice that had arrived.
func (h *hookLog) duplicates() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.times {
		n += c - 1
	}
	return n
}

// firstNotices is how many times the first notice (<alert>-<notification>-1) of alert arrived.
func (h *hookLog) firstNotices(alertID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for key, c := range h.times {
		if strings.HasPrefix(key, alertID+"-") && strings.HasSuffix(key, "-1") {
			n += c
		}
	}
	return n
}

// bySender is how many deliveries each process sent.
func (h *hookLog) bySender() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.sender)
}
