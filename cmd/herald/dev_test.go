package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// lockedBuffer is an output the test can read while herald writes to it.
type lockedBuffer = testkit.Buffer

// startDev runs herald dev in the test's process on a free 127.0.0.1 port, until stop, which
// reports an error it ended with.
func startDev(t *testing.T) (out, logs *lockedBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, logs = &lockedBuffer{}, &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"dev", "--listen", "127.0.0.1:0"}, out, logs) }()
	return out, logs, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("herald dev ended with %v", err)
		}
	}
}

// waitPrinted waits until out holds a match of re and returns its submatches; what fails
// says what was missing.
func waitPrinted(t *testing.T, out *lockedBuffer, re *regexp.Regexp, missing string) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s:\n%s", missing, out.String())
		}
	}
}

// herald dev, as a newcomer runs it: it prints a key and a curl line, and the curl line works
// as pasted. The private key is printed, never logged.
func TestDevPrintsAWorkingCurlLine(t *testing.T) {
	curl := requireCurl(t)
	t.Setenv("HERALD_REDIS_URL", "")
	out, logs, stop := startDev(t)
	defer stop()

	line := regexp.MustCompile(`curl --digest -u '([a-z]+):([0-9a-f-]+)' '(http://127\.0\.0\.1:\d+/api/public/v1\.0/globalAlerts\?pretty=true)'`)
	m := waitPrinted(t, out, line, "no curl line printed")
	res, err := exec.Command(curl, "-s", "-w", "\n%{http_code}", "--digest", "-u", m[1]+":"+m[2], m[3]).Output()
	if err != nil {
		t.Fatal(err)
	}
	out2 := strings.TrimSpace(string(res))
	i := strings.LastIndexByte(out2, '\n')
	body, code := out2[:i], out2[i+1:]
	if code != "200" || !strings.Contains(body, `"totalCount": 0`) {
		t.Fatalf("curl got %s: %s", code, body)
	}
	if !strings.Contains(logs.String(), "embedded in-memory store") {
		t.Errorf("the first log lines say the data lives in memory:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), m[2]) {
		t.Error("the private key reached the log")
	}
}

// With HERALD_BOOTSTRAP_KEY the given key works and its private part is never echoed.
func TestDevBootstrapKeyNotEchoed(t *testing.T) {
	curl := requireCurl(t)
	const priv = "0f8b1c3e-5a7d-4e2b-9c6f-112233445566"
	t.Setenv("HERALD_REDIS_URL", "")
	t.Setenv("HERALD_BOOTSTRAP_KEY", "bootkey:"+priv)
	out, logs, stop := startDev(t)
	defer stop()

	url := regexp.MustCompile(`'(http://127\.0\.0\.1:\d+/api/public/v1\.0/globalAlerts\?pretty=true)'`)
	m := waitPrinted(t, out, url, "no curl line printed")
	res, err := exec.Command(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "--digest", "-u", "bootkey:"+priv, m[1]).Output()
	if err != nil || string(res) != "200" {
		t.Fatalf("bootstrap key: %s %v", res, err)
	}
	if strings.Contains(out.String()+logs.String(), priv) {
		t.Error("the bootstrap private key was echoed")
	}
}

// herald dev on a Redis of the settings makes its global owner key once: a second start finds
// it, says so, and adds none.
func TestDevKeepsItsKeyOnAKeptRedis(t *testing.T) {
	rdb := storetest.Redis(t)
	t.Setenv("HERALD_REDIS_URL", storetest.URL(rdb))
	t.Setenv("HERALD_BOOTSTRAP_KEY", "")
	key := regexp.MustCompile(`public ([a-z]+)`)
	start := func() string {
		t.Helper()
		out, logs, stop := startDev(t)
		defer stop()
		// Up once it serves: stopping it while it starts would be another test.
		running := regexp.MustCompile(`Herald is running at (http://127\.0\.0\.1:\d+)/`)
		for deadline := time.Now().Add(10 * time.Second); ; {
			if m := running.FindStringSubmatch(out.String()); m != nil {
				if res, err := http.Get(m[1] + "/healthz"); err == nil {
					_ = res.Body.Close()
					if res.StatusCode == http.StatusOK {
						return out.String()
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("herald dev is not up within 10s:\n%s\n%s", out.String(), logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first, second := start(), start()
	m1, m2 := key.FindStringSubmatch(first), key.FindStringSubmatch(second)
	if m1 == nil || m2 == nil || m1[1] != m2[1] {
		t.Fatalf("the second start names another key:\n%s\n---\n%s", first, second)
	}
	if !strings.Contains(second, "made by an earlier herald dev on this Redis") || !strings.Contains(second, "HERALD_BOOTSTRAP_KEY") {
		t.Errorf("the second start does not say whose key it is:\n%s", second)
	}
	keys, n, err := store.New(rdb).GlobalAPIKeys(context.Background(), store.Page{Limit: 100})
	if err != nil || n != 1 {
		t.Errorf("%d global keys after two starts (%v): %+v", n, err, keys)
	}
}

// herald dev without a mail server says at start, in one line, that a new project's default
// configurations (which email its owners) reach nobody, and which setting changes it; with one
// it says nothing of the kind.
func TestDevSaysTheDefaultsReachNobodyWithoutMail(t *testing.T) {
	t.Setenv("HERALD_REDIS_URL", "")
	for _, smtp := range []string{"", "127.0.0.1:2525"} {
		t.Setenv("HERALD_SMTP_ADDR", smtp)
		out, logs, stop := startDev(t)
		running := regexp.MustCompile(`Herald is running at (http://127\.0\.0\.1:\d+)`)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if m := running.FindStringSubmatch(out.String()); m != nil {
				if res, err := http.Get(m[1] + "/healthz"); err == nil {
					res.Body.Close()
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("herald dev did not start:\n%s", logs.String())
			}
		}
		stop()
		n := strings.Count(logs.String(), "the default alert configurations of every new project reach nobody")
		switch {
		case smtp == "" && (n != 1 || !strings.Contains(logs.String(), "set HERALD_SMTP_ADDR")):
			t.Errorf("without a mail server: %d lines saying so, want one naming HERALD_SMTP_ADDR:\n%s", n, logs.String())
		case smtp != "" && n != 0:
			t.Errorf("with a mail server, the start says the defaults reach nobody:\n%s", logs.String())
		}
	}
}

// A second herald dev on the port of a first one (or any port taken) stops at start, and the
// message names the setting that chooses another; so does a worker whose metrics port is taken.
func TestBusyPortNamesItsSetting(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct{ role, env string }{{"dev", "HERALD_LISTEN"}, {"worker", "HERALD_METRICS_LISTEN"}} {
		t.Setenv("HERALD_REDIS_URL", "")
		if c.role != "dev" {
			t.Setenv("HERALD_REDIS_URL", storetest.URL(storetest.Redis(t)))
		}
		t.Setenv(c.env, taken.Addr().String())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := run(ctx, []string{c.role}, &bytes.Buffer{}, &bytes.Buffer{})
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || timedOut || !strings.HasPrefix(err.Error(), c.env+": ") || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("herald %s on a taken port: %v", c.role, err)
		}
		t.Setenv(c.env, "")
	}
}

// The API refuses headers over its bound with 431, before authentication: a connection that
// sends them slowly holds that much of the API's memory until the header timeout.
func TestAPIBoundsRequestHeaders(t *testing.T) {
	t.Setenv("HERALD_REDIS_URL", "")
	out, logs, stop := startDev(t)
	defer stop()
	running := regexp.MustCompile(`Herald is running at (http://127\.0\.0\.1:\d+)/`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := running.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("herald dev did not start:\n%s", logs.String())
		}
	}
	for _, c := range []struct {
		size int
		want int
	}{{8 << 10, http.StatusOK}, {256 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, err := http.NewRequest(http.MethodGet, base+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Pad", strings.Repeat("a", c.size))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("headers of %d bytes: %d, want %d", c.size, res.StatusCode, c.want)
		}
	}
}

// herald dev's banner says where the data is and where the reference, queues and metrics
// are; the embedded store it names answers nobody without its password, which no output
// shows.
func TestDevBannerAndAClosedStore(t *testing.T) {
	t.Setenv("HERALD_REDIS_URL", "")
	out, logs, stop := startDev(t)
	defer stop()
	banner := regexp.MustCompile(`embedded store at (127\.0\.0\.1:\d+),[^\n]*\nAPI reference: (\S+)   Queues: (\S+)   Metrics: (\S+)`)
	m := waitPrinted(t, out, banner, "no store and URLs in the banner")
	// A local stranger connecting to the store's port is refused.
	conn, err := net.DialTimeout("tcp", m[1], 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 128)
	n, _ := conn.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "-NOAUTH") {
		t.Errorf("KEYS without the password answered %q, want -NOAUTH", buf[:n])
	}
	for _, text := range []string{out.String(), logs.String()} {
		if strings.Contains(text, "redis://:") {
			t.Errorf("the store's password URL was shown:\n%s", text)
		}
	}
	// Each URL of the banner is served: the reference openly, the queues and metrics to a key.
	for url, want := range map[string]int{m[2]: http.StatusOK, m[3]: http.StatusUnauthorized, m[4]: http.StatusOK} {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", url, res.StatusCode, want)
		}
	}
}
