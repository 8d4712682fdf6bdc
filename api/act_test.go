package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
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
	"github.com/heraldhq/herald/store/storetest"
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
	return e.send(method, tok, "", h)
}

// send requests /act/{path} (a token, and maybe a query) with method, headers h, and form as
// a POST's body.
func (e *actEnv) send(method, path, form string, h http.Header) *response {
	e.t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(form)
	}
	req, err := http.NewRequest(method, e.srv.URL+api.ActPath+path, body)
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

// saveDigest keeps a digest of e's project, sent to ops@example.com, of entries.
func (e *actEnv) saveDigest(entries []herald.DigestEntry) herald.Digest {
	e.t.Helper()
	d := herald.Digest{ID: herald.NewID(time.Now()), GroupID: e.project, Kind: "EMAIL", Recipient: "ops@example.com",
		Created: herald.At(time.Now().Add(-5 * time.Minute).Truncate(time.Second)), Entries: entries}
	if err := e.Store.SaveDigest(context.Background(), d, time.Hour); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// digestClaims are those of the link to digest d.
func digestClaims(d herald.Digest) actlink.Claims {
	return actlink.Claims{Group: d.GroupID, Alert: d.ID, Action: actlink.ViewDigest, Recipient: d.Recipient,
		Expires: time.Now().Add(time.Hour).Truncate(time.Second)}
}

// openAlerts saves n open HOST_DOWN alerts of e's project (global ones if global), each on a
// host of its own, and returns them.
func (e *actEnv) openAlerts(n int, global bool) []herald.Alert {
	e.t.Helper()
	out := make([]herald.Alert, n)
	for i := range out {
		a := hostDownAlert(e.project, herald.StatusOpen, time.Now().Add(-time.Duration(i+1)*time.Minute))
		a.HostnameAndPort = fmt.Sprintf("host%d.example.com:27017", i)
		out[i] = saveTestAlert(e.t, e.env, global, a)
	}
	return out
}

// rowsOf is the alert ids a digest page lists, in order ("-" for an alert gone), and the
// number of its rows.
var digestRow = regexp.MustCompile(`<tr><td><span class="notice (opened|resolved)">[^<]*</span></td>\n(?:<td>[^<]*<br><small>[^<]*· ([0-9a-f]{24})</small>|<td colspan="4">)`)

func rowsOf(r *response) (ids []string, kinds []string) {
	for _, m := range digestRow.FindAllStringSubmatch(string(r.Raw), -1) {
		kinds = append(kinds, m[1])
		if m[2] == "" {
			m[2] = "-"
		}
		ids = append(ids, m[2])
	}
	return ids, kinds
}

// wantAcks checks each alert's acknowledgement as the store has it: by who ("" for none).
func (e *actEnv) wantAcks(global bool, who string, alerts ...herald.Alert) {
	e.t.Helper()
	for _, a := range alerts {
		var got herald.Alert
		var err error
		if global {
			got, err = e.Store.GlobalAlert(context.Background(), a.ID)
		} else {
			got, err = e.Store.Alert(context.Background(), a.GroupID, a.ID)
		}
		if err != nil {
			e.t.Fatal(err)
		}
		if got.AcknowledgingUsername != who || (who == "") != got.AcknowledgedUntil.IsZero() {
			e.t.Errorf("alert %s acknowledged by %q until %v, want by %q", a.ID, got.AcknowledgingUsername, got.AcknowledgedUntil, who)
		}
	}
}

// A digest of a few hundred alerts is listed 200 a page, in the digest's order, openings and
// resolutions told apart, with links to the pages around; each alert as it is now. A global
// alert of another project is listed as gone, without a word of it. Reading changes nothing.
func TestDigestPageListsItsAlertsAPageAtATime(t *testing.T) {
	e := newActEnv(t, store.AuthLimits{Window: time.Minute, PerPair: 3, PerAddress: 1000, PerName: 1000})
	alerts := e.openAlerts(440, false)
	global := e.openAlerts(1, true)[0]
	foreign := hostDownAlert(e.env.project(e.org("other"), "other"), herald.StatusOpen, time.Now())
	foreign.HostnameAndPort = "secret.other.example:27017"
	saveTestAlert(t, e.env, true, foreign)
	closed := hostDownAlert(e.project, herald.StatusClosed, time.Now().Add(-time.Hour))
	closed.Resolved = herald.At(time.Now().Add(-time.Minute))
	saveTestAlert(t, e.env, false, closed)

	var entries []herald.DigestEntry
	var want []string
	for i, a := range alerts {
		entries = append(entries, herald.DigestEntry{AlertID: a.ID})
		want = append(want, a.ID)
		if i == 199 { // the second page begins with these
			entries = append(entries, herald.DigestEntry{AlertID: global.ID, Global: true}, herald.DigestEntry{AlertID: foreign.ID, Global: true},
				herald.DigestEntry{AlertID: closed.ID, Ended: true}, herald.DigestEntry{AlertID: herald.NewID(time.Now())})
			want = append(want, global.ID, "-", closed.ID, "-")
		}
	}
	d := e.saveDigest(entries) // 444 entries: pages of 200, 200 and 44
	tok := signed(t, actKeys, digestClaims(d))

	first := wantPage(e.page("GET", tok, nil), 200, "<h1>443 alerts opened, 1 alert resolved</h1>", "prod",
		"ops@example.com by EMAIL", "Alerts 1 to 200 of 444", "Page 1 of 3", `href="?page=2"`,
		`<button type="submit" name="for" value="1h">Acknowledge all for 1 hour</button>`, "Acknowledge all for 4 hours",
		"Host down: host0.example.com:27017 (replica set rs0)", `class="wide"`)
	if strings.Contains(string(first.Raw), "Previous page") {
		t.Error("the first page links to a previous one")
	}
	for _, banned := range []string{"<script", "http://", "https://", "src=", tok[:20]} {
		if strings.Contains(string(first.Raw), banned) {
			t.Errorf("the page holds %q", banned)
		}
	}
	var got []string
	for page := 1; page <= 3; page++ {
		r := wantPage(e.page("GET", fmt.Sprintf("%s?page=%d", tok, page), nil), 200, fmt.Sprintf("Page %d of 3", page))
		ids, kinds := rowsOf(r)
		if wantRows := []int{200, 200, 44}[page-1]; len(ids) != wantRows {
			t.Fatalf("page %d lists %d alerts, want %d", page, len(ids), wantRows)
		}
		if page == 2 {
			if kinds[1] != "opened" || kinds[2] != "resolved" || kinds[4] != "opened" {
				t.Errorf("page 2 does not tell the closed alert's resolution from the openings: %v", kinds[:6])
			}
			wantPage(r, 200, `href="?page=1"`, `href="?page=3"`, "CLOSED", "This alert no longer exists")
		}
		got = append(got, ids...)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the pages list\n%v\nwant\n%v", got, want)
	}
	last := wantPage(e.page("GET", tok+"?page=3", nil), 200, "Alerts 401 to 444 of 444", `href="?page=2"`)
	if strings.Contains(string(last.Raw), "Next page") {
		t.Error("the last page links to a next one")
	}

	// Page numbers changed by hand answer a clear 4xx; they are not failed links (the throttle
	// allows 3 here).
	for _, tc := range []struct {
		query  string
		status int
		says   string
	}{
		{"?page=0", 400, "not valid"}, {"?page=-1", 400, "not valid"}, {"?page=abc", 400, "not valid"},
		{"?page=", 400, "not valid"}, {"?page=1.5", 400, "not valid"}, {"?page=1&page=2", 400, "not valid"},
		{"?page=%00", 400, "not valid"}, {"?page=4", 404, "has 3 pages"}, {"?page=999999999", 404, "has 3 pages"},
		{"?page=99999999999999999999999999999999", 404, "has 3 pages"},
	} {
		for _, method := range []string{"GET", "POST"} {
			wantPage(e.send(method, tok+tc.query, "for=1h", nil), tc.status, tc.says, "Nothing was changed")
		}
	}
	if r := wantPage(e.page("HEAD", tok+"?page=2", nil), 200); len(r.Raw) != 0 {
		t.Errorf("HEAD answered a body of %d bytes", len(r.Raw))
	}
	wantPage(e.page("GET", tok, nil), 200, "Page 1 of 3")

	for _, page := range []*response{first, last} {
		if strings.Contains(string(page.Raw), "secret.other.example") || strings.Contains(string(page.Raw), foreign.ID) {
			t.Fatal("the page shows another project's alert")
		}
	}
	e.wantAcks(false, "", alerts...)
	e.wantAcks(true, "", global)
	e.unchanged()
	if evs := auditEvents(t, e.env, store.EventScope{}, herald.EventAlertAcknowledged); len(evs) != 0 {
		t.Errorf("reading the page recorded %d global acknowledgements", len(evs))
	}
	if strings.Contains(e.Logs(), tok[:20]) {
		t.Error("a digest token reached the log")
	}
}

// Acknowledge all acknowledges, in the recipient's name, each alert of the digest still open
// and not acknowledged, once, and says what it did; closed, acknowledged, gone and other
// projects' alerts, and alerts outside the digest, are left as they are. A second press
// changes nothing.
func TestDigestAcknowledgeAll(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	open := e.openAlerts(5, false)
	global := e.openAlerts(1, true)
	acked := e.openAlerts(2, false)
	for i, a := range acked {
		a.AcknowledgedUntil, a.AcknowledgingUsername = herald.At(time.Now().Add(time.Hour).Truncate(time.Second)), "ana"
		acked[i] = saveTestAlert(t, e.env, false, a)
	}
	var closed []herald.Alert
	for range 3 {
		c := hostDownAlert(e.project, herald.StatusClosed, time.Now().Add(-time.Hour))
		c.Resolved = herald.At(time.Now().Add(-time.Minute))
		closed = append(closed, saveTestAlert(t, e.env, false, c))
	}
	foreign := hostDownAlert(e.env.project(e.org("other"), "other"), herald.StatusOpen, time.Now())
	saveTestAlert(t, e.env, true, foreign)
	outside := e.openAlerts(1, false) // open, in the project, not in the digest

	var entries []herald.DigestEntry
	for _, a := range append(append(append([]herald.Alert{}, open...), acked...), closed...) {
		entries = append(entries, herald.DigestEntry{AlertID: a.ID})
	}
	entries = append(entries,
		herald.DigestEntry{AlertID: global[0].ID, Global: true},
		herald.DigestEntry{AlertID: foreign.ID, Global: true},    // another project's: never touched
		herald.DigestEntry{AlertID: herald.NewID(time.Now())},    // gone
		herald.DigestEntry{AlertID: open[0].ID},                  // twice: counted once
		herald.DigestEntry{AlertID: closed[0].ID, Ended: true},   // its resolution too
		herald.DigestEntry{AlertID: outside[0].ID, Global: true}, // a project alert said global: not found
	)
	d := e.saveDigest(entries)
	tok := signed(t, actKeys, digestClaims(d))
	before := time.Now()
	wantPage(e.send("POST", tok+"?page=1", "for=1h", nil), 200,
		"Acknowledged 6 alerts until", "; 3 had closed; 2 were already acknowledged; 3 no longer exist",
		"Their notifications stop until then", "Alerts 1 to 16 of 16")

	e.wantAcks(false, "ops@example.com", open...)
	e.wantAcks(true, "ops@example.com", global...)
	e.wantAcks(false, "ana", acked...)
	e.wantAcks(false, "", closed...)
	e.wantAcks(false, "", outside...)
	e.wantAcks(true, "", foreign)
	a := e.Owner.do("GET", "/groups/"+e.project+"/alerts/"+open[3].ID, nil).wantStatus(200)
	until, _ := herald.ParseTime(a.str("acknowledgedUntil"))
	if a.str("acknowledgementComment") != "Acknowledged from a notice's link." ||
		until.Before(before.Add(59*time.Minute)) || until.After(time.Now().Add(time.Hour)) {
		t.Errorf("the alert is not acknowledged for an hour from a notice: %s", a.Raw)
	}
	evs := auditEvents(t, e.env, store.EventScope{GroupID: e.project}, herald.EventAlertAcknowledged)
	evs = append(evs, auditEvents(t, e.env, store.EventScope{}, herald.EventAlertAcknowledged)...)
	if len(evs) != 6 {
		t.Fatalf("%d acknowledgement events, want 6", len(evs))
	}
	for _, ev := range evs {
		if ev.Username != "ops@example.com" || ev.Raw["source"] != api.SourceNotice || ev.Raw["action"] != "acknowledge1h" ||
			ev.Raw["digest"] != d.ID || ev.APIKeyID != "" {
			t.Errorf("the event does not say the recipient acted from the digest: %+v", ev)
		}
	}

	// Again, for 4 hours: every one is acknowledged already; nothing moves.
	wantPage(e.send("POST", tok, "for=4h", nil), 200, "No alert needed acknowledging; 3 had closed; 8 were already acknowledged; 3 no longer exist",
		"Nothing was changed")
	if again := e.Owner.do("GET", "/groups/"+e.project+"/alerts/"+open[3].ID, nil); again.str("acknowledgedUntil") != a.str("acknowledgedUntil") {
		t.Errorf("the second press moved the acknowledgement: %s, was %s", again.str("acknowledgedUntil"), a.str("acknowledgedUntil"))
	}
	if n := len(auditEvents(t, e.env, store.EventScope{GroupID: e.project}, herald.EventAlertAcknowledged)); n != 5 {
		t.Errorf("%d project acknowledgement events after the second press, want 5", n)
	}
}

// Out of time, acknowledge all says how many it did not reach; a second press goes on.
func TestDigestAcknowledgeAllOutOfTime(t *testing.T) {
	e := newActEnv(t, api.DefaultAuthLimits)
	open := e.openAlerts(3, false)
	var entries []herald.DigestEntry
	for _, a := range open {
		entries = append(entries, herald.DigestEntry{AlertID: a.ID})
	}
	tok := signed(t, actKeys, digestClaims(e.saveDigest(entries)))
	api.SetActDigestBudget(t, 0)
	wantPage(e.send("POST", tok, "for=4h", nil), 200, "No alert was acknowledged", "3 alerts were not reached in time", "Press the button again")
	e.wantAcks(false, "", open...)
	api.SetActDigestBudget(t, time.Minute)
	wantPage(e.send("POST", tok, "for=4h", nil), 200, "Acknowledged 3 alerts until")
	e.wantAcks(false, "ops@example.com", open...)
}

// A digest's link that does not work, or a request its page refuses, answers a page with a
// 4xx saying why and changes nothing; a digest's token is no alert's and an alert's token no
// digest's.
func TestDigestLinkRefusesHostileRequests(t *testing.T) {
	e := newActEnv(t, store.AuthLimits{Window: time.Minute, PerPair: 1000, PerAddress: 1000, PerName: 1000})
	d := e.saveDigest([]herald.DigestEntry{{AlertID: e.alert.ID}})
	good := signed(t, actKeys, digestClaims(d))
	other := e.env.project(e.org("other"), "other")
	otherDigest := herald.Digest{ID: herald.NewID(time.Now()), GroupID: other, Kind: "SMS", Recipient: "ops@example.com",
		Entries: []herald.DigestEntry{{AlertID: e.alert.ID}}}
	if err := e.Store.SaveDigest(context.Background(), otherDigest, time.Hour); err != nil {
		t.Fatal(err)
	}
	with := func(change func(*actlink.Claims)) string {
		c := digestClaims(d)
		change(&c)
		return signed(t, actKeys, c)
	}
	tamper := func(tok string, i int) string {
		b := []byte(tok)
		b[i] = map[bool]byte{true: 'B', false: 'A'}[b[i] == 'A']
		return string(b)
	}
	for _, tc := range []struct {
		name, token string
		status      int
		says        string
	}{
		{"truncated", good[:len(good)-6], 400, "not complete"},
		{"tampered signature", tamper(good, len(good)-3), 403, "not valid"},
		{"tampered claims", tamper(good, 20), 403, "not valid"},
		{"forged with the key id", signed(t, mustKeys("new:"+strings.Repeat("x", 40)), digestClaims(d)), 403, "not valid"},
		{"unknown key", signed(t, mustKeys("older:"+strings.Repeat("r", 40)), digestClaims(d)), 403, "not valid"},
		{"expired", with(func(c *actlink.Claims) { c.Expires = time.Now().Add(-time.Minute) }), 410, "expired"},
		{"another project's digest id", with(func(c *actlink.Claims) { c.Alert = otherDigest.ID }), 404, "digest no longer exists"},
		{"this digest said of another project", with(func(c *actlink.Claims) { c.Group = other }), 404, "digest no longer exists"},
		{"said global", with(func(c *actlink.Claims) { c.Global = true }), 404, "digest no longer exists"},
		{"gone", with(func(c *actlink.Claims) { c.Alert = herald.NewID(time.Now()) }), 404, "digest no longer exists"},
		{"an alert's id", with(func(c *actlink.Claims) { c.Alert = e.alert.ID }), 404, "digest no longer exists"},
		{"an alert's link naming the digest", with(func(c *actlink.Claims) { c.Action = actlink.Acknowledge1h }), 404, "alert no longer exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			for _, method := range []string{"GET", "POST"} {
				wantPage(e.send(method, tc.token, "for=1h", nil), tc.status, tc.says, "Nothing was changed")
			}
			e.unchanged()
		})
	}
	e.t = t

	// The good link, asked wrongly.
	for _, form := range []string{"", "for=2h", "for=1h&for=4h", "for=1H", "x=1h", "%zz"} {
		wantPage(e.send("POST", good, form, nil), 400, "Choose how long", "Nothing was changed")
	}
	for _, h := range []http.Header{{"Sec-Fetch-Site": {"cross-site"}}, {"Sec-Fetch-Site": {"same-site"}}, {"Origin": {"https://evil.example"}}} {
		wantPage(e.send("POST", good, "for=1h", h), 403, "another site")
	}
	wantPage(e.send("POST", good, "for=1h&pad="+strings.Repeat("a", 5000), nil), 413, "too large")
	if r := wantPage(e.page("DELETE", good, nil), 405); r.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
	wantPage(e.page("PUT", good+"?page=1", nil), 405)
	e.unchanged()

	// A digest whose time is over is gone.
	brief := herald.Digest{ID: herald.NewID(time.Now()), GroupID: e.project, Recipient: "ops@example.com", Entries: []herald.DigestEntry{{AlertID: e.alert.ID}}}
	if err := e.Store.SaveDigest(context.Background(), brief, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	briefTok := signed(t, actKeys, digestClaims(brief))
	wantPage(e.page("GET", briefTok, nil), 200, "1 alert opened")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := e.page("GET", briefTok, nil)
		if r.Status == http.StatusNotFound {
			wantPage(r, 404, "digest no longer exists", "Nothing was changed")
			wantPage(e.send("POST", briefTok, "for=1h", nil), 404, "digest no longer exists", "Nothing was changed")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the digest's page still answers %d after its time", r.Status)
		}
	}
	e.unchanged()
	// The page's own buttons, as a browser sends them, act.
	wantPage(e.send("POST", good, "for=1h", http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {e.srv.URL}}), 200, "Acknowledged 1 alert until")
}

