package dispatch_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// pingURL calls a heartbeat's ping URL and checks it was taken; it returns when.
func pingURL(t *testing.T, method, url, body string) time.Time {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ping %s: %d", method, resp.StatusCode)
	}
	return time.Now()
}

// A job pings its heartbeat every 2 minutes (of 200 ms), then stops: HEARTBEAT_MISSED opens
// after its period plus grace, not before, and its webhook arrives; the job pings again and
// the alert closes with its resolution. A failure ping opens HEARTBEAT_FAILED at once.
func TestHeartbeatMissedEndToEnd(t *testing.T) {
	const minute = 200 * time.Millisecond
	r := newRig(t, minute)
	r.config(map[string]any{"eventTypeName": "HEARTBEAT_MISSED", "notifications": []any{r.webhook(0, 60)},
		"matchers": []any{map[string]any{"fieldName": "HEARTBEAT_NAME", "operator": "EQUALS", "value": "backup"}}})
	r.config(map[string]any{"eventTypeName": "HEARTBEAT_FAILED", "notifications": []any{r.webhook(0, 60)}})
	const periodMin, graceMin = 5, 3
	hb := r.do("POST", "/groups/"+r.project+"/heartbeats", map[string]any{"name": "backup", "periodMin": periodMin, "graceMin": graceMin}, 201)
	url := hb["pingUrl"].(string)
	silence := (periodMin + graceMin) * minute

	// The job runs: pings every 2 minutes for 3 periods; nothing is sent.
	var last time.Time
	for end := time.Now().Add(3 * periodMin * minute); time.Now().Before(end); time.Sleep(2 * minute) {
		last = pingURL(t, "GET", url, "")
	}
	if got := r.recv.deliveries(); len(got) != 0 {
		t.Fatalf("deliveries while the job pinged: %+v", got)
	}
	// It stops: the alert opens after period + grace from the last ping, within the poll and
	// the engine's tolerance.
	opened := r.recv.waitCount(t, 1, silence+3*time.Second)[0]
	if opened.Event != "alert.open" || opened.Alert["eventTypeName"] != "HEARTBEAT_MISSED" || opened.Alert["heartbeatName"] != "backup" {
		t.Fatalf("opened: %s %v", opened.Event, opened.Alert)
	}
	if early := last.Add(silence).Sub(opened.At); early > 0 {
		t.Errorf("the alert opened %s before the heartbeat's deadline", early)
	}
	lateBy := opened.At.Sub(last.Add(silence))
	t.Logf("opened %s after the deadline", lateBy)
	if lateBy > 2*time.Second {
		t.Errorf("the alert opened %s after the heartbeat's deadline", lateBy)
	}
	if got := r.do("GET", "/groups/"+r.project+"/heartbeats/"+hb["id"].(string), nil, 200); got["status"] != "DOWN" {
		t.Errorf("status %v, want DOWN", got["status"])
	}
	// The job pings again: the alert closes.
	pingURL(t, "POST", url, "done")
	closed := r.recv.waitCount(t, 2, 5*time.Second)[1]
	if closed.Event != "alert.close" || closed.Alert["id"] != opened.Alert["id"] {
		t.Fatalf("after the ping: %s %v", closed.Event, closed.Alert)
	}
	// A failure opens HEARTBEAT_FAILED at once.
	pingURL(t, "POST", url+"/fail", "error: disk full")
	failed := r.recv.waitCount(t, 3, 5*time.Second)[2]
	if failed.Event != "alert.open" || failed.Alert["eventTypeName"] != "HEARTBEAT_FAILED" {
		t.Fatalf("after the failure: %s %v", failed.Event, failed.Alert)
	}
	// Renamed, the heartbeat's alert about its old name closes.
	r.do("PATCH", "/groups/"+r.project+"/heartbeats/"+hb["id"].(string), map[string]any{"name": "backup-v2"}, 200)
	renamed := r.recv.waitCount(t, 4, 5*time.Second)[3]
	if renamed.Event != "alert.close" || renamed.Alert["id"] != failed.Alert["id"] {
		t.Fatalf("after the rename: %s %v", renamed.Event, renamed.Alert)
	}
}
