package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// process is a program the benchmark runs beside itself (Herald's api and worker, Alertmanager),
// its output kept in a log file of the run's temporary directory, read back when it fails.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// childProfiles, set by -profile, is the directory Herald processes write their own CPU
// profiles to (HERALD_CPU_PROFILE), one file per process started: <name>.<n>.pprof.
var childProfiles struct {
	dir     string
	started atomic.Int64
}

// startProcess starts bin with args and env (besides this process's environment), its output
// going to dir/<name>.log. It never outlives the benchmark.
func startProcess(name, dir, bin string, args, env []string) (*process, error) {
	if childProfiles.dir != "" {
		n := childProfiles.started.Add(1)
		env = append(env, "HERALD_CPU_PROFILE="+filepath.Join(childProfiles.dir, fmt.Sprintf("%s.%d.pprof", name, n)))
	}
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); out.Close(); close(p.exited) }()
	return p, nil
}

// running fails when the process has exited, with the end of its log.
func (p *process) running() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%s): %s", p.name, p.cmd.ProcessState, p.tail())
	default:
		return nil
	}
}

// tail is the last lines of the process's log.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], " | ")
}

// stop asks the process to end (SIGTERM), killing it after 10 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// peakRSS is the process's peak resident set size so far (VmHWM), in bytes.
func (p *process) peakRSS() (int64, error) { return procStatus(p.cmd.Process.Pid, "VmHWM") }

// cpuTime is the CPU time (user and system) the process used so far.
func (p *process) cpuTime() (time.Duration, error) { return procCPU(p.cmd.Process.Pid) }

// procCPU is the CPU time (user and system) process pid used so far, from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command (which may hold spaces) in parentheses; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second on Linux).
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// procStatus is a size field of /proc/<pid>/status (e.g. VmHWM, VmRSS), in bytes.
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// freeLoopbackAddr is a 127.0.0.1 address with a port free now, for a process told where to
// listen.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitServing waits until url answers 200, or the process exits.
func waitServing(ctx context.Context, p *process, url string) error {
	return poll(ctx, 30*time.Second, func() (bool, error) {
		if err := p.running(); err != nil {
			return false, err
		}
		resp, err := httpGet(ctx, url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == 200, nil
	})
}

// mib is n bytes in MiB, to one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// httpGet gets url with the default client.
func httpGet(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// machineBusy is the CPU time the machine's cores spent busy so far, every process's.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return busyOfStat(string(b))
}

// busyOfStat is the busy CPU time of /proc/stat's first line, in clock ticks of 100 a second:
// user, nice, system, irq and softirq; not idle, iowait, or steal (which a hypervisor gave
// to other machines).
func busyOfStat(stat string) (time.Duration, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: %q", line)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system [idle iowait] irq softirq
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %q", line)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
