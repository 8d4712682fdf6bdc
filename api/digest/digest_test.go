package digest

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

const (
	testUser     = "user"
	testPassword = "pass"
	testLifetime = 5 * time.Minute
	testPath     = "/path?x=1"
)

// memCounter is an in-memory NonceCounter.
type memCounter struct {
	mu   sync.Mutex
	seen map[string]uint64
	err  error // returned by Advance when set
}

func (c *memCounter) Advance(_ context.Context, nonce string, nc uint64, ttl time.Duration) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false, c.err
	}
	if ttl < testLifetime {
		return false, errors.New("memCounter: ttl shorter than the nonce lifetime")
	}
	if c.seen == nil {
		c.seen = map[string]uint64{}
	}
	if last, ok := c.seen[nonce]; ok && nc <= last {
		return false, nil
	}
	c.seen[nonce] = nc
	return true, nil
}

func (c *memCounter) count(nonce string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[nonce]
}

// clock is a settable time source, safe for the server goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a Verifier behind a real HTTP server on 127.0.0.1.
type fixture struct {
	v       *Verifier
	clock   *clock
	counter *memCounter
	srv     *httptest.Server

	mu       sync.Mutex
	credErr  error // returned by Credentials when set
	lastErr  error
	lastUser string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		clock:   &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		counter: &memCounter{},
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	users := map[string]string{testUser: HA1(testUser, testPassword)}
	f.v = &Verifier{
		Secret:   secret,
		Lifetime: testLifetime,
		Counter:  f.counter,
		Credentials: func(_ context.Context, username string) (string, bool, error) {
			f.mu.Lock()
			err := f.credErr
			f.mu.Unlock()
			if err != nil {
				return "", false, err
			}
			ha1, ok := users[username]
			return ha1, ok, nil
		},
		Now: f.clock.Now,
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

// handle is what an API handler does with a Verifier; X-Digest-Result tells the test what happened.
func (f *fixture) handle(w http.ResponseWriter, r *http.Request) {
	res, err := f.v.Verify(r)
	f.mu.Lock()
	f.lastErr, f.lastUser = err, res.Username
	f.mu.Unlock()
	unauthorized := func(result string, stale bool) {
		w.Header().Set("WWW-Authenticate", f.v.Challenge(stale))
		w.Header().Set("Content-Type", "application/json;charset=ISO-8859-1")
		w.Header().Set("X-Digest-Result", result)
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"reason":"Unauthorized","error":401,"detail":"You are not authorized for this resource."}`)
	}
	switch {
	case err == nil:
		w.Header().Set("X-Digest-Result", "ok")
		io.WriteString(w, res.Username)
	case errors.Is(err, ErrStale):
		unauthorized("stale", true)
	case errors.Is(err, ErrNoCredentials):
		unauthorized("none", false)
	case errors.Is(err, ErrInvalid):
		unauthorized("invalid", false)
	default:
		w.Header().Set("X-Digest-Result", "error")
		w.WriteHeader(http.StatusInternalServerError)
	}
}

func (f *fixture) last() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastUser, f.lastErr
}

type reply struct {
	status int
	header http.Header
	body   string
}

// get sends GET path (path and query) to the server with the given Authorization header.
func (f *fixture) get(t *testing.T, path, authorization string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, body := testkit.Do(t, f.srv.Client(), req)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// challenge fetches a fresh challenge (request without credentials) and returns its parameters.
func (f *fixture) challenge(t *testing.T) map[string]string {
	t.Helper()
	r := f.get(t, testPath, "")
	if r.status != http.StatusUnauthorized {
		t.Fatalf("request without credentials: status %d, want 401", r.status)
	}
	return parseChallenge(t, r.header)
}

func parseChallenge(t *testing.T, h http.Header) map[string]string {
	t.Helper()
	values := h.Values("WWW-Authenticate")
	if len(values) != 1 {
		t.Fatalf("WWW-Authenticate headers: %q, want exactly one", values)
	}
	params, err := parseAuthorization(values[0])
	if err != nil {
		t.Fatalf("challenge %q does not parse: %v", values[0], err)
	}
	return params
}

// creds is one Authorization header a client could send. Response is computed the way the
// algorithm and qop say, unless response is set; names in drop are left out of the header.
type creds struct {
	method, user, pass, realm, nonce, uri, qop, nc, cnonce, algorithm, response string
	drop                                                                        []string
}

func validCreds(nonce string) creds {
	return creds{
		method: http.MethodGet, user: testUser, pass: testPassword, realm: Realm, nonce: nonce,
		uri: testPath, qop: "auth", nc: "00000001", cnonce: "0a4f113b", algorithm: "MD5",
	}
}

func (c creds) computeResponse() string {
	h := func(s string) string {
		if strings.EqualFold(c.algorithm, "SHA-256") {
			sum := sha256.Sum256([]byte(s))
			return hex.EncodeToString(sum[:])
		}
		sum := md5.Sum([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	ha1 := h(c.user + ":" + c.realm + ":" + c.pass)
	ha2 := h(c.method + ":" + c.uri)
	if c.qop == "" { // RFC 2069
		return h(ha1 + ":" + c.nonce + ":" + ha2)
	}
	return h(ha1 + ":" + c.nonce + ":" + c.nc + ":" + c.cnonce + ":" + c.qop + ":" + ha2)
}

// header formats c like curl does.
func (c creds) header() string {
	response := c.response
	if response == "" {
		response = c.computeResponse()
	}
	params := []struct {
		name, value string
		quoted      bool
	}{
		{"username", c.user, true},
		{"realm", c.realm, true},
		{"nonce", c.nonce, true},
		{"uri", c.uri, true},
		{"cnonce", c.cnonce, true},
		{"nc", c.nc, false},
		{"qop", c.qop, false},
		{"response", response, true},
		{"algorithm", c.algorithm, false},
	}
	var parts []string
	for _, p := range params {
		if containsString(c.drop, p.name) || (p.name == "algorithm" && p.value == "") {
			continue
		}
		if p.quoted {
			parts = append(parts, p.name+`="`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p.value)+`"`)
		} else {
			parts = append(parts, p.name+"="+p.value)
		}
	}
	return "Digest " + strings.Join(parts, ", ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// digestClient answers challenges like curl: it keeps the last nonce and counts nc up from 1.
type digestClient struct {
	user, pass string
	nonce      string
	nc         uint64
}

func (c *digestClient) learn(challenge map[string]string) {
	c.nonce, c.nc = challenge["nonce"], 0
}

// next returns the Authorization header for the next request with the current nonce.
func (c *digestClient) next(method, uri string) string {
	c.nc++
	cnonce := make([]byte, 16)
	rand.Read(cnonce)
	return creds{
		method: method, user: c.user, pass: c.pass, realm: Realm, nonce: c.nonce, uri: uri,
		qop: "auth", nc: fmt.Sprintf("%08x", c.nc), cnonce: hex.EncodeToString(cnonce), algorithm: "MD5",
	}.header()
}

func expectResult(t *testing.T, r reply, status int, result string) {
	t.Helper()
	if r.status != status || r.header.Get("X-Digest-Result") != result {
		t.Fatalf("status %d result %q, want %d %q", r.status, r.header.Get("X-Digest-Result"), status, result)
	}
}

func TestClientFlow(t *testing.T) {
	f := newFixture(t)

	r := f.get(t, testPath, "")
	expectResult(t, r, http.StatusUnauthorized, "none")
	if got := r.header.Get("Content-Type"); got != "application/json;charset=ISO-8859-1" {
		t.Errorf("Content-Type %q", got)
	}
	raw := r.header.Get("WWW-Authenticate")
	if !strings.HasPrefix(raw, "Digest ") {
		t.Fatalf("WWW-Authenticate %q is not a Digest challenge", raw)
	}
	ch := parseChallenge(t, r.header)
	want := map[string]string{"realm": "Public API", "domain": "", "algorithm": "MD5", "qop": "auth", "stale": "false"}
	for name, value := range want {
		if got, ok := ch[name]; !ok || got != value {
			t.Errorf("challenge %s = %q (present %v), want %q", name, got, ok, value)
		}
	}
	if ch["nonce"] == "" {
		t.Fatal("challenge has no nonce")
	}
	if len(ch) != len(want)+1 {
		t.Errorf("challenge has unexpected parameters: %v", ch)
	}

	c := &digestClient{user: testUser, pass: testPassword}
	c.learn(ch)
	first := c.next(http.MethodGet, testPath)
	r = f.get(t, testPath, first)
	expectResult(t, r, http.StatusOK, "ok")
	if r.body != testUser {
		t.Errorf("authenticated user %q, want %q", r.body, testUser)
	}
	if r.header.Get("WWW-Authenticate") != "" {
		t.Error("a successful response carries a challenge")
	}

	// The very same header again: a replay.
	expectResult(t, f.get(t, testPath, first), http.StatusUnauthorized, "invalid")
	// nc+1 on the same nonce: fine.
	expectResult(t, f.get(t, testPath, c.next(http.MethodGet, testPath)), http.StatusOK, "ok")
	// A later request, also fine, on another path of the same protection space.
	expectResult(t, f.get(t, "/other", c.next(http.MethodGet, "/other")), http.StatusOK, "ok")
	// Going backwards (nc 2 after 3): refused.
	c.nc = 1
	expectResult(t, f.get(t, testPath, c.next(http.MethodGet, testPath)), http.StatusUnauthorized, "invalid")
	if got := f.counter.count(c.nonce); got != 3 {
		t.Errorf("counter for the nonce = %d, want 3", got)
	}
}

func TestRefused(t *testing.T) {
	f := newFixture(t)
	other := &Verifier{Secret: []byte("another secret, not the server's"), Lifetime: testLifetime, Now: f.clock.Now}
	forged := parseAuthorizationMust(t, other.Challenge(false))["nonce"]

	cases := []struct {
		name   string
		header func(nonce string) string
		result string
	}{
		{"wrong password", func(n string) string { c := validCreds(n); c.pass = "wrong"; return c.header() }, "invalid"},
		{"unknown user", func(n string) string { c := validCreds(n); c.user = "nobody"; return c.header() }, "invalid"},
		{"empty user", func(n string) string { c := validCreds(n); c.user = ""; return c.header() }, "invalid"},
		{"wrong realm", func(n string) string { c := validCreds(n); c.realm = "Private API"; return c.header() }, "invalid"},
		{"realm in other case", func(n string) string { c := validCreds(n); c.realm = "public api"; return c.header() }, "invalid"},
		{"uri of another path", func(n string) string { c := validCreds(n); c.uri = "/other?x=1"; return c.header() }, "invalid"},
		{"uri without the query", func(n string) string { c := validCreds(n); c.uri = "/path"; return c.header() }, "invalid"},
		{"other method", func(n string) string { c := validCreds(n); c.method = http.MethodPost; return c.header() }, "invalid"},
		{"missing qop", func(n string) string { c := validCreds(n); c.qop = ""; c.drop = []string{"qop"}; return c.header() }, "invalid"},
		{"missing qop, nc and cnonce (RFC 2069)", func(n string) string {
			c := validCreds(n)
			c.qop = ""
			c.drop = []string{"qop", "nc", "cnonce"}
			return c.header()
		}, "invalid"},
		{"qop auth-int", func(n string) string { c := validCreds(n); c.qop = "auth-int"; return c.header() }, "invalid"},
		{"algorithm SHA-256", func(n string) string { c := validCreds(n); c.algorithm = "SHA-256"; return c.header() }, "invalid"},
		{"algorithm MD5-sess", func(n string) string { c := validCreds(n); c.algorithm = "MD5-sess"; return c.header() }, "invalid"},
		{"forged nonce", func(string) string { return validCreds(forged).header() }, "invalid"},
		{"tampered nonce", func(n string) string {
			b := []byte(n)
			b[10] ^= 'A' ^ 'B'
			if b[10] == n[10] {
				b[10] = 'Q'
			}
			return validCreds(string(b)).header()
		}, "invalid"},
		{"made-up nonce", func(string) string { return validCreds("dcd98b7102dd2f0e8b11d0f600bfb0c093").header() }, "invalid"},
		{"nc not 8 digits", func(n string) string { c := validCreds(n); c.nc = "1"; return c.header() }, "invalid"},
		{"nc not hex", func(n string) string { c := validCreds(n); c.nc = "0000000g"; return c.header() }, "invalid"},
		{"nc zero", func(n string) string { c := validCreds(n); c.nc = "00000000"; return c.header() }, "invalid"},
		{"empty cnonce", func(n string) string { c := validCreds(n); c.cnonce = ""; return c.header() }, "invalid"},
		{"response not hex", func(n string) string { c := validCreds(n); c.response = strings.Repeat("z", 32); return c.header() }, "invalid"},
		{"missing username", func(n string) string { c := validCreds(n); c.drop = []string{"username"}; return c.header() }, "invalid"},
		{"missing realm", func(n string) string { c := validCreds(n); c.drop = []string{"realm"}; return c.header() }, "invalid"},
		{"missing nonce", func(n string) string { c := validCreds(n); c.drop = []string{"nonce"}; return c.header() }, "invalid"},
		{"missing uri", func(n string) string { c := validCreds(n); c.drop = []string{"uri"}; return c.header() }, "invalid"},
		{"missing response", func(n string) string { c := validCreds(n); c.drop = []string{"response"}; return c.header() }, "invalid"},
		{"missing nc", func(n string) string { c := validCreds(n); c.drop = []string{"nc"}; return c.header() }, "invalid"},
		{"missing cnonce", func(n string) string { c := validCreds(n); c.drop = []string{"cnonce"}; return c.header() }, "invalid"},
		{"repeated parameter", func(n string) string { return validCreds(n).header() + `, username="admin"` }, "invalid"},
		{"unterminated quote", func(n string) string { return strings.TrimSuffix(validCreds(n).header(), "=MD5") + `="MD5` }, "invalid"},
		{"userhash", func(n string) string { return validCreds(n).header() + ", userhash=true" }, "invalid"},
		{"basic scheme", func(string) string { return "Basic dXNlcjpwYXNz" }, "none"},
		{"bearer scheme", func(string) string { return "Bearer abc.def" }, "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nonce := f.challenge(t)["nonce"]
			r := f.get(t, testPath, tc.header(nonce))
			expectResult(t, r, http.StatusUnauthorized, tc.result)
			if ch := parseChallenge(t, r.header); ch["stale"] != "false" {
				t.Errorf("stale=%s, want false", ch["stale"])
			}
			user, err := f.last()
			if user != "" {
				t.Errorf("refused request reports user %q", user)
			}
			msg := err.Error()
			for _, secret := range []string{testPassword, HA1(testUser, testPassword)} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q reveals a secret", msg)
				}
			}
			if got := f.counter.count(nonce); got != 0 {
				t.Errorf("refused request advanced the nonce count to %d", got)
			}
		})
	}
}

