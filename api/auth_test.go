package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// A request without credentials gets the documented challenge: headers and body.
func TestAuthChallenge(t *testing.T) {
	e := newEnv(t)
	r := raw(t, "GET", e.Base+"/globalAlerts", "", nil)
	r.wantStatus(http.StatusUnauthorized)
	if got := r.Header.Get("Content-Type"); got != "application/json;charset=ISO-8859-1" {
		t.Errorf("Content-Type %q", got)
	}
	for _, h := range []string{"Date", "Content-Length"} {
		if r.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if got := r.Header.Get("Connection"); got != "keep-alive" {
		t.Errorf("Connection %q, want keep-alive", got)
	}
	if string(r.Raw) != `{"reason":"Unauthorized","error":401,"detail":"You are not authorized for this resource."}` {
		t.Errorf("body %s", r.Raw)
	}
	ch := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(ch, "Digest ") {
		t.Fatalf("challenge %q", ch)
	}
	want := map[string]string{"realm": "Public API", "domain": "", "algorithm": "MD5", "qop": "auth", "stale": "false"}
	for k, v := range want {
		if got := challengeParam(ch, k); got != v {
			t.Errorf("challenge %s=%q, want %q (%s)", k, got, v, ch)
		}
	}
	if challengeParam(ch, "nonce") == "" {
		t.Errorf("no nonce in %s", ch)
	}
}

// The digest answer is accepted once per nonce count: the same header again, or a count that
// goes backwards, is refused with a fresh challenge.
func TestAuthReplayRefused(t *testing.T) {
	e := newEnv(t)
	c := e.Owner
	c.do("GET", "/globalAlerts", nil).wantStatus(200) // learns a nonce
	url := e.Base + "/globalAlerts"
	auth := digestHeader(c.user, c.pass, c.nonce, 7, "GET", "/api/public/v1.0/globalAlerts")
	raw(t, "GET", url, auth, nil).wantStatus(200)
	replay := raw(t, "GET", url, auth, nil).wantStatus(http.StatusUnauthorized)
	if replay.Header.Get("WWW-Authenticate") == "" {
		t.Error("a replay gets a new challenge")
	}
	raw(t, "GET", url, digestHeader(c.user, c.pass, c.nonce, 6, "GET", "/api/public/v1.0/globalAlerts"), nil).wantStatus(http.StatusUnauthorized)
	raw(t, "GET", url, digestHeader(c.user, c.pass, c.nonce, 8, "GET", "/api/public/v1.0/globalAlerts"), nil).wantStatus(200)
}

func TestAuthWrongCredentials(t *testing.T) {
	e := newEnv(t)
	wrong := &client{t: t, base: e.Base, user: e.Owner.user, pass: "not-the-key"}
	r := raw(t, "GET", e.Base+"/globalAlerts", "", nil)
	nonce := challengeParam(r.Header.Get("WWW-Authenticate"), "nonce")
	for name, auth := range map[string]string{
		"wrong private key": digestHeader(wrong.user, wrong.pass, nonce, 1, "GET", "/api/public/v1.0/globalAlerts"),
		"unknown key":       digestHeader("nobody", "secret", nonce, 1, "GET", "/api/public/v1.0/globalAlerts"),
		"other uri":         digestHeader(e.Owner.user, e.Owner.pass, nonce, 1, "GET", "/api/public/v1.0/globalEvents"),
		"basic":             "Basic " + "dXNlcjpwYXNz",
	} {
		t.Run(name, func(t *testing.T) {
			r := raw(t, "GET", e.Base+"/globalAlerts", auth, nil).wantStatus(http.StatusUnauthorized)
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Error("no challenge")
			}
		})
	}
	if strings.Contains(e.Logs(), e.Owner.pass) {
		t.Error("a private key reached the log")
	}
}

// clock is a settable clock for nonce expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// An expired nonce gets a challenge with stale=true, and the client's retry with the new
// nonce works.
func TestAuthStaleNonce(t *testing.T) {
	clk := &clock{now: time.Now()}
	e := newEnvWith(t, api.Config{Clock: clk, NonceLifetime: 5 * time.Minute})
	c := e.Owner
	c.do("GET", "/globalAlerts", nil).wantStatus(200)
	clk.add(6 * time.Minute)
	auth := digestHeader(c.user, c.pass, c.nonce, 50, "GET", "/api/public/v1.0/globalAlerts")
	r := raw(t, "GET", e.Base+"/globalAlerts", auth, nil).wantStatus(http.StatusUnauthorized)
	if got := challengeParam(r.Header.Get("WWW-Authenticate"), "stale"); got != "true" {
		t.Fatalf("stale=%q, want true", got)
	}
	c.do("GET", "/globalAlerts", nil).wantStatus(200) // answers the new challenge
}

