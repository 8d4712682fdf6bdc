package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// TestMonitoringSettings: asynqmon is served read-only by default, and the settings turn it
// off or let it change the queues.
func TestMonitoringSettings(t *testing.T) {
	st := store.New(storetest.Redis(t))
	for _, tc := range []struct {
		name             string
		env              map[string]string
		args             []string
		served, readOnly bool
	}{
		{name: "defaults", served: true, readOnly: true},
		{name: "off", env: map[string]string{"HERALD_MONITORING": "false"}},
		{name: "writable", env: map[string]string{"HERALD_MONITORING_WRITE": "true"}, served: true},
		{name: "flag wins", env: map[string]string{"HERALD_MONITORING_WRITE": "true"}, args: []string{"-monitoring-write=false"}, served: true, readOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := parseServing("api", "the HTTP API", ":8080", tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			h := c.monitoringSettings.handler(st)
			if (h != nil) != tc.served {
				t.Fatalf("asynqmon served: %t, want %t", h != nil, tc.served)
			}
			if h == nil {
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/monitoring/", nil))
			if flag := fmt.Sprintf(`window.FLAG_READ_ONLY="%t"`, tc.readOnly); !strings.Contains(rec.Body.String(), flag) {
				t.Errorf("asynqmon's page does not say %s:\n%s", flag, rec.Body.String())
			}
		})
	}
}