func parseAuthorizationMust(t *testing.T, h string) map[string]string {
	t.Helper()
	p, err := parseAuthorization(h)
	if err != nil {
		t.Fatalf("parse %q: %v", h, err)
	}
	return p
}

func TestUnusualFormattingAccepted(t *testing.T) {
	f := newFixture(t)
	nonce := f.challenge(t)["nonce"]
	c := validCreds(nonce)
	resp := c.computeResponse()
	h := "digest  USERNAME = \"user\" ,,\tRealm=\"Public API\",nonce=\"" + nonce + "\" , Uri=\"/path?x=1\"," +
		" CNonce=0a4f113b , NC=00000001 , QOP=\"auth\" , Response=" + strings.ToUpper(resp) + ", Algorithm=md5, opaque=\"x, \\\"y\\\"\" ,"
	expectResult(t, f.get(t, testPath, h), http.StatusOK, "ok")
}

func TestStaleNonce(t *testing.T) {
	f := newFixture(t)

	// Just before the end of its lifetime a nonce still works.
	nonce := f.challenge(t)["nonce"]
	f.clock.Add(testLifetime - time.Second)
	expectResult(t, f.get(t, testPath, validCreds(nonce).header()), http.StatusOK, "ok")

	// Past it, the right password gets a stale challenge.
	nonce = f.challenge(t)["nonce"]
	f.clock.Add(testLifetime + time.Second)
	r := f.get(t, testPath, validCreds(nonce).header())
	expectResult(t, r, http.StatusUnauthorized, "stale")
	if _, err := f.last(); !errors.Is(err, ErrStale) || errors.Is(err, ErrInvalid) {
		t.Errorf("error %v, want ErrStale", err)
	}
	fresh := parseChallenge(t, r.header)
	if fresh["stale"] != "true" || fresh["nonce"] == "" || fresh["nonce"] == nonce {
		t.Errorf("stale challenge %v: want stale=true and a new nonce", fresh)
	}
	if got := f.counter.count(nonce); got != 0 {
		t.Errorf("stale nonce count recorded: %d", got)
	}

	// A wrong password with the expired nonce is not stale but invalid (RFC 7616 §3.3).
	c := validCreds(nonce)
	c.pass = "wrong"
	r = f.get(t, testPath, c.header())
	expectResult(t, r, http.StatusUnauthorized, "invalid")
	if _, err := f.last(); !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v, want ErrInvalid", err)
	}
	if ch := parseChallenge(t, r.header); ch["stale"] != "false" {
		t.Errorf("stale=%s, want false", ch["stale"])
	}

	// The client retries with the new nonce, without asking the user again.
	expectResult(t, f.get(t, testPath, validCreds(fresh["nonce"]).header()), http.StatusOK, "ok")

	// A nonce dated well in the future (a process whose clock is far ahead) is refused.
	nonce = f.challenge(t)["nonce"]
	f.clock.Add(-10 * time.Minute)
	expectResult(t, f.get(t, testPath, validCreds(nonce).header()), http.StatusUnauthorized, "invalid")
}