// A valid key without the role an endpoint needs: 401 USER_UNAUTHORIZED and no challenge.
func TestAuthInsufficientRole(t *testing.T) {
	e := newEnv(t)
	ro := e.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	r := ro.do("POST", "/orgs", map[string]any{"name": "x"}).wantError(http.StatusUnauthorized, "USER_UNAUTHORIZED")
	if r.Header.Get("WWW-Authenticate") != "" {
		t.Error("an insufficient role must not be challenged")
	}
}

// logLines are the JSON lines the server logged, decoded.
func logLines(t *testing.T, e *env) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(e.Logs()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// The log tells a refused digest call from the challenge round trip every call makes: the
// challenge is at debug, the call itself at info; a wrong private key and an unknown key are
// each a warning naming the key, never its secret or the response hash.
func TestAuthLogTellsRefusalFromRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.Owner.do("GET", "/globalAlerts", nil).wantStatus(200)
	for _, l := range logLines(t, e) {
		switch {
		case l["msg"] == "request" && l["status"] == 401.0 && l["level"] != "debug":
			t.Errorf("the challenge of a digest call logged at %v: %v", l["level"], l)
		case l["msg"] == "request" && l["status"] == 200.0 && l["level"] != "info":
			t.Errorf("the call logged at %v: %v", l["level"], l)
		case strings.HasPrefix(fmt.Sprint(l["msg"]), "authentication refused"):
			t.Errorf("a good call logged as refused: %v", l)
		}
	}

	nonce := challengeParam(raw(t, "GET", e.Base+"/globalAlerts", "", nil).Header.Get("WWW-Authenticate"), "nonce")
	for _, c := range []struct{ user, pass, want string }{
		{e.Owner.user, "not-the-key", "authentication refused: wrong password or private key"},
		{"nobody", "secret-of-nobody", "authentication refused: unknown user or API key"},
	} {
		auth := digestHeader(c.user, c.pass, nonce, 1, "GET", "/api/public/v1.0/globalAlerts")
		raw(t, "GET", e.Base+"/globalAlerts", auth, nil).wantStatus(http.StatusUnauthorized)
		found := false
		for _, l := range logLines(t, e) {
			if l["msg"] == c.want && l["username"] == c.user {
				found = true
				if l["level"] != "warn" {
					t.Errorf("%q logged at %v, want warn", c.want, l["level"])
				}
			}
		}
		if !found {
			t.Errorf("no line %q naming %s in the log:\n%s", c.want, c.user, e.Logs())
		}
		for _, secret := range []string{c.pass, e.Owner.pass, challengeParam(auth, "response")} {
			if strings.Contains(e.Logs(), secret) {
				t.Errorf("a secret (%s) in the log", secret)
			}
		}
	}
}

// Each request's log line says what it was and who made it: method, path, status, duration,
// remote address and the caller's key, also when many are served at once (their lines' fields
// are reused from one request to the next).
func TestRequestLogLineOfEachCaller(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	type caller struct {
		key  *client
		path string
	}
	var callers []caller
	for i := range 4 {
		p := e.project(org, fmt.Sprint("p", i))
		callers = append(callers, caller{e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), "/groups/" + p})
	}
	var wg sync.WaitGroup
	for _, c := range callers {
		wg.Go(func() {
			for range 5 {
				c.key.do("GET", c.path, nil).wantStatus(http.StatusOK)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, l := range logLines(t, e) {
		if l["msg"] != "request" || l["status"] != 200.0 {
			continue
		}
		for _, c := range callers {
			if l["path"] != api.BasePath+c.path {
				continue
			}
			if l["method"] != "GET" || l["publicKey"] != c.key.user || l["username"] != "" || l["remote"] != "127.0.0.1" || l["duration"] == nil {
				t.Errorf("the line of %s by %s: %v", c.path, c.key.user, l)
			}
			seen[c.path]++
		}
	}
	for _, c := range callers {
		if seen[c.path] != 5 {
			t.Errorf("%s: %d lines of its 5 requests", c.path, seen[c.path])
		}
	}
}
