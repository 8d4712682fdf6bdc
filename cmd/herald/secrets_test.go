package main

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// The secrets of the secrets test: each distinctive, so that finding one anywhere in an
// output is a leak.
const (
	secretPrivateKey = "9b1e6f0c-private-part-of-the-bootstrap-key"
	secretRedisPW    = "r3dis-pa55word-in-the-url"
	secretSMTP       = "smtp-pa55word-secret"
	secretSMS        = "sms-token-secret"
)

// passwordRedis is a Redis that wants secretRedisPW, on 127.0.0.1. It is the embedded store's
// server (miniredis) rather than redis-server, so that this test also runs where only Go is:
// what it checks is Herald's output, not Redis.
func passwordRedis(t *testing.T) string {
	t.Helper()
	m := miniredis.NewMiniRedis()
	m.RequireAuth(secretRedisPW)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m.Addr()
}

// closedPort is a 127.0.0.1 address nothing listens on, for the whole test: a socket is bound
// to it and never listens, so a connection to it is refused, and no other test (packages run
// in parallel) can take the port meanwhile, as one could a port listened on and closed.
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

// Secrets given to herald never come back out: not in any role's --help, not in the message of
// a mistyped flag, a setting that does not parse or a Redis URL that does not, not in the log
// of a role that starts (at debug, go-redis's own lines included) or fails to reach Redis.
func TestSecretsNeverEchoed(t *testing.T) {
	addr := passwordRedis(t)
	env := []string{
		"HERALD_BOOTSTRAP_KEY=secretpub:" + secretPrivateKey,
		"HERALD_REDIS_URL=redis://:" + secretRedisPW + "@" + addr + "/0",
		"HERALD_SMTP_PASSWORD=" + secretSMTP, "HERALD_SMS_TOKEN=" + secretSMS,
		"HERALD_METRICS_LISTEN=", "HERALD_LISTEN=127.0.0.1:0", "HERALD_LOG_LEVEL=debug",
	}
	with := func(more ...string) []string { return append(append([]string(nil), env...), more...) }
	leaks := func(what, output string) {
		t.Helper()
		for _, s := range []string{secretPrivateKey, secretRedisPW, secretSMTP, secretSMS} {
			if strings.Contains(output, s) {
				t.Errorf("%s shows a secret (%s):\n%s", what, s, output)
			}
		}
	}
	roles := []string{"dev", "api", "worker", "scheduler", "admin create-key"}
	for _, role := range roles {
		stdout, stderr, code := runHerald(t, env, role, "--help")
		leaks(role+" --help", stdout+stderr)
		if code != 0 || !strings.Contains(stdout, "--redis-url") {
			t.Errorf("herald %s --help: exit %d\n%s%s", role, code, stdout, stderr)
		}
		if !strings.Contains(stdout, `(from the environment "redis://:xxxxx@`+addr+`/0")`) {
			t.Errorf("herald %s --help does not show the Redis URL with its password masked:\n%s", role, stdout)
		}
		stdout, stderr, code = runHerald(t, env, role, "--no-such-flag")
		leaks(role+" with a mistyped flag", stdout+stderr)
		if code != 2 {
			t.Errorf("herald %s --no-such-flag: exit %d", role, code)
		}
		// A secret given as an argument, where a flag's value was meant.
		for _, args := range [][]string{{"--redis-url=", "secretpub:" + secretPrivateKey}, {"secretpub:" + secretPrivateKey}} {
			stdout, stderr, code = runHerald(t, env, append(strings.Fields(role), args...)...)
			leaks(role+" with an argument", stdout+stderr)
			if code != 2 || !strings.Contains(stderr, "takes no arguments") {
				t.Errorf("herald %s %v: exit %d\n%s", role, args, code, stderr)
			}
		}
		stdout, stderr, code = runHerald(t, with("HERALD_MINUTE=1", "HERALD_LOG_LEVEL=loud", "HERALD_KEY_ROLES=ORG_OWNER"), role)
		leaks(role+" with a setting that does not parse", stdout+stderr)
		if code != 2 {
			t.Errorf("herald %s with HERALD_LOG_LEVEL=loud: exit %d", role, code)
		}
	}

	for _, url := range []string{
		"redis://:" + secretRedisPW + "@[::1",                     // url.Parse's error repeats the whole URL
		"redis://:" + secretRedisPW + "@127.0.0.1:6379/abc",       // go-redis: database number
		"redis://:" + secretRedisPW + "@127.0.0.1:6379/0?pool=x",  // go-redis: unknown option
		"redis://:" + secretRedisPW + "@127.0.0.1:port/0",         // url.Parse: port
		"redis://:" + secretRedisPW + "@127.0.0.1:6379/0/1",       // go-redis: path
		"rediss://user:" + secretRedisPW + "@127.0.0.1:6379/zero", // with a user name
		// A password with a character a URL must have percent-encoded (a generated one may
		// hold "/") ends the host early: url.Parse sees no password, and takes it for the
		// port, the path or the fragment; go-redis would connect to another Redis without it.
		"redis://:" + secretRedisPW + "/x@127.0.0.1:6379/0",       // url.Parse: port
		"redis://:6379/" + secretRedisPW + "@127.0.0.1:6379/0",    // go-redis: path
		"redis://:6379#" + secretRedisPW + "@127.0.0.1:6379/0",    // parses: localhost:6379, no password
		"redis://:" + secretRedisPW + "?x@127.0.0.1:6379/0",       // url.Parse: port
		"redis://:" + secretRedisPW + "%zz@127.0.0.1:6379/0",      // url.Parse: escape
		"redis://127.0.0.1:6379/0?password=" + secretRedisPW,      // other clients' form; go-redis: unknown option
		"redis://:x/y@127.0.0.1:6379/0?password=" + secretRedisPW, // and a password ending the host early
	} {
		for _, role := range []string{"api", "admin create-key"} {
			stdout, stderr, code := runHerald(t, with("HERALD_REDIS_URL="+url), role)
			leaks(role+" with HERALD_REDIS_URL "+url, stdout+stderr)
			if code != 2 || !strings.Contains(stderr, "HERALD_REDIS_URL: ") || !strings.Contains(stderr, "is not a Redis URL") {
				t.Errorf("herald %s with HERALD_REDIS_URL %s: exit %d\n%s", role, url, code, stderr)
			}
			stdout, stderr, _ = runHerald(t, with("HERALD_REDIS_URL="+url), role, "--help")
			leaks(role+" --help with HERALD_REDIS_URL "+url, stdout+stderr)
		}
	}

	stdout, stderr, code := runHerald(t, with("HERALD_REDIS_URL=redis://:"+secretRedisPW+"@"+closedPort(t)+"/0"), "api")
	leaks("api on an unreachable Redis", stdout+stderr)
	if code != 2 || !strings.Contains(stderr, "does not answer") {
		t.Errorf("api on an unreachable Redis: exit %d\n%s", code, stderr)
	}

	// Roles that start, at debug: their whole output until they are up.
	for role, up := range map[string]string{"dev": "API listening", "api": "API listening", "worker": "worker started", "scheduler": "scheduler started"} {
		out := runUntil(t, env, up, role)
		leaks(role+"'s log", out)
	}
}

