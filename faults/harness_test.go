//go:build linux

package faults

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/testkit"
)

// heraldBin is the herald binary TestMain built for the suite; "" when the suite is skipped.
var heraldBin string

// skipReason says why the suite does not run here ("" when it does).
var skipReason string

// TestMain builds the herald binary once for every scenario, unless the suite cannot run here.
func TestMain(m *testing.M) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		skipReason = "redis-server is not installed: the fault suite needs a real Redis (apt-get install redis-server)"
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "faults: "+skipReason+"; CI must run it")
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "herald-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	heraldBin = filepath.Join(dir, "herald")
	build := exec.Command("go", "build", "-o", heraldBin, "./cmd/herald")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: go build ./cmd/herald: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needSuite skips t when the suite cannot run here (TestMain says why).
func needSuite(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// proc is a child process of the suite: a herald role or a redis-server. It never outlives the
// test (Pdeathsig, and a cleanup that kills it).
type proc struct {
	name string
	cmd  *exec.Cmd
	logs *testkit.Buffer
	done chan struct{} // closed when the process has exited
	err  error         // how it exited, once done is closed
}

func startProc(t *testing.T, name, bin string, args, env []string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), logs: &testkit.Buffer{}, done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL)
		if dir := os.Getenv("HERALD_FAULTS_LOGS"); dir != "" { // every process's whole output, to dig into a finding
			name := strings.NewReplacer("/", "_").Replace(t.Name()) + "-" + p.name + "-" + strconv.Itoa(p.cmd.Process.Pid) + ".log"
			_ = os.WriteFile(filepath.Join(dir, name), []byte(p.logs.String()), 0o644)
		}
		if t.Failed() {
			t.Logf("output of %s (last 4 KiB):\n%s", p.name, tail(p.logs.String(), 4096))
		}
	})
	return p
}

// stop sends sig and waits (at most 30 s) for the process to exit.
func (p *proc) stop(sig syscall.Signal) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// redisServer is a real redis-server on a unix socket in a directory of its own, which a
// restart reuses: the same address, and the append-only file it left.
type redisServer struct {
	t    *testing.T
	dir  string
	sock string
	aof  bool
	proc *proc
	// ctl is the suite's own client: pauses, and the few writes a scenario makes behind
	// Herald's back.
	ctl *redis.Client
}

// startRedis starts redis-server; aof turns on the append-only file synced every second, as
// the README tells operators to run it.
func startRedis(t *testing.T, aof bool) *redisServer {
	t.Helper()
	dir := t.TempDir()
	r := &redisServer{t: t, dir: dir, sock: filepath.Join(dir, "redis.sock"), aof: aof}
	r.start()
	r.ctl = redis.NewClient(&redis.Options{Network: "unix", Addr: r.sock})
	t.Cleanup(func() { _ = r.ctl.Close() })
	return r
}

func (r *redisServer) start() {
	r.t.Helper()
	appendonly := "no"
	if r.aof {
		appendonly = "yes"
	}
	r.proc = startProc(r.t, "redis-server", "redis-server", []string{"--port", "0", "--unixsocket", r.sock,
		"--unixsocketperm", "700", "--save", "", "--appendonly", appendonly, "--appendfsync", "everysec",
		"--maxmemory-policy", "noeviction", "--enable-debug-command", "local", "--dir", r.dir, "--loglevel", "warning"}, os.Environ())
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: r.sock})
	defer c.Close()
	waitUntil(r.t, 20*time.Second, "redis-server to answer", func() (bool, string) {
		if err := c.Ping(context.Background()).Err(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// URL is where Herald's roles find this server.
func (r *redisServer) URL() string { return "unix://" + r.sock }

// restart stops the server with sig (SIGTERM: it syncs the append-only file and exits;
// SIGKILL: what it had not synced is gone), waits down for a while, and starts it again on the
// same directory. It returns when the new server answers.
func (r *redisServer) restart(sig syscall.Signal, down time.Duration) {
	r.t.Helper()
	r.proc.stop(sig)
	time.Sleep(down)
	r.start()
}

// pause stops Redis answering any client for d (CLIENT PAUSE ALL): every command Herald sends
// meanwhile waits, and those waiting longer than go-redis' timeouts fail.
func (r *redisServer) pause(d time.Duration) {
	r.t.Helper()
	if err := r.ctl.Do(context.Background(), "CLIENT", "PAUSE", d.Milliseconds(), "ALL").Err(); err != nil {
		r.t.Fatalf("CLIENT PAUSE: %v", err)
	}
}

// freeze stops the redis-server process for d (SIGSTOP, then SIGCONT): it neither answers nor
// accepts connections, and what clients send meanwhile waits in the kernel. It returns when
// the process runs again.
func (r *redisServer) freeze(d time.Duration) {
	r.t.Helper()
	if err := r.proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		r.t.Fatalf("SIGSTOP redis-server: %v", err)
	}
	time.Sleep(d)
	if err := r.proc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		r.t.Fatalf("SIGCONT redis-server: %v", err)
	}
}

// sleep blocks Redis entirely for d (DEBUG SLEEP): it neither answers nor takes connections,
// harsher than pause. It returns when Redis answers again.
func (r *redisServer) sleep(d time.Duration) {
	r.t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: r.sock, ReadTimeout: d + 10*time.Second, MaxRetries: -1})
	defer c.Close()
	if err := c.Do(context.Background(), "DEBUG", "SLEEP", d.Seconds()).Err(); err != nil {
		r.t.Fatalf("DEBUG SLEEP: %v", err)
	}
}

