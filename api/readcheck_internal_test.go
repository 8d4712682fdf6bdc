package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Only endpoints that change nothing let a request through before its check: each listed is a
// GET route of the API.
func TestCheckedWithReadAreGETRoutes(t *testing.T) {
	routes := map[string]bool{}
	for _, rt := range (&Server{}).routes() {
		routes[rt.pattern] = true
	}
	for pattern := range checkedWithRead {
		if !routes[pattern] || !strings.HasPrefix(pattern, "GET ") {
			t.Errorf("%s is not a GET route of the API", pattern)
		}
	}
}

// A pending check the endpoint read nothing with is run by settle before anything is
// answered: a fresh count passes (and is recorded), the same count again is refused with a
// challenge.
func TestSettleRunsACheckNothingReadWith(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	s, err := New(ctx, st, nil, zap.NewNop(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	k := KeyFromPair("kept", "", []herald.Role{{RoleName: herald.GlobalReadOnly}}, "pub", "priv-1234", time.Now())
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	kept, err := st.Credential(ctx, "pub")
	if err != nil {
		t.Fatal(err)
	}
	settleOnce := func() (settled, *httptest.ResponseRecorder) {
		rec := httptest.NewRecorder()
		c := &call{s: s, r: httptest.NewRequest(http.MethodGet, "/x", nil), ctx: ctx, pending: &keptCheck{kept: kept, v: s.verifier, remote: "127.0.0.1",
			w: &statusRecorder{ResponseWriter: rec}, attempt: store.AuthAttempt{Name: "pub", Address: "127.0.0.1", Limits: DefaultAuthLimits,
				Kept: kept, Nonce: "n1", Count: 1, CountTTL: time.Minute}}}
		got := s.settle(c)
		if c.pending != nil {
			t.Error("settle left the check pending")
		}
		return got, rec
	}
	if got, rec := settleOnce(); got != checkPassed || rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Fatalf("fresh count: settled %d, answered %d %q; want passed, nothing answered", got, rec.Code, rec.Body)
	}
	got, rec := settleOnce()
	if got != checkFailed || rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("the same count again: settled %d, answered %d (challenge %q); want failed, 401 with a challenge", got, rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}
