package api_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// from is c calling from the loopback address ip (127.0.0.0/8 is all loopback on Linux), so
// the server sees another client address.
func (c *client) from(t *testing.T, ip string) *client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &client{t: t, base: c.base, user: c.user, pass: c.pass, KeyID: c.KeyID,
		httpc: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}}
}

// wantRateLimited checks a 429: RATE_LIMITED with the error body and a Retry-After of whole
// seconds within the window.
func (r *response) wantRateLimited(window time.Duration) {
	r.t.Helper()
	r.wantError(http.StatusTooManyRequests, herald.CodeRateLimited)
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < 1 || time.Duration(n)*time.Second > window+time.Second {
		r.t.Errorf("Retry-After %q, want 1..%s", r.Header.Get("Retry-After"), window)
	}
}

var testLimits = store.AuthLimits{Window: time.Minute, PerPair: 3, PerAddress: 8, PerName: 5}

// Wrong guesses at one key from one address are refused after PerPair, even a right one then;
// the key's holder elsewhere is not locked out; once the name failed PerName times, each
// further address gets at most one guess; and the counters are shared by every API process.
func TestFailedAuthenticationsAreThrottled(t *testing.T) {
	e := newEnvWith(t, api.Config{AuthLimits: testLimits})
	victim := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	guess := func(ip string) *response { return guessOnce(t, victim.from(t, ip), "wrong") }
	for range testLimits.PerPair {
		guess("127.0.0.1").wantStatus(401)
	}
	guess("127.0.0.1").wantRateLimited(testLimits.Window)
	victim.from(t, "127.0.0.1").do("GET", "/globalAlerts", nil).wantRateLimited(testLimits.Window)
	victim.from(t, "127.0.0.2").do("GET", "/globalAlerts", nil).wantStatus(200)

	// A second API process on the same Redis knows of those failures.
	other := secondAPI(t, e)
	c := victim.from(t, "127.0.0.1")
	c.base = other + api.BasePath
	c.do("GET", "/globalAlerts", nil).wantRateLimited(testLimits.Window)

	// Two more failures from another address: the name has failed PerName times.
	guess("127.0.0.3").wantStatus(401)
	guess("127.0.0.3").wantStatus(401)
	guess("127.0.0.3").wantRateLimited(testLimits.Window)
	guess("127.0.0.4").wantStatus(401) // a fresh address: one guess
	guess("127.0.0.4").wantRateLimited(testLimits.Window)
	victim.from(t, "127.0.0.2").do("GET", "/globalAlerts", nil).wantStatus(200)
	victim.from(t, "127.0.0.9").do("GET", "/globalAlerts", nil).wantStatus(200)
}

// One address guessing many names is refused after PerAddress failures, whatever the name;
// other addresses are not.
func TestFailedAuthenticationsArePerAddress(t *testing.T) {
	e := newEnvWith(t, api.Config{AuthLimits: testLimits})
	for i := range testLimits.PerAddress {
		c := &client{t: t, base: e.Base, user: "nobody" + strconv.Itoa(i)}
		guessOnce(t, c.from(t, "127.0.0.5"), "x").wantStatus(401)
	}
	e.Owner.from(t, "127.0.0.5").do("GET", "/globalAlerts", nil).wantRateLimited(testLimits.Window)
	e.Owner.from(t, "127.0.0.6").do("GET", "/globalAlerts", nil).wantStatus(200)
}

// guessOnce sends one answer to a fresh challenge for c's user with password: exactly one
// authentication attempt.
func guessOnce(t *testing.T, c *client, password string) *response {
	t.Helper()
	url := c.base + "/globalAlerts"
	send := func(auth string) *response { return rawVia(t, c.httpc, "GET", url, auth, nil) }
	nonce := challengeParam(send("").Header.Get("WWW-Authenticate"), "nonce")
	return send(digestHeader(c.user, password, nonce, 1, "GET", "/api/public/v1.0/globalAlerts"))
}

// secondAPI is another API process on e's Redis; it returns its base URL (without BasePath).
func secondAPI(t *testing.T, e *env) string {
	return apitest.Serve(t, e.Store, dispatch.NewDispatcher(e.Store, herald.SystemClock{}), nil, api.Config{AuthLimits: testLimits}).URL
}

// roundTrips counts the Redis commands and pipelines sent through a client.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// A wrong answer for an existing key, an existing user and an unknown name costs the same
// number of Redis round trips: timing does not tell which names exist.
func TestUnknownNamesCostWhatKnownOnesDo(t *testing.T) {
	e := newEnv(t)
	e.Owner.do("POST", "/users", userBody("jane")).wantStatus(201)
	hook := &roundTrips{}
	e.Store.Redis().AddHook(hook)
	nonce := challengeParam(raw(t, "GET", e.Base+"/globalAlerts", "", nil).Header.Get("WWW-Authenticate"), "nonce")
	cost := func(user string) int64 {
		raw(t, "GET", e.Base+"/globalAlerts", digestHeader(user, "wrong", nonce, 1, "GET", "/api/public/v1.0/globalAlerts"), nil) // scripts loaded
		before := hook.n.Load()
		raw(t, "GET", e.Base+"/globalAlerts", digestHeader(user, "wrong", nonce, 1, "GET", "/api/public/v1.0/globalAlerts"), nil).wantStatus(401)
		return hook.n.Load() - before
	}
	key, user, unknown := cost(e.Owner.user), cost("jane"), cost("nobody")
	if key != user || user != unknown {
		t.Errorf("round trips: key %d, user %d, unknown name %d; want them equal", key, user, unknown)
	}
}

// Failures count per IPv4 address and per IPv6 /64 (which one holder usually has whole).
func TestClientNetwork(t *testing.T) {
	for remote, want := range map[string]string{
		"203.0.113.7":          "203.0.113.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"fe80::1%eth0":         "fe80::/64",
		"::ffff:203.0.113.7":   "::ffff:203.0.113.7",
		"not an address":       "not an address",
	} {
		if got := api.ClientNetwork(remote); got != want {
			t.Errorf("ClientNetwork(%q) = %q, want %q", remote, got, want)
		}
	}
}
