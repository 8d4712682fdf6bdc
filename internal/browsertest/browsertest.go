// Package browsertest runs Debian's chromium headless for tests that must see a page as a
// browser draws it (asynqmon under /monitoring/, the API viewer at /api/docs).
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// Browser is chromium, run headless.
type Browser struct{ path string }

// Find finds chromium: a test that needs it fails without it in CI and is skipped elsewhere.
func Find(t *testing.T) Browser {
	t.Helper()
	return Browser{testkit.Program(t, "chromium", "CI renders pages in a real browser (Debian: apt-get install chromium)")}
}

// Path is chromium's executable, for a test that drives it (chromedp's ExecPath).
func (b Browser) Path() string { return b.path }

// Run loads page with the given output flag (--dump-dom, --screenshot=FILE) and returns what
// chromium printed and the URLs that pages of page's site requested (from the browser's
// network log; chromium's own background requests, for updates and the like, are not the
// page's and are left out). The browser
// has a profile of its own, resolves no host but 127.0.0.1, and lets the page run for 10 s of
// virtual time, enough for a React app to fetch its data and draw it.
func (b Browser) Run(t *testing.T, output, page string) (stdout string, requested []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	netLog := filepath.Join(dir, "netlog.json")
	cmd := exec.CommandContext(ctx, b.path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-features=AutofillServerCommunication,OptimizationHints,Translate",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--log-net-log="+netLog,
		"--window-size=1280,900", "--virtual-time-budget=10000",
		output, page)
	// chromium starts helper processes: a timeout ends them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium %s did not finish within 90 s:\n%s", output, stderr.String())
		}
		t.Fatalf("chromium %s: %v\n%s", output, err, stderr.String())
	}
	logged, err := os.ReadFile(netLog)
	if err != nil {
		t.Fatalf("chromium wrote no network log: %v", err)
	}
	requested, err = pageRequests(logged, page)
	if err != nil {
		t.Fatalf("chromium's network log: %v", err)
	}
	return out.String(), requested
}

// pageRequests reads a chromium network log and returns the URLs requested on behalf of a
// page of page's site, each once, in order: the requests that a page's network isolation key
// ("<top frame site> <frame site>") attributes to that site.
func pageRequests(netLog []byte, page string) ([]string, error) {
	u, err := url.Parse(page)
	if err != nil {
		return nil, err
	}
	site := u.Scheme + "://" + u.Hostname()
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL                 string `json:"url"`
				NetworkIsolationKey string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(netLog, &log); err != nil {
		return nil, err
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		return nil, errors.New("no URL_REQUEST_START_JOB event type")
	}
	var urls []string
	seen := map[string]bool{}
	for _, e := range log.Events {
		top, _, _ := strings.Cut(e.Params.NetworkIsolationKey, " ")
		if e.Type == start && top == site && !seen[e.Params.URL] {
			seen[e.Params.URL] = true
			urls = append(urls, e.Params.URL)
		}
	}
	return urls, nil
}

// Screenshot draws page into the PNG file and checks that chromium drew a page there: the
// window's 1280x900 and over 40 KiB (an error page in plain text is about 12).
func (b Browser) Screenshot(t *testing.T, file, page string) {
	t.Helper()
	b.Run(t, "--screenshot="+file, page)
	shot, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("chromium made no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if size := img.Bounds().Size(); size.X != 1280 || size.Y != 900 || len(shot) < 40<<10 {
		t.Errorf("the screenshot is %v, %d bytes: want 1280x900 and a page drawn in it (over 40 KiB)", size, len(shot))
	}
}

// Outside returns the URLs of requested that went to a host other than server (a base URL
// such as http://127.0.0.1:PORT); data: and blob: URLs stay in the page.
func Outside(requested []string, server string) []string {
	base, err := url.Parse(server)
	var out []string
	for _, u := range requested {
		p, perr := url.Parse(u)
		if err != nil || perr != nil || (p.Scheme != "data" && p.Scheme != "blob" && p.Host != base.Host) {
			out = append(out, u)
		}
	}
	return out
}
