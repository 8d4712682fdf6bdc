package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// actKeys are the action keys of the tests' API: "new" signs, "old" still verifies.
var actKeys = mustKeys("new:" + strings.Repeat("n", 40) + ",old:" + strings.Repeat("o", 40))

func mustKeys(s string) actlink.Keys {
	k, err := actlink.ParseKeys(s)
	if err != nil {
		panic(err)
	}
	return k
}

// actEnv is an API with action keys, a project and an open HOST_DOWN alert in it.
type actEnv struct {
	*env
	project string
	alert   herald.Alert
	routes  *routeLog
}

// routeLog keeps the routes the API told its observer of, as metrics label them.
type routeLog struct {
	mu     sync.Mutex
	routes []string
}

func (l *routeLog) observe(_, route string, _ int, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.routes = append(l.routes, route)
}

func (l *routeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.routes, "\n")
}

func newActEnv(t *testing.T, limits store.AuthLimits) *actEnv {
	t.Helper()
	routes := &routeLog{}
	e := newEnvWith(t, api.Config{ActionKeys: actKeys, AuthLimits: limits, Observe: routes.observe})
	p := e.project(e.org("acme"), "prod")
	a := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, time.Now().Add(-90*time.Minute)))
	return &actEnv{env: e, project: p, alert: a, routes: routes}
}