// cluster is one Herald installation of real processes on one Redis.
type cluster struct {
	t          *testing.T
	redis      *redisServer
	api        *proc
	apiAddr    string
	workers    []*proc
	schedulers []*proc
	smtp       *smtpReceiver
	minute     time.Duration
	settings   []string        // clusterSpec.env
	admin      *client         // the bootstrap global owner key
	killed     map[*proc]bool  // roles the scenario killed
	groups     []string        // the scenario's projects
	endedCache map[string]bool // ended's last reading, and when it was made
	endedRead  time.Time
	digests    map[string][]notice // toldInDigests' readings, by digest id
	emails     map[string]string   // the scenario's people: user id -> email address
}

// clusterSpec is what a scenario runs.
type clusterSpec struct {
	aof        bool
	workers    int
	schedulers int
	minute     time.Duration // HERALD_MINUTE; 0: 10 s, so that no repeat falls due during a scenario
	// schedulerEnv is extra settings of the schedulers (HERALD_LOG_LEVEL=debug to see their runs).
	schedulerEnv []string
	// env is extra settings of every role (HERALD_DIGEST_AFTER, say).
	env []string
}

const bootstrapPublic, bootstrapPrivate = "faults", "0b7e2c55-faults-suite-key"

// startCluster starts Redis, the API, the workers and the schedulers, and waits until the API
// is ready and every worker serves the queues.
func startCluster(t *testing.T, spec clusterSpec) *cluster {
	t.Helper()
	if spec.minute == 0 {
		spec.minute = 10 * time.Second
	}
	c := &cluster{t: t, redis: startRedis(t, spec.aof), smtp: startSMTP(t), minute: spec.minute, settings: spec.env,
		killed: map[*proc]bool{}, digests: map[string][]notice{}, emails: map[string]string{}}
	c.apiAddr = testkit.FreeLoopbackAddr(t)
	c.api = startProc(t, "api", heraldBin, []string{"api"}, c.env("HERALD_LISTEN="+c.apiAddr,
		"HERALD_BOOTSTRAP_KEY="+bootstrapPublic+":"+bootstrapPrivate, "HERALD_MONITORING=false"))
	for i := 1; i <= spec.workers; i++ {
		c.startWorker(fmt.Sprintf("worker-%d", i))
	}
	for i := 1; i <= spec.schedulers; i++ {
		c.schedulers = append(c.schedulers, startProc(t, fmt.Sprintf("scheduler-%d", i), heraldBin, []string{"scheduler"},
			c.env(append([]string{"HERALD_LOG_LEVEL=info"}, spec.schedulerEnv...)...)))
	}
	waitUntil(t, 20*time.Second, "the API to be ready", func() (bool, string) {
		resp, err := http.Get("http://" + c.apiAddr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	c.admin = c.client()
	c.waitWorkers()
	return c
}

// env is the environment of a herald role: the suite's Redis, SMTP server and minute, private
// targets allowed (the receivers are on 127.0.0.1), no metrics listener (children cannot share
// its fixed port), warnings only, then the scenario's settings and extra (later settings win).
func (c *cluster) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HERALD_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HERALD_REDIS_URL="+c.redis.URL(), "HERALD_MINUTE="+c.minute.String(),
		"HERALD_ALLOW_PRIVATE_TARGETS=true", "HERALD_METRICS_LISTEN=", "HERALD_LOG_LEVEL="+cmp.Or(os.Getenv("HERALD_FAULTS_LOG_LEVEL"), "warn"),
		"HERALD_SMTP_ADDR="+c.smtp.addr, "HERALD_SMTP_FROM=herald@faults.example.com")
	return append(append(env, c.settings...), extra...)
}

// startWorker starts one more `herald worker`, with the defaults an operator gets (lease,
// concurrency, queues).
func (c *cluster) startWorker(name string) {
	c.workers = append(c.workers, c.worker(name))
}

func (c *cluster) worker(name string) *proc {
	return startProc(c.t, name, heraldBin, []string{"worker"}, c.env())
}

// replaceWorker kills worker i with sig and starts a new one in its place.
func (c *cluster) replaceWorker(i int, sig syscall.Signal) {
	c.kill(c.workers[i], sig)
	c.workers[i] = c.worker(c.workers[i].name)
}

// kill stops p with sig on the scenario's behalf: its exit is not a finding.
func (c *cluster) kill(p *proc, sig syscall.Signal) {
	c.killed[p] = true
	p.stop(sig)
}

// waitWorkers waits until every running worker has registered with asynq (it serves the
// queues).
func (c *cluster) waitWorkers() {
	c.t.Helper()
	waitUntil(c.t, 20*time.Second, "the workers to serve the queues", func() (bool, string) {
		servers, err := asynq.NewInspectorFromRedisClient(c.redis.ctl).Servers()
		if err != nil {
			return false, err.Error()
		}
		serving := map[int]bool{}
		for _, s := range servers {
			serving[s.PID] = true
		}
		for _, w := range c.workers {
			if !w.exited() && !serving[w.cmd.Process.Pid] {
				return false, w.name + " has not registered"
			}
		}
		return true, ""
	})
}

// exitedRoles names the roles that died by themselves (not killed by the scenario): a role
// must survive Redis restarts and pauses.
func (c *cluster) exitedRoles() []string {
	var out []string
	for _, p := range append(append([]*proc{c.api}, c.workers...), c.schedulers...) {
		if p.exited() && !c.killed[p] {
			out = append(out, fmt.Sprintf("%s (%v)", p.name, p.err))
		}
	}
	return out
}

// queued says what asynq still holds of deliveries at the end, by delivery queue: tasks
// waiting (to be retried, or to run), and archived ones (dead letters). A notice missing at the
// end is late while a task still holds it, and stranded when no worker serves its queue.
func (c *cluster) queued() string {
	ins := asynq.NewInspectorFromRedisClient(c.redis.ctl)
	queues, err := ins.Queues()
	if err != nil {
		return "asynq: " + err.Error()
	}
	served := map[string]bool{}
	if servers, err := ins.Servers(); err == nil {
		for _, s := range servers {
			for q := range s.Queues {
				served[q] = true
			}
		}
	}
	var parts []string
	archived := 0
	for _, q := range queues {
		info, err := ins.GetQueueInfo(q)
		if err != nil || !strings.HasPrefix(q, "deliveries-") {
			continue
		}
		archived += info.Archived
		if n := info.Pending + info.Scheduled + info.Retry + info.Active; n > 0 {
			part := fmt.Sprintf("%s %d", q, n)
			if !served[q] {
				part += " (served by no worker)"
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	return fmt.Sprintf("delivery tasks waiting at the end: %s; %d archived", strings.Join(parts, ", "), archived)
}

// logLines is how many lines of every role's output, the killed ones' included, contain s.
func (c *cluster) logLines(s string) int {
	seen := map[*proc]bool{}
	n := 0
	for _, p := range append(append(append([]*proc{c.api}, c.workers...), c.schedulers...), slices.Collect(maps.Keys(c.killed))...) {
		if seen[p] {
			continue
		}
		seen[p] = true
		for line := range strings.Lines(p.logs.String()) {
			if strings.Contains(line, s) {
				n++
			}
		}
	}
	return n
}

// waitUntil polls cond every 50 ms until it holds, failing t after within with what cond
// last said.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if !pollUntil(within, cond) {
		_, state := cond()
		t.Fatalf("waited %s for %s: %s", within, what, state)
	}
}

// suiteDeadline, when set, is when `go test -timeout` would kill the suite, less time to report:
// no wait goes past it, so that a suite finding much missing still prints its table.
var suiteDeadline time.Time

// pollUntil polls cond every 50 ms until it holds (true) or within has passed (false).
func pollUntil(within time.Duration, cond func() (bool, string)) bool {
	deadline := time.Now().Add(within)
	if !suiteDeadline.IsZero() && suiteDeadline.Before(deadline) {
		deadline = suiteDeadline
	}
	for ; ; time.Sleep(50 * time.Millisecond) {
		if ok, _ := cond(); ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
