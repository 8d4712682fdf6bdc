package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store/storetest"
)

// The embedded store answers INFO with the fields of a real Redis that asynqmon shows
// (miniredis alone has none of them: the page said "undefined days" and "NaNhNaNmNaNs ago"),
// and still answers the sections it answered before.
func TestEmbeddedInfoHasWhatAsynqmonShows(t *testing.T) {
	rdb := storetest.Embedded(t)
	ctx := context.Background()
	raw, err := rdb.Info(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	info := parseInfo(raw)
	for _, field := range []string{"uptime_in_days", "uptime_in_seconds", "connected_clients", "connected_slaves", "rdb_changes_since_last_save", "rdb_last_save_time"} {
		if _, err := strconv.ParseInt(info[field], 10, 64); err != nil {
			t.Errorf("INFO %s = %q, want a whole number", field, info[field])
		}
	}
	for _, field := range []string{"redis_version", "used_memory_human", "used_memory_peak_human", "mem_fragmentation_ratio"} {
		if info[field] == "" {
			t.Errorf("INFO has no %s", field)
		}
	}
	if saved, _ := strconv.ParseInt(info["rdb_last_save_time"], 10, 64); time.Since(time.Unix(saved, 0)) > time.Minute {
		t.Errorf("rdb_last_save_time %d is not the store's start", saved)
	}
	clients, err := rdb.Info(ctx, "clients").Result()
	if err != nil || !strings.Contains(clients, "connected_clients:") || strings.Contains(clients, "uptime") {
		t.Errorf("INFO clients = %q, %v: want the clients section only", clients, err)
	}
}

// parseInfo reads INFO's "field:value" lines.
func parseInfo(raw string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(raw) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}