// Digest links that do not work count in the failed-authentication throttle, with single
// alerts' links: past the limit even a good digest link is answered 429 from that address.
func TestDigestLinkFailuresAreThrottled(t *testing.T) {
	e := newActEnv(t, testLimits)
	d := e.saveDigest([]herald.DigestEntry{{AlertID: e.alert.ID}})
	good := signed(t, actKeys, digestClaims(d))
	gone := digestClaims(d)
	gone.Alert = herald.NewID(time.Now())
	for range testLimits.PerPair {
		wantPage(e.page("GET", signed(t, actKeys, gone), nil), 404)
	}
	if r := wantPage(e.send("POST", good, "for=1h", nil), 429, "Too many"); r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	e.unchanged()
}

// Ten thousand alerts: every page answers, and one press acknowledges them all. Only on a
// real Redis (the embedded store takes minutes over this many).
func TestDigestOfTenThousand(t *testing.T) {
	if testing.Short() || !storetest.Real() {
		t.Skip("ten thousand alerts: a real Redis, not -short")
	}
	e := newActEnv(t, api.DefaultAuthLimits)
	alerts := e.openAlerts(10_000, false)
	entries := make([]herald.DigestEntry, len(alerts))
	for i, a := range alerts {
		entries[i] = herald.DigestEntry{AlertID: a.ID}
	}
	tok := signed(t, actKeys, digestClaims(e.saveDigest(entries)))
	start := time.Now()
	r := wantPage(e.page("GET", tok+"?page=50", nil), 200, "Alerts 9801 to 10000 of 10000", "Page 50 of 50")
	t.Logf("page 50 of 50: %v, %d bytes", time.Since(start), len(r.Raw))
	if ids, _ := rowsOf(r); len(ids) != 200 || ids[199] != alerts[9999].ID {
		t.Fatalf("page 50 lists %d alerts", len(ids))
	}
	wantPage(e.page("GET", tok+"?page=51", nil), 404, "has 50 pages")
	start = time.Now()
	wantPage(e.send("POST", tok, "for=1h", nil), 200, "Acknowledged 10000 alerts until")
	t.Logf("acknowledge all of 10000: %v", time.Since(start))
	ackedBy := 0
	for i := 0; i < len(alerts); i += 500 {
		var ids []string
		for _, a := range alerts[i:min(i+500, len(alerts))] {
			ids = append(ids, a.ID)
		}
		as, err := e.Store.AlertsByID(context.Background(), e.project, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.AcknowledgingUsername == "ops@example.com" {
				ackedBy++
			}
		}
	}
	if ackedBy != len(alerts) {
		t.Errorf("%d of %d alerts acknowledged by the recipient", ackedBy, len(alerts))
	}
}
