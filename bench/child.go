package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the benchmark started and measures from outside: a `herald` role, or the
// benchmark itself serving the plain handler. Its CPU time and peak memory are read from /proc,
// so that what the load generator costs (it runs in the benchmark's process) is never counted.
type child struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
}

// heraldBinary builds ./cmd/herald once per run into a temporary directory, as deployed (the
// benchmark runs from the repository root, as `go run ./bench` does).
var heraldBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "herald-bench-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "herald")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/herald").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/herald: %w: %s", err, out)
	}
	return bin, nil
})

// startHerald starts `herald <role>` on the benchmark's Redis with env added to its settings;
// its log goes to a file in the Redis directory (written, as in production, at level info).
func (b *bench) startHerald(role string, env ...string) (*child, error) {
	bin, err := heraldBinary()
	if err != nil {
		return nil, err
	}
	env = append([]string{"HERALD_REDIS_URL=unix://" + b.redis.socket(), "HERALD_METRICS_LISTEN=", "HERALD_LOG_LEVEL=info"}, env...)
	return startChild(role, bin, []string{role}, env, filepath.Join(b.redis.dir, role+".log"))
}

// startChild starts bin with args and env (besides the benchmark's own), its output to logPath.
func startChild(name, bin string, args, env []string, logPath string) (*child, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the benchmark
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &child{name: name, cmd: cmd, log: f}, nil
}

// stop ends the child and closes its log.
func (c *child) stop() {
	terminate(c.cmd)
	c.log.Close()
}

// terminate ends a process the benchmark started: SIGTERM, then SIGKILL after 10 s.
func terminate(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// cpuTime is the CPU time (user and system) the child used so far, from /proc/<pid>/stat.
func (c *child) cpuTime() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses: utime and stime
	// are the 14th and 15th fields of the line, the 12th and 13th after ")".
	_, rest, ok := strings.Cut(string(raw), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, fmt.Errorf("%s: unexpected /proc stat %q", c.name, raw)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux Go supports.
const clockTicks = 100

// peakRSS is the child's peak resident memory so far (VmHWM of /proc/<pid>/status), in bytes.
func (c *child) peakRSS() (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no VmHWM in /proc status", c.name)
}

// freeLoopbackAddr is a 127.0.0.1 address with a port free at the time of asking.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitServing waits until url answers (any status) over HTTP.
func waitServing(ctx context.Context, c *child, url string) error {
	return poll(ctx, 30*time.Second, func() (bool, error) {
		if c.cmd.ProcessState != nil {
			return false, fmt.Errorf("%s exited", c.name)
		}
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return true, nil
	})
}

// socket is the unix socket redis-server listens on.
func (rs *redisServer) socket() string { return filepath.Join(rs.dir, "redis.sock") }
