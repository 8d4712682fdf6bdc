package api_test

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// env is one API server on a fresh real Redis, served over 127.0.0.1, with a global owner.
type env struct {
	t     *testing.T
	srv   *httptest.Server
	Base  string // http://127.0.0.1:port/api/public/v1.0
	Store *store.Store
	Owner *client
	logs  *testkit.Buffer
}

// newEnv starts an API for t.
func newEnv(t *testing.T) *env { return newEnvWith(t, api.Config{}) }

// newProjectEnv starts an API for t with an organization, acme, and its project, prod: the
// env and the two ids.
func newProjectEnv(t *testing.T) (e *env, org, p string) {
	t.Helper()
	e = newEnv(t)
	org = e.org("acme")
	return e, org, e.project(org, "prod")
}

// newEnvWith starts an API for t with cfg (GitHash and Version are set for it).
func newEnvWith(t *testing.T, cfg api.Config) *env {
	t.Helper()
	st := store.New(storetest.Redis(t))
	logs := &testkit.Buffer{}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(logs), zap.DebugLevel))
	cfg.GitHash, cfg.Version = "testhash", "test"
	clock := cfg.Clock
	if clock == nil {
		clock = herald.SystemClock{}
	}
	srv := apitest.Serve(t, st, dispatch.NewDispatcher(st, clock), log, cfg)
	e := &env{t: t, srv: srv, Base: srv.URL + api.BasePath, Store: st, logs: logs}
	e.Owner = e.key("", herald.Role{RoleName: herald.GlobalOwner})
	return e
}

// Logs is everything the server logged so far.
func (e *env) Logs() string { return e.logs.String() }

// key makes an API key with roles straight in the store (orgID "" for a global key) and
// returns a client that uses it.
func (e *env) key(orgID string, roles ...herald.Role) *client {
	e.t.Helper()
	k, priv := apitest.Key(e.t, e.Store, "test key", orgID, roles...)
	return &client{t: e.t, base: e.Base, user: k.PublicKey, pass: priv, KeyID: k.ID}
}

// org creates an organization through the API and returns its id.
func (e *env) org(name string) string {
	e.t.Helper()
	r := e.Owner.do("POST", "/orgs", map[string]any{"name": name})
	r.wantStatus(201)
	return r.str("id")
}

// project creates a project in orgID through the API and returns its id.
func (e *env) project(orgID, name string, tags ...string) string {
	e.t.Helper()
	body := map[string]any{"name": name, "orgId": orgID}
	if tags != nil {
		body["tags"] = tags
	}
	r := e.Owner.do("POST", "/groups", body)
	r.wantStatus(201)
	return r.str("id")
}

// client calls the API with HTTP Digest credentials, like curl --digest: it answers each
// challenge and then reuses the nonce with increasing counts.
type client struct {
	t          *testing.T
	base       string
	user, pass string
	KeyID      string
	httpc      *http.Client // nil: http.DefaultClient

	mu    sync.Mutex
	nonce string
	realm string // the challenge's: the API's or the monitoring console's
	nc    int
}

// response is an answer, with its body decoded when it is JSON.
type response struct {
	t      *testing.T
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// do sends method path (under the API base, or for the Prometheus front door under the
// server's root; may carry a query) with body encoded as JSON
// (a string or []byte is sent as it is).
func (c *client) do(method, path string, body any) *response {
	c.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			c.t.Fatal(err)
		}
	}
	var h http.Header
	if raw != nil {
		h = http.Header{"Content-Type": {"application/json"}}
	}
	return c.send(method, path, raw, h)
}

// send is do with the body as it is and exactly the headers h (besides Authorization).
func (c *client) send(method, path string, raw []byte, h http.Header) *response {
	c.t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		base := c.base
		if strings.HasPrefix(path, api.PrometheusPath+"/") {
			base = strings.TrimSuffix(base, api.BasePath)
		}
		req, err := http.NewRequest(method, base+path, bytes.NewReader(raw))
		if err != nil {
			c.t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		if auth := c.authorization(req); auth != "" {
			req.Header.Set("Authorization", auth)
		}
		httpc := c.httpc
		if httpc == nil {
			httpc = http.DefaultClient
		}
		resp, err := httpc.Do(req)
		if err != nil {
			c.t.Fatal(err)
		}
		r := readResponse(c.t, resp)
		if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") != "" && c.user != "" {
			c.learn(r.Header.Get("WWW-Authenticate"))
			continue
		}
		return r
	}
	c.t.Fatalf("%s %s: still challenged after answering", method, path)
	return nil
}

