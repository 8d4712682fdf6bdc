package monitoring_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/browsertest"
)

// TestBrowserListsHeraldQueues opens Herald's /monitoring/ in Debian's headless chromium, as a
// person with a global read-only key would, and checks that asynqmon's React app rendered a
// table of Herald's queues, with no request outside Herald. With go test -artifacts, the
// page's DOM and a screenshot are kept.
func TestBrowserListsHeraldQueues(t *testing.T) {
	chrome := browsertest.Find(t)
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

	dom, requested := chrome.Run(t, "--dump-dom", page)
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
	// Everything the page needs comes from Herald: no web fonts from a CDN, so an operator
	// without internet access gets the same page.
	for _, u := range browsertest.Outside(requested, proxy.URL) {
		t.Errorf("the page made a request outside Herald: %s", u)
	}
	chrome.Screenshot(t, filepath.Join(t.ArtifactDir(), "monitoring.png"), page)
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
