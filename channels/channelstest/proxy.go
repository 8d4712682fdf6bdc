package channelstest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// ProxyName is what a TinyProxy writes in the Via header of each plain-HTTP request it
// forwards: a receiver that sees it got the request through the proxy.
const ProxyName = "herald-test-proxy"

// TinyProxy is a real forward proxy, Debian's tinyproxy, on 127.0.0.1: plain-HTTP requests
// with a Via header naming ProxyName, and CONNECT tunnels to any port.
type TinyProxy struct {
	Addr string // host:port
	URL  string // http://host:port, without credentials
	log  *testkit.Buffer
}

// StartTinyProxy starts a tinyproxy for t. With user set it asks for those credentials
// (BasicAuth) and answers 407 without them. Without tinyproxy installed, t is skipped, or
// fails in CI (.ci/run installs it).
func StartTinyProxy(t testing.TB, user, password string) *TinyProxy {
	t.Helper()
	bin, err := exec.LookPath("tinyproxy")
	if err != nil {
		bin = "/usr/bin/tinyproxy"
		if _, serr := os.Stat(bin); serr != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("tinyproxy is not installed: CI must test through a real proxy (.ci/run installs it)")
			}
			t.Skip("tinyproxy is not installed (apt-get install tinyproxy)")
		}
	}
	for try := 0; ; try++ {
		p, err := startTinyProxy(t, bin, user, password)
		if err == nil {
			return p
		}
		if try == 4 {
			t.Fatal(err)
		}
	}
}

// startTinyProxy runs tinyproxy on a port that was free a moment ago; another process may
// have taken it since, hence the caller's tries.
func startTinyProxy(t testing.TB, bin, user, password string) (*TinyProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	conf := []string{
		"Port " + port,
		"Listen 127.0.0.1",
		"Timeout 30",
		"MaxClients 100",
		"Allow 127.0.0.1",
		"LogLevel Connect",
		`ViaProxyName "` + ProxyName + `"`,
	}
	if user != "" {
		conf = append(conf, "BasicAuth "+user+" "+password)
	}
	if os.Geteuid() == 0 { // tinyproxy drops to this user; without it, it warns and stays root
		conf = append(conf, "User nobody", "Group nogroup")
	}
	file := filepath.Join(t.TempDir(), "tinyproxy.conf")
	if err := os.WriteFile(file, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	log := &testkit.Buffer{}
	cmd := exec.Command(bin, "-d", "-c", file)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { _ = cmd.Process.Kill(); <-exited }
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case <-exited:
			return nil, fmt.Errorf("tinyproxy on %s ended at start:\n%s", addr, log.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("tinyproxy does not listen on %s after 10s:\n%s", addr, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(stop)
	return &TinyProxy{Addr: addr, URL: "http://" + addr, log: log}, nil
}

// WithCredentials is the proxy's URL with user and password.
func (p *TinyProxy) WithCredentials(user, password string) string {
	return "http://" + user + ":" + password + "@" + p.Addr
}

// Log is what the proxy wrote so far: a line for each request it got, with its target.
func (p *TinyProxy) Log() string { return p.log.String() }

// Requests is how many requests the proxy got (CONNECT and plain).
func (p *TinyProxy) Requests() int {
	return strings.Count(p.log.String(), "]: Request (file descriptor")
}

// LoopbackName is a host name other than localhost that resolves to 127.0.0.1 only, where
// receivers listen, for targets a proxy of the environment carries (Go never sends localhost
// or a loopback address to one): the machine's own name where /etc/hosts maps it there. ""
// when there is none.
func LoopbackName() string {
	host, _ := os.Hostname()
	for _, name := range []string{host, "localhost.localdomain"} {
		if name == "" || strings.EqualFold(name, "localhost") {
			continue
		}
		addrs, err := net.LookupHost(name)
		if err != nil || len(addrs) == 0 {
			continue
		}
		if !slices.ContainsFunc(addrs, func(a string) bool { return a != "127.0.0.1" }) {
			return name
		}
	}
	return ""
}