// runUntil runs herald args until its output says up (within 20 s), then kills it, and
// returns what it wrote.
func runUntil(t *testing.T, env []string, up string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "HERALD_TEST_ARGS="+strings.Join(args, " ")), env...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), up); {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("herald %v ended (%v) before saying %q:\n%s", args, err, up, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("herald %v did not say %q within 20s:\n%s", args, up, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out.String()
}

// A Redis that does not answer is reported once, by Herald, first: go-redis's own pool lines
// (five attempts at each of several dials) do not come before it.
func TestRedisUnreachableSaidFirst(t *testing.T) {
	addr := closedPort(t)
	_, stderr, code := runHerald(t, []string{"HERALD_REDIS_URL=redis://" + addr + "/0", "HERALD_METRICS_LISTEN="}, "worker")
	want := "herald: Redis at " + addr + " does not answer: dial tcp " + addr + ": connect: connection refused\n"
	if code != 2 || stderr != want {
		t.Errorf("worker on an unreachable Redis: exit %d, stderr:\n%s\nwant only:\n%s", code, stderr, want)
	}
}

// An egress proxy's password never comes back out either: not in --help, not in the message of
// a proxy URL that does not parse, not in the log of a worker that says which proxy it uses
// (HERALD_OUTBOUND_PROXY or the environment's HTTPS_PROXY).
func TestProxyPasswordNeverEchoed(t *testing.T) {
	const secretProxyPW = "pr0xy-pa55word-secret"
	addr := passwordRedis(t)
	env := []string{"HERALD_REDIS_URL=redis://:" + secretRedisPW + "@" + addr + "/0", "HERALD_METRICS_LISTEN=", "HERALD_LOG_LEVEL=debug"}
	with := func(more ...string) []string { return append(append([]string(nil), env...), more...) }
	leaks := func(what, output string) {
		t.Helper()
		if strings.Contains(output, secretProxyPW) {
			t.Errorf("%s shows the proxy's password:\n%s", what, output)
		}
	}
	proxy := "HERALD_OUTBOUND_PROXY=http://proxy-user:" + secretProxyPW + "@127.0.0.1:3128"
	stdout, stderr, code := runHerald(t, with(proxy), "worker", "--help")
	leaks("worker --help", stdout+stderr)
	if code != 0 || !strings.Contains(stdout, `(from the environment "http://proxy-user:xxxxx@127.0.0.1:3128")`) {
		t.Errorf("worker --help does not show the proxy with its password masked: exit %d\n%s", code, stdout)
	}
	for _, url := range []string{
		"http://proxy-user:" + secretProxyPW + "@[::1",                // url.Parse's error repeats the whole URL
		"http://proxy-user:" + secretProxyPW + "/x@127.0.0.1:3128",    // a "/" ends the host early
		"ftp://proxy-user:" + secretProxyPW + "@127.0.0.1:3128",       // another scheme
		"http://proxy-user:" + secretProxyPW + "@127.0.0.1:3128/path", // a path
	} {
		stdout, stderr, code := runHerald(t, with("HERALD_OUTBOUND_PROXY="+url), "worker")
		leaks("worker with HERALD_OUTBOUND_PROXY "+url, stdout+stderr)
		if code != 2 || !strings.Contains(stderr, "HERALD_OUTBOUND_PROXY: ") || !strings.Contains(stderr, "is not a proxy URL") {
			t.Errorf("worker with HERALD_OUTBOUND_PROXY %s: exit %d\n%s", url, code, stderr)
		}
	}
	_, stderr, code = runHerald(t, with("HTTPS_PROXY=http://proxy-user:"+secretProxyPW+"@proxy.example.com:port"), "worker")
	leaks("worker with a malformed HTTPS_PROXY", stderr)
	if code != 2 || !strings.Contains(stderr, "HTTPS_PROXY (or https_proxy) is not a proxy URL") {
		t.Errorf("worker with a malformed HTTPS_PROXY: exit %d\n%s", code, stderr)
	}

	out := runUntil(t, with(proxy), "worker started", "worker")
	leaks("the worker's log", out)
	if !strings.Contains(out, `"proxy":"http://proxy-user:xxxxx@127.0.0.1:3128"`) {
		t.Errorf("the worker does not say which proxy it uses:\n%s", out)
	}
	out = runUntil(t, with("HTTPS_PROXY=http://proxy-user:"+secretProxyPW+"@127.0.0.1:3128"), "worker started", "worker")
	leaks("the worker's log", out)
	if !strings.Contains(out, `"https":"http://proxy-user:xxxxx@127.0.0.1:3128"`) {
		t.Errorf("the worker does not say which proxy of the environment it uses:\n%s", out)
	}
}