// raw sends a request with exactly the given Authorization header (or none).
func raw(t *testing.T, method, url, authorization string, body []byte) *response {
	t.Helper()
	return rawVia(t, http.DefaultClient, method, url, authorization, body)
}

// rawVia is raw through httpc.
func rawVia(t *testing.T, httpc *http.Client, method, url, authorization string, body []byte) *response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readResponse(t, resp)
}

func readResponse(t *testing.T, resp *http.Response) *response {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &response{t: t, Status: resp.StatusCode, Header: resp.Header, Raw: b}
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &r.Body); err != nil {
			t.Fatalf("response is not JSON: %v: %s", err, b)
		}
	}
	return r
}

func (c *client) learn(challenge string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nonce, c.realm, c.nc = challengeParam(challenge, "nonce"), challengeParam(challenge, "realm"), 0
}

// authorization is the digest answer for req, or "" before the first challenge.
func (c *client) authorization(req *http.Request) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nonce == "" {
		return ""
	}
	c.nc++
	return digestHeaderIn(c.realm, c.user, c.pass, c.nonce, c.nc, req.Method, req.URL.RequestURI())
}

// digestHeader computes an Authorization header as a client does (RFC 7616, MD5, qop=auth)
// in the API's realm.
func digestHeader(user, pass, nonce string, nc int, method, uri string) string {
	return digestHeaderIn("Public API", user, pass, nonce, nc, method, uri)
}

func digestHeaderIn(realm, user, pass, nonce string, nc int, method, uri string) string {
	h := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	cb := make([]byte, 8)
	_, _ = rand.Read(cb)
	cnonce := hex.EncodeToString(cb)
	ncs := fmt.Sprintf("%08x", nc)
	resp := h(h(user+":"+realm+":"+pass) + ":" + nonce + ":" + ncs + ":" + cnonce + ":auth:" + h(method+":"+uri))
	return fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=MD5, qop=auth, nc=%s, cnonce="%s", response="%s"`,
		user, realm, nonce, uri, ncs, cnonce, resp)
}

// challengeParam reads one parameter of a WWW-Authenticate challenge.
func challengeParam(challenge, name string) string {
	for _, part := range strings.Split(strings.TrimPrefix(challenge, "Digest "), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func (r *response) wantStatus(want int) *response {
	r.t.Helper()
	if r.Status != want {
		r.t.Fatalf("status %d, want %d: %s", r.Status, want, r.Raw)
	}
	return r
}

// wantError checks an error answer: status, the error body's fields, and the errorCode.
func (r *response) wantError(status int, code string) *response {
	r.t.Helper()
	r.wantStatus(status)
	if got := r.str("errorCode"); got != code {
		r.t.Fatalf("errorCode %q, want %q: %s", got, code, r.Raw)
	}
	if r.num("error") != float64(status) || r.str("reason") != http.StatusText(status) || r.str("detail") == "" {
		r.t.Fatalf("error body lacks error/reason/detail: %s", r.Raw)
	}
	if _, ok := r.Body["parameters"].([]any); !ok {
		r.t.Fatalf("error body lacks parameters array: %s", r.Raw)
	}
	return r
}

func (r *response) str(field string) string {
	r.t.Helper()
	s, _ := r.Body[field].(string)
	return s
}

func (r *response) num(field string) float64 {
	r.t.Helper()
	n, _ := r.Body[field].(float64)
	return n
}

// results is the results array of a list answer, each item an object.
func (r *response) results() []map[string]any {
	r.t.Helper()
	arr, ok := r.Body["results"].([]any)
	if !ok {
		r.t.Fatalf("no results array: %s", r.Raw)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// link is the href of the link with rel in links (of the body when links is nil), or "".
func link(links any, rel string) string {
	arr, _ := links.([]any)
	for _, l := range arr {
		m, _ := l.(map[string]any)
		if m["rel"] == rel {
			s, _ := m["href"].(string)
			return s
		}
	}
	return ""
}

// wantKeys checks that obj has exactly the keys want (no more, no fewer).
func wantKeys(t *testing.T, obj map[string]any, want ...string) {
	t.Helper()
	got := map[string]bool{}
	for k := range obj {
		got[k] = true
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("missing field %q in %v", k, obj)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("unexpected field %q in %v", k, obj)
	}
}
