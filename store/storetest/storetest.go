// Package storetest gives tests a Redis of their own: a real redis-server started for the
// test (on a unix socket in the test's temp dir, so tests never fight over ports), or the
// server HERALD_TEST_REDIS_URL names. Only outside CI, and only when redis-server is not
// installed, does it fall back to the embedded store, and it says so.
package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
)

// server says where Redis finds its server: the URL HERALD_TEST_REDIS_URL names, or the path
// of an installed redis-server (both "": the embedded store).
func server() (url, bin string) {
	if url := os.Getenv("HERALD_TEST_REDIS_URL"); url != "" {
		return url, ""
	}
	bin, _ = exec.LookPath("redis-server")
	return "", bin
}

// Real reports whether Redis gives tests a real redis-server rather than the embedded store.
// A test of a load only a real server bears in seconds (ten thousand users: under a second
// there, minutes on the embedded store) runs only there; CI always has one.
func Real() bool {
	url, bin := server()
	return url != "" || bin != ""
}

// Redis returns a client on a fresh, empty Redis for t, closed when t ends.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url, bin := server()
	if url != "" {
		return shared(t, url)
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed: CI must test against a real Redis (.ci/run installs it)")
		}
		return embedded(t)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: store.Protocol})
	t.Cleanup(func() { _ = rdb.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := rdb.Ping(context.Background()).Err(); err == nil {
			return rdb
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer within 10s: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func shared(t testing.TB, url string) *redis.Client {
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("HERALD_TEST_REDIS_URL: %v", err)
	}
	opt.Protocol = store.Protocol
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("flush %s: %v", url, err)
	}
	return rdb
}

var warned bool

func embedded(t testing.TB) *redis.Client {
	if !warned {
		warned = true
		fmt.Fprintln(os.Stderr, "storetest: redis-server not installed; using the embedded store (CI uses a real Redis)")
	}
	return Embedded(t)
}

// Embedded returns a client on a new embedded store (herald dev's), for tests of what that
// store itself does; both end with t.
func Embedded(t testing.TB) *redis.Client {
	t.Helper()
	e, err := store.StartEmbedded()
	if err != nil {
		t.Fatalf("embedded store: %v", err)
	}
	t.Cleanup(e.Close)
	opt, _ := redis.ParseURL(e.URL())
	opt.Protocol = store.Protocol
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// URL is the redis:// (or unix://) address of a client's server, for a process the test starts.
func URL(rdb *redis.Client) string {
	o := rdb.Options()
	if o.Network == "unix" {
		return "unix://" + o.Addr
	}
	u := url.URL{Scheme: "redis", Host: o.Addr, Path: fmt.Sprintf("/%d", o.DB)}
	if o.Password != "" {
		u.User = url.UserPassword(o.Username, o.Password)
	}
	return u.String()
}

// RedisCPU is the CPU time redis-server spent so far (INFO cpu: parsing and answering
// included), for benchmarks' figures per operation; 0 from the embedded store, which has none.
func RedisCPU(tb testing.TB, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		name, v, _ := strings.Cut(line, ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatal(err)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