func TestRefusedAttemptDoesNotAdvanceCount(t *testing.T) {
	f := newFixture(t)
	nonce := f.challenge(t)["nonce"]
	bad := validCreds(nonce)
	bad.pass, bad.nc = "wrong", "00000009"
	expectResult(t, f.get(t, testPath, bad.header()), http.StatusUnauthorized, "invalid")
	expectResult(t, f.get(t, testPath, validCreds(nonce).header()), http.StatusOK, "ok")
}

func TestRequestURIForms(t *testing.T) {
	f := newFixture(t)
	nonce := parseAuthorizationMust(t, f.v.Challenge(false))["nonce"]
	// httptest.NewRequest keeps the target as sent in RequestURI: here the absolute form a
	// client sends to a proxy, while URL.RequestURI() is the path and query.
	const target = "http://127.0.0.1/path?x=1"
	for i, tc := range []struct {
		uri string
		ok  bool
	}{
		{"/path?x=1", true},
		{target, true},
		{"/path", false},
		{"http://127.0.0.1/other?x=1", false},
	} {
		c := validCreds(nonce)
		c.uri, c.nc = tc.uri, fmt.Sprintf("%08x", i+1)
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Authorization", c.header())
		res, err := f.v.Verify(r)
		if tc.ok && (err != nil || res.Username != testUser) {
			t.Errorf("uri %q: %v %q, want accepted", tc.uri, err, res.Username)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("uri %q: %v, want ErrInvalid", tc.uri, err)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	f := newFixture(t)
	newRequest := func(h ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, testPath, nil)
		for _, v := range h {
			r.Header.Add("Authorization", v)
		}
		return r
	}
	nonce := parseAuthorizationMust(t, f.v.Challenge(false))["nonce"]

	if _, err := f.v.Verify(newRequest()); err != ErrNoCredentials {
		t.Errorf("no header: %v, want ErrNoCredentials", err)
	}
	if _, err := f.v.Verify(newRequest(validCreds(nonce).header(), "Basic dXNlcjpwYXNz")); !errors.Is(err, ErrInvalid) {
		t.Errorf("two Authorization headers: %v, want ErrInvalid", err)
	}

	storeErr := errors.New("store unavailable")
	f.mu.Lock()
	f.credErr = storeErr
	f.mu.Unlock()
	_, err := f.v.Verify(newRequest(validCreds(nonce).header()))
	if !errors.Is(err, storeErr) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrStale) {
		t.Errorf("credentials failing: %v, want the store error wrapped", err)
	}
	expectResult(t, f.get(t, testPath, validCreds(nonce).header()), http.StatusInternalServerError, "error")
	f.mu.Lock()
	f.credErr = nil
	f.mu.Unlock()

	f.counter.mu.Lock()
	f.counter.err = storeErr
	f.counter.mu.Unlock()
	_, err = f.v.Verify(newRequest(validCreds(nonce).header()))
	if !errors.Is(err, storeErr) || errors.Is(err, ErrInvalid) {
		t.Errorf("counter failing: %v, want the store error wrapped", err)
	}
	f.counter.mu.Lock()
	f.counter.err = nil
	f.counter.mu.Unlock()

	for name, v := range map[string]*Verifier{
		"no secret":      {Lifetime: time.Minute, Counter: f.counter, Credentials: f.v.Credentials},
		"no lifetime":    {Secret: f.v.Secret, Counter: f.counter, Credentials: f.v.Credentials},
		"no counter":     {Secret: f.v.Secret, Lifetime: time.Minute, Credentials: f.v.Credentials},
		"no credentials": {Secret: f.v.Secret, Lifetime: time.Minute, Counter: f.counter},
	} {
		_, err := v.Verify(newRequest(validCreds(nonce).header()))
		if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrNoCredentials) {
			t.Errorf("%s: %v, want a configuration error", name, err)
		}
	}

	// A nil Now uses the real clock: a nonce just issued is accepted.
	live := &Verifier{Secret: f.v.Secret, Lifetime: testLifetime, Counter: &memCounter{}, Credentials: f.v.Credentials}
	n := parseAuthorizationMust(t, live.Challenge(false))["nonce"]
	if res, err := live.Verify(newRequest(validCreds(n).header())); err != nil || res.Username != testUser {
		t.Errorf("real clock: %v %q", err, res.Username)
	}
}

