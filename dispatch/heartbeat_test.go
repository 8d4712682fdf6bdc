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
// the alert closes with its resolution. A failure ping opens HEARTBEAT_FAILED at once, and its
// notices show the end of the ping's body.
func TestHeartbeatMissedEndToEnd(t *testing.T) {
	const minute = 200 * time.Millisecond // newMailRig's
	r, mail := newMailRig(t, nil)
	email := map[string]any{"typeName": "EMAIL", "emailAddress": "ops@example.com", "delayMin": 0, "intervalMin": 60}
	r.config(map[string]any{"eventTypeName": "HEARTBEAT_MISSED", "notifications": []any{r.webhook(0, 60), email},
		"matchers": []any{map[string]any{"fieldName": "HEARTBEAT_NAME", "operator": "EQUALS", "value": "backup"}}})
	r.config(map[string]any{"eventTypeName": "HEARTBEAT_FAILED", "notifications": []any{r.webhook(0, 60), email}})
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
	if !eventually(5*time.Second, func() bool { return len(mail.Mails()) >= 1 }) {
		t.Fatal("no email of the missed heartbeat")
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
	pingURL(t, "POST", url+"/fail", "step 1 of 2\nerror: disk full\n")
	failed := r.recv.waitCount(t, 3, 5*time.Second)[2]
	if failed.Event != "alert.open" || failed.Alert["eventTypeName"] != "HEARTBEAT_FAILED" ||
		!strings.Contains(failed.Alert["humanReadable"].(string), "step 1 of 2\nerror: disk full") {
		t.Fatalf("after the failure: %s %v", failed.Event, failed.Alert)
	}
	var shown bool
	if !eventually(5*time.Second, func() bool {
		for _, m := range mail.Mails() {
			shown = shown || strings.Contains(string(m.Data), "error: disk full")
		}
		return shown
	}) {
		t.Errorf("no email shows the failure's output: %d mails", len(mail.Mails()))
	}
	// Renamed, the heartbeat's alert about its old name closes.
	r.do("PATCH", "/groups/"+r.project+"/heartbeats/"+hb["id"].(string), map[string]any{"name": "backup-v2"}, 200)
	renamed := r.recv.waitCount(t, 4, 5*time.Second)[3]
	if renamed.Event != "alert.close" || renamed.Alert["id"] != failed.Alert["id"] {
		t.Fatalf("after the rename: %s %v", renamed.Event, renamed.Alert)
	}
}
