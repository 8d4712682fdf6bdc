// Package channelstest holds what the tests of the senders share: a real HTTP receiver on
// 127.0.0.1 that records what it gets, and alerts to send. It is for tests only.
package channelstest

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/heraldhq/herald"
)

// Request is one request as a receiver saw it.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Receiver is a real HTTP server on 127.0.0.1 that records every request and answers with
// what its answer handler says (200 and no body when nil).
type Receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// NewReceiver starts a receiver for t.
func NewReceiver(t testing.TB, answer http.HandlerFunc) *Receiver {
	t.Helper()
	rc := &Receiver{}
	rc.Server = httptest.NewServer(rc.handler(answer))
	t.Cleanup(rc.Close)
	return rc
}

// NewReceiverOn starts a receiver on listener l (another loopback address, say).
func NewReceiverOn(t testing.TB, l net.Listener, answer http.HandlerFunc) *Receiver {
	t.Helper()
	rc := &Receiver{}
	rc.Server = httptest.NewUnstartedServer(rc.handler(answer))
	rc.Listener.Close()
	rc.Listener = l
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *Receiver) handler(answer http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, Request{r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), body})
		rc.mu.Unlock()
		if answer != nil {
			answer(w, r)
		}
	})
}

// Requests is what the receiver got so far.
func (rc *Receiver) Requests() []Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Request(nil), rc.reqs...)
}

// Only is the one request the receiver got; it fails t if there were more or fewer.
func (rc *Receiver) Only(t testing.TB) Request {
	t.Helper()
	reqs := rc.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// At is a time of the API's form; it panics on a malformed one (tests' literals).
func At(s string) herald.Time {
	t, ok := herald.ParseTime(s)
	if !ok {
		panic("channelstest: bad time " + s)
	}
	return t
}

// HostAlert is an open HOST_DOWN alert.
func HostAlert() herald.Alert {
	return herald.Alert{
		ID:              "65a1b2c3d4e5f60718293a4c",
		GroupID:         "5f0c1d2e3f4a5b6c7d8e9f00",
		AlertConfigID:   "65a1b2c3d4e5f60718290002",
		EventTypeName:   "HOST_DOWN",
		Status:          herald.StatusOpen,
		Created:         At("2026-11-21T18:40:55Z"),
		Updated:         At("2026-11-21T18:40:55Z"),
		HostID:          "b1946ac92492d2347c6235b4d2611184",
		HostnameAndPort: "db1.example.com:27017",
		ReplicaSetName:  "rs0",
	}
}

// MetricAlert is an open OUTSIDE_METRIC_THRESHOLD alert.
func MetricAlert() herald.Alert {
	return herald.Alert{
		ID:              "65a1b2c3d4e5f60718293a4b",
		GroupID:         "5f0c1d2e3f4a5b6c7d8e9f00",
		AlertConfigID:   "65a1b2c3d4e5f60718290001",
		EventTypeName:   "OUTSIDE_METRIC_THRESHOLD",
		Status:          herald.StatusOpen,
		Created:         At("2026-11-21T18:40:55Z"),
		Updated:         At("2026-11-21T18:45:00Z"),
		HostID:          "b1946ac92492d2347c6235b4d2611184",
		HostnameAndPort: "db1.example.com:27017",
		ReplicaSetName:  "rs0",
		MetricName:      "CONNECTIONS",
		CurrentValue:    &herald.CurrentValue{Number: 512, Units: "RAW"},
		Tags:            []string{"prod"},
	}
}

// Answer answers with status, body and the header pairs given (name, value, ...).
func Answer(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// DecodeJSON decodes raw, a request's body, into v, refusing fields v does not have; it fails
// t if raw does not decode.
func DecodeJSON(t testing.TB, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("body is not a %T: %v\n%s", v, err, raw)
	}
}

// JSONObject is raw, a request's body, decoded as a JSON object; it fails t if raw is not one.
func JSONObject(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	DecodeJSON(t, raw, &m)
	return m
}

// Closed is alert a closed (resolved) at, a time of the API's form.
func Closed(a herald.Alert, at string) herald.Alert {
	a.Status, a.Resolved = herald.StatusClosed, At(at)
	return a
}