func TestChallenge(t *testing.T) {
	v := &Verifier{Secret: []byte("0123456789abcdef0123456789abcdef"), Lifetime: time.Minute}
	re := regexp.MustCompile(`^Digest realm="Public API", domain="", nonce="([A-Za-z0-9_-]{48})", algorithm=MD5, qop="auth", stale=(true|false)$`)
	seen := map[string]bool{}
	for _, stale := range []bool{false, true, false, true} {
		ch := v.Challenge(stale)
		m := re.FindStringSubmatch(ch)
		if m == nil {
			t.Fatalf("challenge %q has not the expected form", ch)
		}
		if m[2] != strconv.FormatBool(stale) {
			t.Errorf("challenge %q: stale=%s, want %v", ch, m[2], stale)
		}
		if seen[m[1]] {
			t.Errorf("nonce %s issued twice", m[1])
		}
		seen[m[1]] = true
	}
}

func TestHA1AndResponse(t *testing.T) {
	if got, want := HA1(testUser, testPassword), "a70177578ffa2371718bfd5f2033dd56"; got != want {
		t.Errorf("HA1 = %s, want %s", got, want)
	}
	// RFC 2617 §3.5.
	ha1 := md5Hex("Mufasa:testrealm@host.com:Circle Of Life")
	if ha1 != "939e7578ed9e3c518a452acee763bce9" {
		t.Fatalf("md5Hex = %s", ha1)
	}
	got := responseDigest(ha1, "dcd98b7102dd2f0e8b11d0f600bfb0c093", "00000001", "0a4f113b", "auth", "GET", "/dir/index.html")
	if want := "6629fae49393a05397450978507c4ef1"; got != want {
		t.Errorf("response = %s, want %s", got, want)
	}
}

