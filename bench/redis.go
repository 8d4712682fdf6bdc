package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is the redis-server the benchmark runs against: its own, on a unix socket in a
// temporary directory, with the append-only file synced every second as production runs it.
type redisServer struct {
	cmd    *exec.Cmd
	dir    string
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
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--dir", dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--logfile", "redis.log")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the benchmark
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	rs := &redisServer{cmd: cmd, dir: dir, Client: redis.NewClient(&redis.Options{Network: "unix", Addr: sock})}
	if err := poll(ctx, 10*time.Second, func() (bool, error) { return rs.Client.Ping(ctx).Err() == nil, nil }); err != nil {
		rs.stop()
		return nil, fmt.Errorf("redis-server did not answer: %w", err)
	}
	return rs, nil
}

// stop shuts redis-server down (killing it if it takes more than 10 s) and removes its files.
func (rs *redisServer) stop() {
	_ = rs.Client.Close()
	terminate(rs.cmd)
	_ = os.RemoveAll(rs.dir)
}

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
