package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
)

// redisServer is the redis-server the benchmark runs against: its own, on a unix socket in a
// temporary directory, with the append-only file synced every second as production runs it.
type redisServer struct {
	proc   *process
	dir    string
	sock   string // its unix socket
	Client *redis.Client
}

func startRedis(ctx context.Context) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("the benchmark needs redis-server (Debian: apt-get install redis-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "herald-bench-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "redis.sock")
	proc, err := startProcess("redis-server", dir, bin, []string{"--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--dir", dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--logfile", "redis.log"}, nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	rs := &redisServer{proc: proc, dir: dir, sock: sock, Client: redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: store.Protocol})}
	if err := poll(ctx, 10*time.Second, func() (bool, error) { return rs.Client.Ping(ctx).Err() == nil, nil }); err != nil {
		rs.stop()
		return nil, fmt.Errorf("redis-server did not answer: %w", err)
	}
	return rs, nil
}

// stop shuts redis-server down (killing it if it takes more than 10 s) and removes its files.
func (rs *redisServer) stop() {
	_ = rs.Client.Close()
	rs.proc.stop()
	_ = os.RemoveAll(rs.dir)
}

// url is the server's address as HERALD_REDIS_URL names it, for Herald's processes.
func (rs *redisServer) url() string { return "unix://" + rs.sock }

// pid is redis-server's process id, for its peak RSS.
func (rs *redisServer) pid() int { return rs.proc.cmd.Process.Pid }

// flush empties Redis, so that each measurement starts from nothing.
func (rs *redisServer) flush(ctx context.Context) error {
	return rs.Client.FlushAll(ctx).Err()
}

// info is one section of INFO as field → value.
func (rs *redisServer) info(ctx context.Context, section string) (map[string]string, error) {
	text, err := rs.Client.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && !strings.HasPrefix(k, "#") {
			fields[k] = v
		}
	}
	return fields, nil
}

// diskStalls is a mark of what redis-server's append-only file went through so far: fsyncs
// that fell behind (Redis held writes for them) and rewrites (a fork each). A scenario's
// latency figures are read in their light: the run logs them when they moved.
type diskStalls struct {
	rs                      *redisServer
	delayedFsyncs, rewrites int64
}

func (rs *redisServer) diskStalls(ctx context.Context) diskStalls {
	d := diskStalls{rs: rs}
	d.delayedFsyncs, d.rewrites = rs.persistence(ctx)
	return d
}

// report logs the delayed fsyncs and rewrites since the mark, if any.
func (d diskStalls) report(ctx context.Context, scenario string) {
	fsyncs, rewrites := d.rs.persistence(ctx)
	if fsyncs > d.delayedFsyncs || rewrites > d.rewrites {
		log.Printf("%s: redis-server's append-only file: %d fsyncs fell behind, %d rewrites during the scenario",
			scenario, fsyncs-d.delayedFsyncs, rewrites-d.rewrites)
	}
}

// persistence is INFO persistence's aof_delayed_fsync and aof_rewrites (0 where unreadable:
// this is a diagnostic, not a figure).
func (rs *redisServer) persistence(ctx context.Context) (delayedFsyncs, rewrites int64) {
	fields, err := rs.info(ctx, "persistence")
	if err != nil {
		return 0, 0
	}
	delayedFsyncs, _ = strconv.ParseInt(fields["aof_delayed_fsync"], 10, 64)
	rewrites, _ = strconv.ParseInt(fields["aof_rewrites"], 10, 64)
	return delayedFsyncs, rewrites
}

// clientsMemory is INFO memory's mem_clients_normal: what used_memory holds for connections
// (query and output buffers), which grows with connections in use rather than with data: a
// connection that read a command keeps a query buffer of some 16-20 KB until it has been idle
// for 2 s (Redis 7.0's clientsCron).
func (rs *redisServer) clientsMemory(ctx context.Context) (int64, error) {
	fields, err := rs.info(ctx, "memory")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(fields["mem_clients_normal"], 10, 64)
}

// usedMemory is INFO memory's used_memory: the bytes Redis allocated for its data and itself.
func (rs *redisServer) usedMemory(ctx context.Context) (int64, error) {
	fields, err := rs.info(ctx, "memory")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(fields["used_memory"], 10, 64)
}

// cpuTime is the CPU time redis-server used so far, user and system.
func (rs *redisServer) cpuTime(ctx context.Context) (time.Duration, error) {
	fields, err := rs.info(ctx, "cpu")
	if err != nil {
		return 0, err
	}
	user, err1 := strconv.ParseFloat(fields["used_cpu_user"], 64)
	sys, err2 := strconv.ParseFloat(fields["used_cpu_sys"], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	return time.Duration((user + sys) * float64(time.Second)), nil
}

// version is the server's redis_version.
func (rs *redisServer) version(ctx context.Context) (string, error) {
	fields, err := rs.info(ctx, "server")
	return fields["redis_version"], err
}

// commands is how many commands Redis has processed so far (INFO commandstats: the calls of
// every command, those a script makes included).
func (rs *redisServer) commands(ctx context.Context) (int64, error) {
	stats, err := rs.commandStats(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, s := range stats {
		n += s.calls
	}
	return n, nil
}
