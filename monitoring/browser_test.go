package monitoring_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
)

// TestBrowserListsHeraldQueues opens Herald's /monitoring/ in Debian's headless chromium, as a
// person with a global read-only key would, and checks that asynqmon's React app rendered a
// table of Herald's queues. With go test -artifacts, the page's DOM and a screenshot are kept.
func TestBrowserListsHeraldQueues(t *testing.T) {
	chrome := chromium(t)
	r := newRig(t, true)
	queues := slices.Sorted(maps.Keys(dispatch.DefaultQueues()))
	for _, q := range queues {
		r.enqueue(q)
	}
	public, private := r.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	apiURL, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(signingProxy(apiURL, public, private))
	t.Cleanup(proxy.Close)
	page := proxy.URL + "/monitoring/"

	dom := chrome.run(t, "--dump-dom", page)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "monitoring.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each queue is a row of the queues table, named by a link to the queue's own page.
	var missing []string
	for _, q := range queues {
		if !strings.Contains(dom, `href="/monitoring/queues/`+q+`">`+q+`</a>`) {
			missing = append(missing, q)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the page chromium rendered has no row for the queues %v:\n%s", missing, dom)
	}

	shot := filepath.Join(t.ArtifactDir(), "monitoring.png")
	chrome.run(t, "--screenshot="+shot, page)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("chromium made no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if size := img.Bounds().Size(); size.X != 1280 || size.Y != 900 || len(b) < 40<<10 {
		t.Errorf("the screenshot is %v, %d bytes: want 1280x900 and a page drawn in it (over 40 KiB; an error page in text is about 12)", size, len(b))
	}
}

// signingProxy forwards a browser's requests to the API at target with a Digest
// Authorization for the key public:private: the API authenticates each request for real,
// while the headless browser, which cannot answer a Digest challenge without a person at a
// dialog, needs no credentials.
func signingProxy(target *url.URL, public, private string) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: &oneAtATime{next: &digest.Transport{Username: public, Password: private}},
	}
}

// oneAtATime sends one request at a time, so that the nonce counts of a browser's parallel
// requests reach the API in the order digest.Transport numbered them: the API refuses a count
// lower than one it has seen.
type oneAtATime struct {
	mu   sync.Mutex
	next http.RoundTripper
}

func (o *oneAtATime) RoundTrip(req *http.Request) (*http.Response, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.next.RoundTrip(req)
}

// browser is Debian's chromium, run headless.
type browser struct{ path string }

// chromium finds chromium: a test that needs it fails without it in CI and is skipped
// elsewhere.
func chromium(t *testing.T) browser {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: CI must render /monitoring/ in a real browser (Debian: apt-get install chromium)")
		}
		t.Skip("chromium is not installed (Debian: apt-get install chromium)")
	}
	return browser{path}
}

// run loads page with the given output flag and returns what chromium printed. The browser
// has a profile of its own, reaches no host but 127.0.0.1 (asynqmon's page links web fonts
// from the internet; they are not needed to render), and lets the page run for 10 s of
// virtual time, enough for the React app to fetch the queues and draw them.
func (b browser) run(t *testing.T, output, page string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--window-size=1280,900", "--virtual-time-budget=10000",
		output, page)
	// chromium starts helper processes: a timeout ends them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium %s did not finish within 90 s:\n%s", output, stderr.String())
		}
		t.Fatalf("chromium %s: %v\n%s", output, err, stderr.String())
	}
	return stdout.String()
}
