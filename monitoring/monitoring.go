package monitoring

import (
	"bytes"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/api"
)

// New returns asynqmon rooted at api.MonitoringPath, reading the queues through rdb. When
// readOnly, asynqmon answers 405 to every request that would change them (deleting, running
// or archiving tasks, pausing or deleting queues) and hides those buttons.
//
// The handler shares rdb and never closes it: it lives as long as the client's owner keeps it.
func New(rdb redis.UniversalClient, readOnly bool) http.Handler {
	return withoutWebFonts{asynqmon.New(asynqmon.Options{
		RootPath:     strings.TrimSuffix(api.MonitoringPath, "/"),
		RedisConnOpt: sharedClient{rdb},
		ReadOnly:     readOnly,
	})}
}

// webFontLinks are the stylesheet links of asynqmon's page to Google's font service (Roboto and
// Material Icons). The page draws its icons as SVG and falls back to the system's sans-serif,
// so without them it renders the same on a machine with no internet access, and makes no
// request outside Herald.
var webFontLinks = regexp.MustCompile(`<link rel="stylesheet" href="https://fonts\.googleapis\.com/[^"]*"/?>`)

// withoutWebFonts serves asynqmon with webFontLinks cut from its page. The page is the answer
// to every path but its API and its static files (a single-page app), so those pass through
// and the rest is read whole and edited.
type withoutWebFonts struct{ next http.Handler }

func (h withoutWebFonts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, api.MonitoringPath)
	if strings.HasPrefix(rest, "api/") || strings.HasPrefix(rest, "static/") {
		h.next.ServeHTTP(w, r)
		return
	}
	page := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	h.next.ServeHTTP(page, r)
	body := webFontLinks.ReplaceAll(page.body.Bytes(), nil)
	maps.Copy(w.Header(), page.header)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(page.status)
	_, _ = w.Write(body)
}

// bufferedResponse keeps a response in memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

// sharedClient hands asynqmon the client Herald already has, whatever its topology (one
// node, Sentinel or Cluster), instead of a second configuration of the same Redis that could
// drift from the store's. asynqmon's Options take only an asynq.RedisConnOpt, whose one method
// makes the client asynq and asynqmon then use.
type sharedClient struct{ rdb redis.UniversalClient }

// MakeRedisClient returns the shared client, not a new one.
func (c sharedClient) MakeRedisClient() any { return c.rdb }
