package channels

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// received is one request as a receiver saw it.
type received struct {
	Method string
	Path   string
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// receiver is a real HTTP server on 127.0.0.1 that records every request and answers with
// what answer says (200 when answer is nil).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T, answer http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), body})
		rc.mu.Unlock()
		if answer != nil {
			answer(w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

// testClient reaches 127.0.0.1, as tests need.
func testClient() *http.Client { return NewHTTPClient(true, 5*time.Second) }

func at(s string) herald.Time {
	t, ok := herald.ParseTime(s)
	if !ok {
		panic("bad time " + s)
	}
	return t
}

func metricAlert() herald.Alert {
	return herald.Alert{
		ID:              "65a1b2c3d4e5f60718293a4b",
		GroupID:         "5f0c1d2e3f4a5b6c7d8e9f00",
		AlertConfigID:   "65a1b2c3d4e5f60718290001",
		EventTypeName:   "OUTSIDE_METRIC_THRESHOLD",
		Status:          herald.StatusOpen,
		Created:         at("2026-11-21T18:40:55Z"),
		Updated:         at("2026-11-21T18:45:00Z"),
		HostID:          "b1946ac92492d2347c6235b4d2611184",
		HostnameAndPort: "db1.example.com:27017",
		ReplicaSetName:  "rs0",
		MetricName:      "CONNECTIONS",
		CurrentValue:    &herald.CurrentValue{Number: 512, Units: "RAW"},
		Tags:            []string{"prod"},
	}
}
