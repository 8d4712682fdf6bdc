package api_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// keptKeyOnTwo is a key with roles in project p that authenticated with both API processes of
// e (so that both keep it), and how to send it a request with nonce count nc at either.
type keptKeyOnTwo struct {
	t           *testing.T
	e           *env
	key         *client
	nonce       string
	first, next string // the two processes' API bases
}

func keepOnTwo(t *testing.T, e *env, k *client, p string) *keptKeyOnTwo {
	t.Helper()
	kk := &keptKeyOnTwo{t: t, e: e, key: k, first: e.Base, next: secondAPI(t, e) + api.BasePath}
	kk.nonce = challengeParam(raw(t, "GET", e.Base+"/groups/"+p, "", nil).Header.Get("WWW-Authenticate"), "nonce")
	kk.do(kk.first, 1, "GET", "/groups/"+p, nil).wantStatus(http.StatusOK)
	kk.do(kk.next, 2, "GET", "/groups/"+p, nil).wantStatus(http.StatusOK)
	return kk
}

// do sends method path (under base) with the key's answer for nonce count nc.
func (kk *keptKeyOnTwo) do(base string, nc int, method, path string, body []byte) *response {
	kk.t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		kk.t.Fatal(err)
	}
	req.Header.Set("Authorization", digestHeader(kk.key.user, kk.key.pass, kk.nonce, nc, method, api.BasePath+path))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		kk.t.Fatal(err)
	}
	return readResponse(kk.t, resp)
}

// A key both API processes keep, its roles changed through one, is authorized by its new roles
// on the other at the very next request: taking a role away takes effect at once everywhere.
func TestKeptKeyRolesChangedOnAnotherProcess(t *testing.T) {
	e, org, p := newProjectEnv(t)
	kk := keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}), p)
	observe := []byte(`[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h1"}]`)
	kk.do(kk.next, 3, "POST", "/groups/"+p+"/observations", observe).wantStatus(http.StatusAccepted)

	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+kk.key.KeyID, map[string]any{"roles": []string{herald.GroupReadOnly}}).wantStatus(http.StatusOK)
	kk.do(kk.next, 4, "POST", "/groups/"+p+"/observations", observe).wantStatus(http.StatusUnauthorized)
	kk.do(kk.first, 5, "POST", "/groups/"+p+"/observations", observe).wantStatus(http.StatusUnauthorized)
	kk.do(kk.next, 6, "GET", "/groups/"+p, nil).wantStatus(http.StatusOK) // still a reader

	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+kk.key.KeyID, map[string]any{"roles": []string{herald.GroupOwner}}).wantStatus(http.StatusOK)
	kk.do(kk.next, 7, "POST", "/groups/"+p+"/observations", observe).wantStatus(http.StatusAccepted)
}

// A nonce count used on one API process is refused on another that keeps the same key: the
// count is checked in Redis on every request, kept credentials or not.
func TestReplayRefusedOnAnotherProcessKeepingTheKey(t *testing.T) {
	e, org, p := newProjectEnv(t)
	kk := keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), p)
	path := "/groups/" + p
	auth := digestHeader(kk.key.user, kk.key.pass, kk.nonce, 7, "GET", api.BasePath+path)
	raw(t, "GET", kk.first+path, auth, nil).wantStatus(http.StatusOK)
	replay := raw(t, "GET", kk.next+path, auth, nil).wantStatus(http.StatusUnauthorized)
	if replay.Header.Get("WWW-Authenticate") == "" {
		t.Error("a replay gets a new challenge")
	}
	raw(t, "GET", kk.first+path, auth, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.next, 6, "GET", path, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.next, 8, "GET", path, nil).wantStatus(http.StatusOK)
	kk.do(kk.first, 8, "GET", path, nil).wantStatus(http.StatusUnauthorized)
}

// A throttled name is refused (429) even with the right answer, on every process that keeps
// it (the processes here throttle at different limits; the failures are counted in Redis).
func TestKeptKeyStillThrottled(t *testing.T) {
	e, org, p := newProjectEnv(t)
	kk := keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), p)
	for i := range api.DefaultAuthLimits.PerPair {
		raw(t, "GET", kk.first+"/groups/"+p, digestHeader(kk.key.user, "wrong", kk.nonce, 100+i, "GET", api.BasePath+"/groups/"+p), nil).
			wantStatus(http.StatusUnauthorized)
	}
	for i, base := range []string{kk.first, kk.next} {
		r := kk.do(base, 200+i, "GET", "/groups/"+p, nil).wantError(http.StatusTooManyRequests, herald.CodeRateLimited)
		if r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	}
}

// A request of a caller the process keeps costs one Redis round trip to authenticate, and
// reading an alert costs no more: the read goes in the check's round trip (readcheck.go).
// Reading it again costs what reading it once does.
func TestKeptCallerRoundTrips(t *testing.T) {
	e, org, p := newProjectEnv(t)
	kk := keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), p)
	hook := &roundTrips{}
	e.Store.Redis().AddHook(hook)
	alert := "/groups/" + p + "/alerts/" + herald.NewID(time.Now())
	for _, nc := range []int{10, 11} { // in order: a count below the last one is a replay
		const want = 1
		before := hook.n.Load()
		kk.do(kk.first, nc, "GET", alert, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
		if got := hook.n.Load() - before; got != want {
			t.Errorf("nc %d: %d Redis round trips, want %d", nc, got, want)
		}
	}
}
