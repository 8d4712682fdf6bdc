package api_test

import (
	"testing"
)

// /healthz answers while the process runs, /readyz while Redis answers; neither needs a key.
func TestHealthAndReadiness(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		r := raw(t, "GET", e.srv.URL+path, "", nil).wantStatus(200)
		if r.str("status") == "" {
			t.Errorf("%s: %s", path, r.Raw)
		}
	}
}
