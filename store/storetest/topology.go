package storetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/testkit"
)

// The Redis topologies below run real servers on 127.0.0.1 TCP ports (Sentinel and Cluster
// announce addresses, so unix sockets will not do). They need Debian's redis-server, which
// also runs as a sentinel (redis-server --sentinel), and redis-cli (package redis-tools, a
// dependency of redis-server) to create the cluster.

// Sentinel is a Redis master, one replica and three sentinels (quorum 2) on 127.0.0.1,
// started for a test and killed when it ends.
type Sentinel struct {
	MasterName string
	Addrs      []string // the sentinels, host:port
	t          testing.TB
}

// StartSentinel starts a master, its replica and three sentinels watching them, and waits
// until every sentinel knows the replica and the other sentinels, so that a failover can run.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin := topologyBinary(t, "redis-server")
	dir := t.TempDir()
	master := startServer(t, bin, filepath.Join(dir, "master"), nil)
	replica := startServer(t, bin, filepath.Join(dir, "replica"), nil, "--replicaof", "127.0.0.1", port(master))
	waitFor(t, 10*time.Second, "the replica to sync with the master", func() bool {
		return strings.Contains(info(replica, "replication"), "master_link_status:up")
	})
	s := &Sentinel{MasterName: "herald", t: t}
	for i := range 3 {
		sdir := filepath.Join(dir, fmt.Sprintf("sentinel%d", i))
		conf := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s 2\n"+
			"sentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 10000\n", s.MasterName, port(master))
		addr := startServer(t, bin, sdir, []byte(conf), "--sentinel")
		s.Addrs = append(s.Addrs, addr)
	}
	for _, addr := range s.Addrs {
		waitFor(t, 20*time.Second, "sentinel "+addr+" to discover the replica and the other sentinels", func() bool {
			m, err := s.sentinelMaster(addr)
			return err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2"
		})
	}
	return s
}

// Master is the address the sentinels name as the master now.
func (s *Sentinel) Master() string {
	s.t.Helper()
	m, err := s.sentinelMaster(s.Addrs[0])
	if err != nil {
		s.t.Fatalf("SENTINEL MASTER: %v", err)
	}
	return net.JoinHostPort(m["ip"], m["port"])
}

// Failover has the sentinels promote the replica, and waits until every sentinel names the new
// master and it accepts writes. It returns the new master's address.
func (s *Sentinel) Failover() string {
	s.t.Helper()
	old := s.Master()
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addrs[0]})
	defer sc.Close()
	if err := sc.Failover(context.Background(), s.MasterName).Err(); err != nil {
		s.t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	var now string
	waitFor(s.t, 30*time.Second, "the sentinels to promote the replica", func() bool {
		for _, addr := range s.Addrs {
			m, err := s.sentinelMaster(addr)
			if err != nil || net.JoinHostPort(m["ip"], m["port"]) == old {
				return false
			}
			now = net.JoinHostPort(m["ip"], m["port"])
		}
		return strings.Contains(info(now, "replication"), "role:master")
	})
	return now
}

func (s *Sentinel) sentinelMaster(addr string) (map[string]string, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer sc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return sc.Master(ctx, s.MasterName).Result()
}

// Cluster is a Redis Cluster of masters only (no replicas) on 127.0.0.1, started for a test
// and killed when it ends.
type Cluster struct {
	Addrs []string // the nodes, host:port
}

// StartCluster starts n cluster-enabled servers, has redis-cli join them into one cluster
// with the 16384 slots split between them, and waits until every node reports the cluster ok.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := topologyBinary(t, "redis-server")
	cli := topologyBinary(t, "redis-cli")
	dir := t.TempDir()
	c := &Cluster{}
	for i := range n {
		// The cluster bus gets a port of its own: by default it is the client port + 10000,
		// which nobody checked was free.
		addr := startServer(t, bin, filepath.Join(dir, fmt.Sprintf("node%d", i)), nil,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", port(testkit.FreeLoopbackAddr(t)),
			"--cluster-node-timeout", "2000")
		c.Addrs = append(c.Addrs, addr)
	}
	args := append(append([]string{"--cluster", "create"}, c.Addrs...), "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, addr := range c.Addrs {
		waitFor(t, 20*time.Second, "node "+addr+" to see the cluster ok", func() bool {
			ci := clusterInfo(addr)
			return strings.Contains(ci, "cluster_state:ok") && strings.Contains(ci, "cluster_slots_ok:16384") &&
				strings.Contains(ci, fmt.Sprintf("cluster_known_nodes:%d", n))
		})
	}
	return c
}

