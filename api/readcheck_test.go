package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// keptAlertReader is a project p's read-only key that both API processes of e keep, and the
// path of an alert p does not have (read: 404; refused: 401 or 429).
func keptAlertReader(t *testing.T) (e *env, p string, kk *keptKeyOnTwo, path string) {
	t.Helper()
	e = newEnv(t)
	org := e.org("acme")
	p = e.project(org, "prod")
	kk = keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), p)
	return e, p, kk, "/groups/" + p + "/alerts/" + herald.NewID(time.Now())
}

// Reading an alert, whose authentication check goes in the read's round trip, refuses what
// authenticate refuses, on every process that keeps the key: a nonce count used on another
// process gets a challenge and nothing of the alert, and a lower count too.
func TestAlertReadReplayRefusedOnAnotherProcess(t *testing.T) {
	_, _, kk, path := keptAlertReader(t)
	auth := digestHeader(kk.key.user, kk.key.pass, kk.nonce, 7, "GET", api.BasePath+path)
	raw(t, "GET", kk.first+path, auth, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
	replay := raw(t, "GET", kk.next+path, auth, nil).wantStatus(http.StatusUnauthorized)
	if replay.Header.Get("WWW-Authenticate") == "" {
		t.Error("a replay gets a new challenge")
	}
	kk.do(kk.next, 6, "GET", path, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.next, 8, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
}

// A throttled name is refused (429) reading an alert with the right answer, on every process.
func TestAlertReadOfKeptKeyStillThrottled(t *testing.T) {
	_, _, kk, path := keptAlertReader(t)
	for i := range api.DefaultAuthLimits.PerPair {
		raw(t, "GET", kk.first+path, digestHeader(kk.key.user, "wrong", kk.nonce, 100+i, "GET", api.BasePath+path), nil).
			wantStatus(http.StatusUnauthorized)
	}
	for nc, base := range map[int]string{200: kk.first, 201: kk.next} {
		if r := kk.do(base, nc, "GET", path, nil).wantError(http.StatusTooManyRequests, herald.CodeRateLimited); r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	}
}

// A key changed through another process is read again at its next alert read, and the read
// served by what it is now: answered once, its nonce count used once.
func TestAlertReadByKeptKeyChangedOnAnotherProcess(t *testing.T) {
	e, p, kk, path := keptAlertReader(t)
	kk.do(kk.next, 3, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)

	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+kk.key.KeyID, map[string]any{"roles": []string{herald.GroupOwner}}).wantStatus(http.StatusOK)
	kk.do(kk.next, 4, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
	kk.do(kk.next, 4, "GET", path, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.first, 5, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
}
