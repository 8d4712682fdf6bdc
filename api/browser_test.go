package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// A page on another site can post an HTML form (enctype=text/plain) holding JSON with the
// browser's cached Digest credentials: a body not declared JSON is refused before anything is
// done, with the error body, and nothing is created.
func TestBodyNotDeclaredJSONIsRefused(t *testing.T) {
	e := newEnv(t)
	body, _ := json.Marshal(userBody("mallory", role(herald.GlobalOwner)))
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx"} {
		h := http.Header{}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		e.Owner.send("POST", "/users", body, h).wantError(http.StatusUnsupportedMediaType, herald.CodeUnsupportedMediaType)
	}
	if _, ok, err := e.Store.UserByUsername(t.Context(), "mallory"); ok || err != nil {
		t.Fatalf("a refused request created the user (%v)", err)
	}
	// JSON with a charset, and bodiless requests without a Content-Type, are served.
	e.Owner.send("POST", "/users", body, http.Header{"Content-Type": {"application/json; charset=utf-8"}}).wantStatus(201)
	e.Owner.send("GET", "/globalAlerts", nil, nil).wantStatus(200)
}

// A browser marks requests another site's page makes (Sec-Fetch-Site, Origin): unsafe ones are
// refused with 403 and the error body, reads and same-origin requests pass, and clients that
// are not browsers (neither header) are unaffected.
func TestCrossSiteBrowserRequestsAreRefused(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"name":"acme"}`)
	refused := []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Sec-Fetch-Site": {"same-site"}},
		{"Origin": {"https://evil.example"}},
	}
	for _, h := range refused {
		h.Set("Content-Type", "application/json")
		e.Owner.send("POST", "/orgs", body, h).wantError(http.StatusForbidden, api.CodeCrossOriginRequest)
	}
	e.Owner.send("GET", "/orgs/5f0000000000000000000000", nil, http.Header{"Sec-Fetch-Site": {"cross-site"}}).wantStatus(404)
	e.Owner.send("POST", "/orgs", body, http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-origin"}}).wantStatus(201)
	e.Owner.send("POST", "/orgs", []byte(`{"name":"initech"}`), http.Header{"Content-Type": {"application/json"}}).wantStatus(201)
}

// The console has its own Digest realm (a browser logged in to it holds no credentials for the
// API) and may not be framed by another page.
func TestMonitoringHasItsOwnRealmAndCannotBeFramed(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	e := newEnvWith(t, api.Config{Monitoring: console})
	owner := &client{t: t, base: e.srv.URL, user: e.Owner.user, pass: e.Owner.pass}
	r := raw(t, "GET", e.srv.URL+"/monitoring/", "", nil).wantStatus(401)
	if got := challengeParam(r.Header.Get("WWW-Authenticate"), "realm"); got != "Herald Monitoring" {
		t.Errorf("console realm %q, want Herald Monitoring", got)
	}
	for _, resp := range []*response{r, owner.do("GET", "/monitoring/", nil).wantStatus(204)} {
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Content-Security-Policy") != "frame-ancestors 'none'" {
			t.Errorf("console framing headers: %v", resp.Header)
		}
	}
	// An answer computed in the API's realm does not open the console, nor the reverse.
	nonce := challengeParam(r.Header.Get("WWW-Authenticate"), "nonce")
	raw(t, "GET", e.srv.URL+"/monitoring/", digestHeader(e.Owner.user, e.Owner.pass, nonce, 1, "GET", "/monitoring/"), nil).wantStatus(401)
	apiNonce := challengeParam(raw(t, "GET", e.Base+"/globalAlerts", "", nil).Header.Get("WWW-Authenticate"), "nonce")
	raw(t, "GET", e.Base+"/globalAlerts", digestHeaderIn("Herald Monitoring", e.Owner.user, e.Owner.pass, apiNonce, 1, "GET", "/api/public/v1.0/globalAlerts"), nil).wantStatus(401)
	// A cross-site change through the console is refused too.
	owner.send("DELETE", "/monitoring/api/queues/engine", nil, http.Header{"Sec-Fetch-Site": {"cross-site"}}).wantError(http.StatusForbidden, api.CodeCrossOriginRequest)
}

// A query number too large for an offset is a 400 naming the parameter, never a panic.
func TestHugePageNumbersAreRefused(t *testing.T) {
	e, _, p := newProjectEnv(t)
	for _, q := range []string{"pageNum=92233720368547760", "pageNum=9223372036854775807", "pageNum=2147483648",
		"itemsPerPage=92233720368547760", "pageNum=99999999999999999999999"} {
		for _, path := range []string{"/groups/" + p + "/integrations", "/groups/" + p + "/alerts", "/globalEvents", "/groups/" + p + "/deliveries"} {
			r := e.Owner.do("GET", path+"?"+q, nil).wantError(400, herald.CodeInvalidQueryParameter)
			if name, _, _ := strings.Cut(q, "="); r.Body["parameters"].([]any)[0] != name {
				t.Errorf("%s?%s: parameters %v", path, q, r.Body["parameters"])
			}
		}
	}
	e.Owner.do("GET", "/groups/"+p+"/integrations?pageNum=2147483647&itemsPerPage=500", nil).wantStatus(200)
}

// A panic anywhere in serving a request is answered 500 with the error body, saying nothing of
// the cause; the log has the stack.
func TestPanicIsA500WithoutTheStack(t *testing.T) {
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret internals") })
	e := newEnvWith(t, api.Config{Metrics: boom})
	r := raw(t, "GET", e.srv.URL+"/metrics", "", nil).wantError(500, herald.CodeUnexpectedError)
	if strings.Contains(string(r.Raw), "secret") || strings.Contains(string(r.Raw), "goroutine") {
		t.Errorf("the body tells the cause: %s", r.Raw)
	}
	if !strings.Contains(e.Logs(), "secret internals") || !strings.Contains(e.Logs(), "goroutine") {
		t.Errorf("the log lacks the panic and its stack: %s", logTail(e.Logs()))
	}
	raw(t, "GET", e.srv.URL+"/healthz", "", nil).wantStatus(200) // the server still serves
}

// Successful responses carry the document's Connection header (Authentication §3).
func TestSuccessHasConnectionHeader(t *testing.T) {
	e := newEnv(t)
	r := e.Owner.do("GET", "/globalAlerts", nil).wantStatus(200)
	if got := r.Header.Get("Connection"); got != "keep-alive" {
		t.Errorf("Connection %q, want keep-alive", got)
	}
}
