package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
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

// Under /monitoring/ any global role may look; changing queues takes a global owner or
// monitoring administrator; /monitoring redirects to the console.
func TestMonitoringRoles(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	e := newEnvWith(t, api.Config{Monitoring: console})
	reader := e.key("", herald.Role{RoleName: herald.GlobalReadOnly})
	admin := e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin})
	at := func(c *client) *client { return &client{t: t, base: e.srv.URL, user: c.user, pass: c.pass} }
	if r := at(reader).do("GET", "/monitoring/api/queues/engine", nil).Status; r != 204 {
		t.Errorf("a global read-only key looking: %d", r)
	}
	if r := at(reader).do("DELETE", "/monitoring/api/queues/engine", nil).Status; r != 401 {
		t.Errorf("a global read-only key changing queues: %d, want 401", r)
	}
	if r := at(admin).do("DELETE", "/monitoring/api/queues/engine", nil).Status; r != 204 {
		t.Errorf("a monitoring admin changing queues: %d", r)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(e.srv.URL + "/monitoring")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != api.MonitoringPath {
		t.Errorf("/monitoring: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