var parseCases = []struct {
	name   string
	header string
	want   map[string]string // nil: an error is expected
	err    error
}{
	{"curl", `Digest username="user", realm="Public API", nonce="abc-_", uri="/path?x=1", cnonce="ZjE4", nc=00000001, qop=auth, response="0123abcd", algorithm=MD5`,
		map[string]string{"username": "user", "realm": "Public API", "nonce": "abc-_", "uri": "/path?x=1", "cnonce": "ZjE4", "nc": "00000001", "qop": "auth", "response": "0123abcd", "algorithm": "MD5"}, nil},
	{"all quoted", `Digest nc="00000001", qop="auth", algorithm="MD5"`,
		map[string]string{"nc": "00000001", "qop": "auth", "algorithm": "MD5"}, nil},
	{"all unquoted tokens", `Digest username=user, nonce=abc, cnonce=x.y~z`,
		map[string]string{"username": "user", "nonce": "abc", "cnonce": "x.y~z"}, nil},
	{"spaces and tabs everywhere", "  Digest \t username = \"u\"\t,realm=\"r\"   ,  nc =\t00000001  ",
		map[string]string{"username": "u", "realm": "r", "nc": "00000001"}, nil},
	{"no space after commas", `Digest a="1",b=2,c="3"`,
		map[string]string{"a": "1", "b": "2", "c": "3"}, nil},
	{"commas in quoted values", `Digest uri="/a?b=1,2", realm="x, y", opaque=","`,
		map[string]string{"uri": "/a?b=1,2", "realm": "x, y", "opaque": ","}, nil},
	{"equals in quoted value", `Digest uri="/a?b=c=d"`, map[string]string{"uri": "/a?b=c=d"}, nil},
	{"escaped quotes", `Digest username="a\"b", realm="c\\d", x="\"", y="\a"`,
		map[string]string{"username": `a"b`, "realm": `c\d`, "x": `"`, "y": "a"}, nil},
	{"escaped quote before comma", `Digest a="x\", b=1", c=2`,
		map[string]string{"a": `x", b=1`, "c": "2"}, nil},
	{"case-insensitive names and scheme", `dIgEsT USERNAME="u", Realm="r", qOp=auth`,
		map[string]string{"username": "u", "realm": "r", "qop": "auth"}, nil},
	{"empty list elements", `Digest ,username="u",, realm="r" , ,`,
		map[string]string{"username": "u", "realm": "r"}, nil},
	{"empty quoted value", `Digest domain="", a="b"`, map[string]string{"domain": "", "a": "b"}, nil},
	{"tab inside quoted value", "Digest a=\"x\ty\"", map[string]string{"a": "x\ty"}, nil},
	{"utf-8 in quoted value", `Digest username="Zoë"`, map[string]string{"username": "Zoë"}, nil},
	{"many unknown parameters", `Digest a=1, b=2, c=3, d=4, e=5, f=6, username=u`,
		map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "username": "u"}, nil},
	{"scheme only", `Digest`, map[string]string{}, nil},
	{"scheme and spaces", `Digest   `, map[string]string{}, nil},

	{"empty", ``, nil, ErrNoCredentials},
	{"blank", `   `, nil, ErrNoCredentials},
	{"basic", `Basic dXNlcjpwYXNz`, nil, ErrNoCredentials},
	{"bearer", `Bearer a.b.c`, nil, ErrNoCredentials},
	{"longer scheme name", `Digestive username="u"`, nil, ErrNoCredentials},
	{"leading comma instead of scheme", `, Digest a=1`, nil, ErrNoCredentials},

	{"scheme glued to parameter", `Digest="x"`, nil, ErrInvalid},
	{"unterminated quote", `Digest username="u`, nil, ErrInvalid},
	{"escape at end", `Digest username="u\`, nil, ErrInvalid},
	{"missing equals", `Digest username "u"`, nil, ErrInvalid},
	{"name only", `Digest username`, nil, ErrInvalid},
	{"missing value", `Digest username=, realm="r"`, nil, ErrInvalid},
	{"missing value at end", `Digest username=`, nil, ErrInvalid},
	{"missing name", `Digest ="u"`, nil, ErrInvalid},
	{"missing comma", `Digest a=1 b=2`, nil, ErrInvalid},
	{"text after quoted value", `Digest a="x"y`, nil, ErrInvalid},
	{"unquoted value with separator", `Digest uri=/path`, nil, ErrInvalid},
	{"unquoted value with space", `Digest a=b c`, nil, ErrInvalid},
	{"repeated parameter", `Digest a=1, b=2, A=3`, nil, ErrInvalid},
	{"repeated known parameter", `Digest nonce=1, Nonce=2`, nil, ErrInvalid},
	{"repeated among many unknown parameters", `Digest a=1, b=2, c=3, d=4, e=5, f=6, f=7`, nil, ErrInvalid},
	{"control character in quoted value", "Digest a=\"x\x00y\"", nil, ErrInvalid},
	{"newline in quoted value", "Digest a=\"x\ny\"", nil, ErrInvalid},
	{"too long", `Digest a="` + strings.Repeat("x", maxHeaderLen) + `"`, nil, ErrInvalid},
}

// parseAuthorization is the parameters of an Authorization header in a map, as
// scanAuthorization reads them (a repeated one refused): the grammar, tested on its own.
func parseAuthorization(header string) (map[string]string, error) {
	params := map[string]string{}
	err := scanAuthorization(header, func(name, value string) error {
		if _, dup := params[name]; dup {
			return invalid("repeated parameter")
		}
		params[name] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return params, nil
}

func TestParseAuthorization(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAuthorization(tc.header)
			if tc.want == nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("parse %q: %v %v, want %v", tc.header, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse %q: %v", tc.header, err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("parse %q:\n got  %q\n want %q", tc.header, got, tc.want)
			}
		})
	}
}

// TestCurl has the real curl answer the server's challenge.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	f := newFixture(t)
	run := func(password string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, curl, "--silent", "--show-error", "--noproxy", "*",
			"--digest", "-u", testUser+":"+password, "-o", "/dev/null", "-w", "%{http_code}",
			f.srv.URL+testPath).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(testPassword); got != "200" {
		t.Fatalf("curl --digest with the right password: HTTP %s, want 200", got)
	}
	if user, _ := f.last(); user != testUser {
		t.Errorf("server saw user %q, want %q", user, testUser)
	}
	if got := run("wrong"); got != "401" {
		t.Errorf("curl --digest with a wrong password: HTTP %s, want 401", got)
	}
}

// Read is Verify's first half: it gives what the header claims (user, nonce, count), whether
// the nonce expired, and whether the response answers an HA1, without looking anyone up nor
// recording a count; what it refuses, Verify refuses the same way.
func TestReadAnswer(t *testing.T) {
	f := newFixture(t)
	nonce := f.challenge(t)["nonce"]
	request := func(c creds) *http.Request {
		r := httptest.NewRequest(c.method, c.uri, nil)
		r.Header.Set("Authorization", c.header())
		return r
	}
	c := validCreds(nonce)
	c.nc = "0000002a"
	a, err := f.v.Read(request(c))
	if err != nil {
		t.Fatal(err)
	}
	if a.Username() != testUser || a.Nonce() != nonce || a.Count() != 42 || a.Stale() {
		t.Errorf("read %q %q %d stale=%v", a.Username(), a.Nonce(), a.Count(), a.Stale())
	}
	if !a.Answers(HA1(testUser, testPassword)) || a.Answers(HA1(testUser, "wrong")) || a.Answers("") {
		t.Error("Answers: want true only for the user's HA1")
	}
	if got := f.counter.count(nonce); got != 0 {
		t.Errorf("Read recorded count %d", got)
	}
	f.clock.Add(testLifetime + time.Second)
	if a, err := f.v.Read(request(c)); err != nil || !a.Stale() {
		t.Errorf("expired nonce: %v, %v; want stale", a, err)
	}

	for name, want := range map[string]error{
		"no header":   ErrNoCredentials,
		"wrong realm": ErrInvalid,
		"bad nonce":   ErrInvalid,
	} {
		r := httptest.NewRequest(http.MethodGet, testPath, nil)
		switch c := validCreds(nonce); name {
		case "wrong realm":
			c.realm = "other"
			r = request(c)
		case "bad nonce":
			c.nonce = "not-a-nonce"
			r = request(c)
		}
		if _, err := f.v.Read(r); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

// Checking a kept caller's answer (Read, then Answers) allocates nothing: every request of a
// polling agent pays it.
func TestReadAndAnswerAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("the nonce HMACs' pool allocates at random under the race detector")
	}
	f := newFixture(t)
	r := httptest.NewRequest(http.MethodGet, testPath, nil)
	r.Header.Set("Authorization", validCreds(f.challenge(t)["nonce"]).header())
	ha1 := HA1(testUser, testPassword)
	allocs := testing.AllocsPerRun(100, func() {
		if a, err := f.v.Read(r); err != nil || !a.Answers(ha1) {
			t.Fatalf("not answered: %v", err)
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations, want none", allocs)
	}
}
