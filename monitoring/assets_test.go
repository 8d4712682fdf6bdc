package monitoring_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/monitoring"
	"github.com/heraldhq/herald/store/storetest"
)

// asynqmon's page, as Herald serves it, links nothing outside Herald: its web-font links to a
// public CDN are cut, and the rest of the page is intact.
func TestPageLinksNoWebFonts(t *testing.T) {
	r := newRig(t, true)
	c := r.client("", herald.Role{RoleName: herald.GlobalReadOnly})
	for _, path := range []string{"/monitoring/", "/monitoring/queues/engine"} {
		resp, body := get(t, c, r.URL+path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<div id="root">`) {
			t.Fatalf("GET %s: %d, want asynqmon's page:\n%s", path, resp.StatusCode, body)
		}
		if strings.Contains(body, "googleapis") || strings.Contains(body, "https://") {
			t.Errorf("GET %s: the page still links outside Herald:\n%s", path, body)
		}
		if n, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || n != len(body) {
			t.Errorf("GET %s: Content-Length %q for a page of %d bytes", path, resp.Header.Get("Content-Length"), len(body))
		}
	}
}

// On herald dev's embedded store, asynqmon's Redis page has the figures it shows (it said
// "undefined days" and "NaNhNaNmNaNs ago" when the store's INFO lacked them).
func TestRedisInfoOnTheEmbeddedStore(t *testing.T) {
	rdb := storetest.Embedded(t)
	w := httptest.NewRecorder()
	monitoring.New(rdb, true).ServeHTTP(w, httptest.NewRequest("GET", "/monitoring/api/redis_info", nil))
	var got struct{ Info map[string]string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("redis_info: %d %v: %s", w.Code, err, w.Body)
	}
	for _, field := range []string{"redis_version", "uptime_in_days", "connected_clients", "used_memory_human", "used_memory_peak_human", "rdb_last_save_time", "rdb_changes_since_last_save"} {
		if got.Info[field] == "" {
			t.Errorf("asynqmon's redis_info has no %s on the embedded store: %v", field, got.Info)
		}
	}
}
