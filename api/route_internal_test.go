package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// ServeHTTP calls a matched endpoint itself with the values mounted.values found: they must be
// the mux's own, for every path the mux matches to the route without a redirect, and values
// must refuse (leave to the mux) what it cannot split like the pattern.
func TestMountedValuesAreTheMuxs(t *testing.T) {
	patterns := []string{
		"GET /api/public/v1.0/groups/{groupId}/alerts/{alertId}",
		"GET /api/public/v1.0/groups/{groupId}/hosts/{hostId}/disks/{partitionName}",
		"POST /api/public/v1.0/groups/{groupId}/maintenanceWindows/",
		"GET /api/public/v1.0/globalAlerts",
		"GET /prometheus/groups/{groupId}/-/healthy",
		"GET /files/{rest...}",
		"GET /exact/{id}/{$}",
	}
	paths := []string{
		"/api/public/v1.0/groups/abc/alerts/def",
		"/api/public/v1.0/groups/a%2Fb/alerts/d%20e",
		"/api/public/v1.0/groups/a%25zz/alerts/x%3F",
		"/api/public/v1.0/groups/%E2%82%AC/alerts/%2e%2e",
		"/api/public/v1.0/groups/abc/alerts/",
		"/api/public/v1.0/groups/abc/alerts/def/",
		"/api/public/v1.0/groups//alerts/def",
		"/api/public/v1.0/groups/g/hosts/h/disks/sda1",
		"/api/public/v1.0/groups/g/hosts/h/disks/data%2Fvol",
		"/api/public/v1.0/groups/g/maintenanceWindows/",
		"/api/public/v1.0/groups/g/maintenanceWindows/more/segments",
		"/api/public/v1.0/groups/g/maintenanceWindows/more",
		"/api/public/v1.0/groups/g/maintenanceWindows",
		"/api/public/v1.0/globalAlerts",
		"/prometheus/groups/g/-/healthy",
		"/files/a/b/c",
		"/exact/1/",
	}
	type seen struct {
		pattern string
		vals    map[string]string
	}
	mux := http.NewServeMux()
	routed := map[string]*mounted{}
	var got seen
	for _, p := range patterns {
		h := &endpointHandler{func(w http.ResponseWriter, r *http.Request) {
			got = seen{p, map[string]string{}}
			for _, name := range routed[p].names {
				got.vals[name] = r.PathValue(name)
			}
		}}
		mux.Handle(p, h)
		routed[p] = mount(p, h, false)
	}
	direct := 0
	for _, method := range []string{"GET", "POST"} {
		for _, path := range paths {
			r := httptest.NewRequest(method, "http://127.0.0.1"+path, nil)
			h, pattern := mux.Handler(r)
			m := routed[pattern]
			if m == nil || h != http.Handler(m.h) {
				continue // a redirect, 404 or 405: the mux answers
			}
			vals, ok := m.values(r.URL.EscapedPath())
			got = seen{}
			mux.ServeHTTP(httptest.NewRecorder(), r)
			if got.pattern != pattern {
				t.Fatalf("%s %s: the mux served %q, Handler said %q", method, path, got.pattern, pattern)
			}
			// A pattern ending in "/" matches any path under it: only its own is split.
			wantDirect := m.direct && (!strings.HasSuffix(pattern, "/") || strings.HasSuffix(path, "maintenanceWindows/"))
			if ok != wantDirect {
				t.Errorf("%s %s (%s): values ok %v, want %v", method, path, pattern, ok, wantDirect)
			}
			if !ok {
				continue
			}
			direct++
			for name, want := range got.vals {
				if v, _ := vals.get(name); v != want {
					t.Errorf("%s %s: %s = %q, the mux's %q", method, path, name, v, want)
				}
			}
			if len(vals.names) != len(got.vals) {
				t.Errorf("%s %s: %d names, the mux's %d", method, path, len(vals.names), len(got.vals))
			}
		}
	}
	if direct < 8 {
		t.Errorf("only %d paths were served directly: the test lost its cases", direct)
	}
}