// signed signs claims under keys, failing the test if it cannot.
func signed(t *testing.T, keys actlink.Keys, c actlink.Claims) string {
	t.Helper()
	tok, err := keys.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// claims are those of a link to e's alert for action, made for ops@example.com.
func (e *actEnv) claims(action actlink.Action) actlink.Claims {
	return actlink.Claims{Group: e.project, Alert: e.alert.ID, Action: action, Recipient: "ops@example.com",
		Expires: time.Now().Add(time.Hour).Truncate(time.Second)}
}

// page requests the page of tok with method and headers h (a POST sends the form's empty body).
func (e *actEnv) page(method, tok string, h http.Header) *response {
	e.t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, e.srv.URL+api.ActPath+tok, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return readResponse(e.t, resp)
}

// wantPage checks an HTML answer of status that says each of says, with the page's headers.
func wantPage(r *response, status int, says ...string) *response {
	r.t.Helper()
	r.wantStatus(status)
	if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		r.t.Errorf("Content-Type %q, want an HTML page", ct)
	}
	for k, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if got := r.Header.Get(k); got != want {
			r.t.Errorf("%s %q, want %q", k, got, want)
		}
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'", "style-src 'sha256-"} {
		if !strings.Contains(csp, want) {
			r.t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	for _, s := range says {
		if !strings.Contains(string(r.Raw), s) {
			r.t.Errorf("the page does not say %q:\n%s", s, r.Raw)
		}
	}
	return r
}

// unchanged checks that e's alert is as it was saved and no acknowledgement was recorded.
func (e *actEnv) unchanged() {
	e.t.Helper()
	a, err := e.Store.Alert(context.Background(), e.project, e.alert.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if !a.AcknowledgedUntil.IsZero() || a.AcknowledgingUsername != "" || a.Status != e.alert.Status {
		e.t.Errorf("the alert changed: %+v", a)
	}
	for _, typ := range []string{herald.EventAlertAcknowledged, herald.EventAlertUnacknowledged} {
		if evs := auditEvents(e.t, e.env, store.EventScope{GroupID: e.project}, typ); len(evs) != 0 {
			e.t.Errorf("%d %s events recorded", len(evs), typ)
		}
	}
}

// A link that does not work, whatever is wrong with it, answers a page with a 4xx saying why,
// by GET as by POST, and changes nothing.
func TestActLinkRefusesHostileTokens(t *testing.T) {
	e := newActEnv(t, store.AuthLimits{Window: time.Minute, PerPair: 1000, PerAddress: 1000, PerName: 1000}) // counted, not throttled here
	good := signed(t, actKeys, e.claims(actlink.Acknowledge1h))
	other := e.env.project(e.org("other"), "other")
	closedLongAgo := hostDownAlert(e.project, herald.StatusClosed, time.Now().Add(-72*time.Hour))
	closedLongAgo.Resolved = herald.At(time.Now().Add(-25 * time.Hour))
	saveTestAlert(t, e.env, false, closedLongAgo)
	with := func(change func(*actlink.Claims)) actlink.Claims {
		c := e.claims(actlink.Acknowledge1h)
		change(&c)
		return c
	}
	tamper := func(tok string, i int) string {
		b := []byte(tok)
		b[i] = map[bool]byte{true: 'B', false: 'A'}[b[i] == 'A']
		return string(b)
	}
	stranger := mustKeys("new:" + strings.Repeat("x", 40))
	retired := mustKeys("older:" + strings.Repeat("r", 40))
	for _, tc := range []struct {
		name, token string
		status      int
		says        string
	}{
		{"garbage", "not-a-token", 400, "not complete"},
		{"empty", "", 400, "not complete"},
		{"truncated", good[:len(good)-6], 400, "not complete"},
		{"with a path after it", good + "/x", 400, "not complete"},
		{"tampered signature", tamper(good, len(good)-3), 403, "not valid"},
		{"tampered claims", tamper(good, 20), 403, "not valid"},
		{"forged with the key id", signed(t, stranger, e.claims(actlink.Acknowledge1h)), 403, "not valid"},
		{"unknown key", signed(t, retired, e.claims(actlink.Acknowledge1h)), 403, "not valid"},
		{"expired", signed(t, actKeys, with(func(c *actlink.Claims) { c.Expires = time.Now().Add(-time.Minute) })), 410, "expired"},
		{"other project", signed(t, actKeys, with(func(c *actlink.Claims) { c.Group = other })), 404, "no longer exists"},
		{"said global", signed(t, actKeys, with(func(c *actlink.Claims) { c.Global = true })), 404, "no longer exists"},
		{"alert gone", signed(t, actKeys, with(func(c *actlink.Claims) { c.Alert = herald.NewID(time.Now()) })), 404, "no longer exists"},
		{"closed over a day ago", signed(t, actKeys, with(func(c *actlink.Claims) { c.Alert = closedLongAgo.ID })), 410, "closed more than 24 hours ago"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			for _, method := range []string{"GET", "POST"} {
				wantPage(e.page(method, tc.token, nil), tc.status, tc.says, "Nothing was changed")
			}
			e.unchanged()
		})
	}
	e.t = t
	if logs := e.Logs(); strings.Contains(logs, good[:20]) || !strings.Contains(logs, `"path":"/act/{token}"`) {
		t.Errorf("the log shows a token, or not the redacted path:\n%s", logs)
	}
}

// A GET (or HEAD), as a mail scanner makes, shows the alert and the button and changes nothing.
func TestActLinkGetChangesNothing(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	tok := signed(t, actKeys, e.claims(actlink.Acknowledge4h))
	for range 2 {
		wantPage(e.page("GET", tok, nil), 200, "<h1>Host down: db1.example.com:27017 (replica set rs0)</h1>", "prod", "OPEN",
			"Acknowledge for 4 hours", `<form method="post">`)
	}
	if r := wantPage(e.page("HEAD", tok, nil), 200); len(r.Raw) != 0 {
		t.Errorf("HEAD answered a body of %d bytes", len(r.Raw))
	}
	e.unchanged()
	view := wantPage(e.page("GET", signed(t, actKeys, e.claims(actlink.View)), nil), 200, "Host down")
	if strings.Contains(string(view.Raw), "<form") {
		t.Errorf("a view link's page has a button:\n%s", view.Raw)
	}
}

// The page's style is the one its Content-Security-Policy allows, by hash, and it loads
// nothing else (no script, no external URL).
func TestActPageStyleIsAllowedByItsPolicy(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	r := wantPage(e.page("GET", signed(t, actKeys, e.claims(actlink.Acknowledge1h)), nil), 200)
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindSubmatch(r.Raw)
	if m == nil {
		t.Fatalf("no style in the page:\n%s", r.Raw)
	}
	sum := sha256.Sum256(m[1])
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(r.Header.Get("Content-Security-Policy"), want) {
		t.Errorf("the policy %q does not allow the page's style (%s)", r.Header.Get("Content-Security-Policy"), want)
	}
	for _, banned := range []string{"<script", "http://", "https://", "src="} {
		if strings.Contains(string(r.Raw), banned) {
			t.Errorf("the page holds %q", banned)
		}
	}
}

// The button acknowledges once, in the recipient's name, recorded as from a notice; a second
// press says it is acknowledged already and changes nothing.
func TestActLinkPostAcknowledgesOnce(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	tok := signed(t, actKeys, e.claims(actlink.Acknowledge1h))
	before := time.Now()
	wantPage(e.page("POST", tok, nil), 200, "Acknowledged until", "by ops@example.com")
	a := e.Owner.do("GET", "/groups/"+e.project+"/alerts/"+e.alert.ID, nil).wantStatus(200)
	until, _ := herald.ParseTime(a.str("acknowledgedUntil"))
	if a.str("acknowledgingUsername") != "ops@example.com" || a.str("acknowledgementComment") != "Acknowledged from a notice's link." ||
		until.Before(before.Add(59*time.Minute)) || until.After(time.Now().Add(time.Hour)) {
		t.Fatalf("the alert is not acknowledged for an hour by the recipient: %s", a.Raw)
	}
	second := wantPage(e.page("POST", tok, nil), 200, "Already acknowledged until", "by ops@example.com", "Nothing was changed")
	if strings.Contains(string(second.Raw), "<form") {
		t.Errorf("an acknowledged alert's page still has the button")
	}
	if again := e.Owner.do("GET", "/groups/"+e.project+"/alerts/"+e.alert.ID, nil); again.str("acknowledgedUntil") != a.str("acknowledgedUntil") {
		t.Errorf("the second press moved the acknowledgement: %s, was %s", again.str("acknowledgedUntil"), a.str("acknowledgedUntil"))
	}
	evs := auditEvents(t, e.env, store.EventScope{GroupID: e.project}, herald.EventAlertAcknowledged)
	if len(evs) != 1 {
		t.Fatalf("%d acknowledgement events, want 1", len(evs))
	}
	if ev := evs[0]; ev.Username != "ops@example.com" || ev.Raw["source"] != api.SourceNotice || ev.Raw["action"] != "acknowledge1h" ||
		ev.AlertID != e.alert.ID || ev.APIKeyID != "" {
		t.Errorf("the event does not say the recipient acted from a notice: %+v", ev)
	}

	// Withdrawn by its link, then a second press says there is nothing to withdraw.
	un := signed(t, actKeys, e.claims(actlink.Unacknowledge))
	wantPage(e.page("GET", un, nil), 200, "Withdraw the acknowledgement")
	wantPage(e.page("POST", un, nil), 200, "Acknowledgement withdrawn")
	wantPage(e.page("POST", un, nil), 200, "not acknowledged", "Nothing was changed")
	if evs := auditEvents(t, e.env, store.EventScope{GroupID: e.project}, herald.EventAlertUnacknowledged); len(evs) != 1 || evs[0].Raw["source"] != api.SourceNotice {
		t.Errorf("want one withdrawal event from a notice, got %+v", evs)
	}
	if strings.Contains(e.Logs(), tok[:20]) || strings.Contains(e.Logs(), un[:20]) || strings.Contains(e.routes.String(), tok[:20]) {
		t.Error("a token reached the log or the metrics' routes")
	}
	if !strings.Contains(e.routes.String(), "/act/{token}") {
		t.Errorf("the metrics' routes do not name /act/{token}:\n%s", e.routes)
	}
}

// A global alert's link acts on it, recorded as a global event.
func TestActLinkAcknowledgesAGlobalAlert(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	g := saveTestAlert(t, e.env, true, hostDownAlert(e.project, herald.StatusOpen, time.Now().Add(-time.Minute)))
	c := e.claims(actlink.Acknowledge4h)
	c.Global, c.Alert = true, g.ID
	wantPage(e.page("POST", signed(t, actKeys, c), nil), 200, "Acknowledged until")
	a := e.Owner.do("GET", "/globalAlerts/"+g.ID, nil).wantStatus(200)
	if a.str("acknowledgingUsername") != "ops@example.com" {
		t.Fatalf("the global alert is not acknowledged by the recipient: %s", a.Raw)
	}
	if evs := auditEvents(t, e.env, store.EventScope{}, herald.EventAlertAcknowledged); len(evs) != 1 || evs[0].Raw["source"] != api.SourceNotice {
		t.Errorf("want one global acknowledgement event from a notice, got %+v", evs)
	}
}

// Acknowledging a closed alert says it closed and changes nothing; a view link's POST acts not.
func TestActLinkOnAClosedAlert(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	closed := hostDownAlert(e.project, herald.StatusClosed, time.Now().Add(-time.Hour))
	closed.Resolved = herald.At(time.Now().Add(-time.Minute))
	e.alert = saveTestAlert(t, e.env, false, closed)
	tok := signed(t, actKeys, e.claims(actlink.Acknowledge1h))
	if r := wantPage(e.page("GET", tok, nil), 200, "CLOSED"); strings.Contains(string(r.Raw), "<form") {
		t.Error("a closed alert's page has a button")
	}
	wantPage(e.page("POST", tok, nil), 409, "The alert has closed", "Nothing was changed")
	wantPage(e.page("POST", signed(t, actKeys, e.claims(actlink.View)), nil), 400, "only shows the alert", "Nothing was changed")
	e.unchanged()
}

// A POST another site's page makes (as a browser marks it), or with a body larger than the
// form's, is refused and changes nothing; so is a method the page does not answer.
func TestActLinkRefusesCrossSitePosts(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	tok := signed(t, actKeys, e.claims(actlink.Acknowledge1h))
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Sec-Fetch-Site": {"same-site"}},
		{"Origin": {"https://evil.example"}},
	} {
		wantPage(e.page("POST", tok, h), 403, "another site")
	}
	req, _ := http.NewRequest("POST", e.srv.URL+api.ActPath+tok, strings.NewReader(strings.Repeat("a=b&", 4096)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wantPage(readResponse(t, resp), 413, "too large")
	r := wantPage(e.page("DELETE", tok, nil), 405)
	if r.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
	e.unchanged()
	// The page's own button, as a browser sends it, acts.
	wantPage(e.page("POST", tok, http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {e.srv.URL}}), 200, "Acknowledged until")
}

// Links that do not work count in the failed-authentication throttle: after PerPair from one
// address even a good link is answered 429 there; another address is not held back.
func TestActLinkFailuresAreThrottled(t *testing.T) {
	e := newActEnv(t, testLimits)
	good := signed(t, actKeys, e.claims(actlink.Acknowledge1h))
	for range testLimits.PerPair {
		wantPage(e.page("GET", good[:len(good)-4], nil), 400)
	}
	r := wantPage(e.page("POST", good, nil), 429, "Too many")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	e.unchanged()
	other := e.Owner.from(t, "127.0.0.2")
	req, _ := http.NewRequest("GET", e.srv.URL+api.ActPath+good, nil)
	resp, err := other.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wantPage(readResponse(t, resp), 200, "Acknowledge for 1 hour")
}