// SlotErrors records the errors a client's commands got that say a command or transaction
// spanned hash slots, or that a script touched a key it was not given: the ways code written
// for one server fails on a Cluster. Herald's background work logs and retries errors rather
// than returning them, so a test asserts on this record instead.
type SlotErrors struct {
	mu   sync.Mutex
	seen []string
}

// WatchSlotErrors starts recording rdb's slot errors.
func WatchSlotErrors(rdb redis.UniversalClient) *SlotErrors {
	e := &SlotErrors{}
	rdb.AddHook(e)
	return e
}

// Errors are the commands that failed so far, with their errors.
func (e *SlotErrors) Errors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

func (e *SlotErrors) check(cmds ...redis.Cmder) {
	for _, c := range cmds {
		err := c.Err()
		if err == nil {
			continue
		}
		msg := err.Error()
		if errors.Is(err, redis.ErrCrossSlot) || strings.Contains(msg, "CROSSSLOT") ||
			strings.Contains(msg, "non local key") || strings.Contains(msg, "undeclared key") {
			e.mu.Lock()
			e.seen = append(e.seen, fmt.Sprintf("%v: %s", c.Args(), msg))
			e.mu.Unlock()
		}
	}
}

func (e *SlotErrors) DialHook(next redis.DialHook) redis.DialHook { return next }

func (e *SlotErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		e.check(cmd)
		return err
	}
}

func (e *SlotErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		e.check(cmds...)
		return err
	}
}

// topologyBinary finds a Redis program; without it a test fails under CI and is skipped
// elsewhere (the embedded store cannot stand in for Sentinel or Cluster).
func topologyBinary(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed: CI must test the Redis topologies (Debian: apt-get install redis-server)", name)
	}
	t.Skipf("%s is not installed (Debian: apt-get install redis-server); skipping the Redis topology test", name)
	return ""
}

// startServer starts redis-server on a free 127.0.0.1 port with its files in dir (and conf, if
// any, as its configuration file: a sentinel rewrites its own), waits until it answers, and
// returns its address. It tries a few ports, as another process may take the free port first.
func startServer(t testing.TB, bin, dir string, conf []byte, args ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var cmdline []string
	if conf != nil {
		path := filepath.Join(dir, "redis.conf")
		if err := os.WriteFile(path, conf, 0o600); err != nil {
			t.Fatal(err)
		}
		cmdline = append(cmdline, path)
	}
	const tries = 5
	var lastErr error
	for range tries {
		p := port(testkit.FreeLoopbackAddr(t))
		logFile := filepath.Join(dir, "redis.log")
		cmd := exec.Command(bin, append(append(cmdline, "--port", p, "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--logfile", logFile), args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		addr := net.JoinHostPort("127.0.0.1", p)
		if lastErr = waitUp(addr, exited); lastErr == nil {
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			return addr
		}
		_ = cmd.Process.Kill()
		<-exited
		if log, err := os.ReadFile(logFile); err == nil {
			lastErr = fmt.Errorf("%w; its log:\n%s", lastErr, tail(log))
		}
	}
	t.Fatalf("redis-server %s did not start in %d tries: %v", strings.Join(args, " "), tries, lastErr)
	return ""
}

// waitUp waits up to 10 s for the server at addr to answer PING, or for it to exit.
func waitUp(addr string, exited <-chan error) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := rdb.Ping(context.Background()).Err()
		if err == nil {
			return nil
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("it exited: %v", werr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within 10s: %w", err)
		}
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// info is a section of INFO from the server at addr ("" when it does not answer).
func info(addr, section string) string {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return rdb.Info(ctx, section).Val()
}

func clusterInfo(addr string) string {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return rdb.ClusterInfo(ctx).Val()
}

// waitFor polls cond every 50 ms until it holds, failing t after within.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
	}
}

// tail is the last lines of a log, for a failure message.
func tail(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// StartTCP starts a single redis-server on a free 127.0.0.1 port for a test, killed when it
// ends, and returns its address: for a process that cannot reach the test's unix socket (one
// started in a chroot). Like the topologies, it needs Debian's redis-server.
func StartTCP(t testing.TB) string {
	t.Helper()
	return startServer(t, topologyBinary(t, "redis-server"), t.TempDir(), nil)
}
