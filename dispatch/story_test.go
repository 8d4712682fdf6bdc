package dispatch_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/heraldhq/herald/dispatch"
)

// storyLog is what a test logger observed, looked through by message.
type storyLog struct{ logs *observer.ObservedLogs }

// find is the first line with message msg (and alertId, when given) at level or above.
func (l storyLog) find(msg, alertID string, level zapcore.Level) (observer.LoggedEntry, bool) {
	for _, e := range l.logs.All() {
		if e.Message == msg && e.Level >= level && (alertID == "" || e.ContextMap()["alertId"] == alertID) {
			return e, true
		}
	}
	return observer.LoggedEntry{}, false
}

// wait waits for a line with message msg about alertID at level or above, and returns it.
func (l storyLog) wait(t *testing.T, msg, alertID string, level zapcore.Level, within time.Duration) observer.LoggedEntry {
	t.Helper()
	var e observer.LoggedEntry
	if !eventually(within, func() (ok bool) { e, ok = l.find(msg, alertID, level); return ok }) {
		t.Fatalf("no %s line %q about alert %s within %s; the log:\n%s", level, msg, alertID, within, l)
	}
	return e
}

func (l storyLog) String() string {
	var b strings.Builder
	for _, e := range l.logs.All() {
		fmt.Fprintf(&b, "%s %s %v\n", e.Level, e.Message, e.ContextMap())
	}
	return b.String()
}

// An alert walked through its life with the real engine leaves one line per transition in
// the log at info: opened, a delivery failing and retried, a dead letter, acknowledged, the
// acknowledgement expiring, silenced by a maintenance window, closed; and a second alert
// cancelled. Each line names the project, the alert and its configuration (an attempt's also
// the notification); a delivery that succeeds shows at debug only; no line holds a secret.
func TestAlertStoryIsInTheLog(t *testing.T) {
	const minute = 100 * time.Millisecond
	core, logs := observer.New(zapcore.DebugLevel)
	story := storyLog{logs}
	r := newRigLogged(t, minute, zap.New(core), func(c *dispatch.EngineConfig) { c.DeliveryRetries = 1 })
	r.recv.status = func(n int) int { // the first try fails, and is retried at once
		if n == 1 {
			return 500
		}
		return 200
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	t.Cleanup(refusing.Close)
	refusingURL := refusing.URL + "/hook?token=url-secret-token"
	cfg := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 5),
		map[string]any{"typeName": "WEBHOOK", "webhookUrl": refusingURL, "webhookSecret": webhookSecret, "delayMin": 0, "intervalMin": 60}}})

	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	opened := story.wait(t, "alert opened", id, zapcore.InfoLevel, 5*time.Second)
	if f := opened.ContextMap(); f["groupId"] != r.project || f["alertConfigId"] != cfg || f["eventTypeName"] != "HOST_DOWN" {
		t.Errorf("the opening names %v, want project %s, configuration %s", f, r.project, cfg)
	}
	retrying := story.wait(t, "delivery attempt failed: retrying", id, zapcore.InfoLevel, 5*time.Second)
	if f := retrying.ContextMap(); f["notification"] != int64(0) || f["typeName"] != "WEBHOOK" || f["statusCode"] != int64(500) || f["alertConfigId"] != cfg {
		t.Errorf("the retry names %v", f)
	}
	delivered := story.wait(t, "delivery attempt delivered", id, zapcore.DebugLevel, 5*time.Second)
	if delivered.Level != zapcore.DebugLevel {
		t.Errorf("a delivery logged at %s, want debug", delivered.Level)
	}
	dead := story.wait(t, "delivery failed for good: a dead letter", id, zapcore.WarnLevel, 5*time.Second)
	if f := dead.ContextMap(); f["notification"] != int64(1) || f["statusCode"] != int64(400) {
		t.Errorf("the dead letter names %v", f)
	}

	until := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	r.do("PATCH", "/groups/"+r.project+"/alerts/"+id, map[string]any{"acknowledgedUntil": until.UTC().Format(time.RFC3339)}, 200)
	story.wait(t, "alert acknowledged", id, zapcore.InfoLevel, time.Second)
	story.wait(t, "alert acknowledgement expired", id, zapcore.InfoLevel, time.Until(until)+5*time.Second)

	end := time.Now().Truncate(time.Second).Add(3 * time.Second)
	r.do("POST", "/groups/"+r.project+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"HOST"},
		"startDate": time.Now().Add(-time.Second).UTC().Format(time.RFC3339), "endDate": end.UTC().Format(time.RFC3339)}, 200)
	story.wait(t, "alert silenced by a maintenance window: its notices are withheld", id, zapcore.InfoLevel, 5*time.Second)

	r.observe(hostDown("h1", false))
	story.wait(t, "alert closed", id, zapcore.InfoLevel, 5*time.Second)

	r.observe(hostDown("h2", true))
	var second string
	if !eventually(5*time.Second, func() bool {
		for _, a := range r.alerts("?status=OPEN") {
			second = a["id"].(string)
		}
		return second != ""
	}) {
		t.Fatal("the second alert did not open")
	}
	r.do("PATCH", "/groups/"+r.project+"/alertConfigs/"+cfg, map[string]any{"enabled": false}, 200)
	story.wait(t, "alert cancelled: its configuration was edited, disabled or deleted", second, zapcore.InfoLevel, 5*time.Second)

	for _, e := range logs.All() {
		line := fmt.Sprintf("%s %v", e.Message, e.ContextMap())
		for _, secret := range []string{webhookSecret, "url-secret-token", "team=ops"} {
			if strings.Contains(line, secret) {
				t.Errorf("a secret (%s) in the log: %s", secret, line)
			}
		}
		f := e.ContextMap()
		if strings.HasPrefix(e.Message, "alert ") || strings.HasPrefix(e.Message, "delivery ") {
			if f["groupId"] == nil || f["alertId"] == nil || f["alertConfigId"] == nil {
				t.Errorf("a line of the story without project, alert or configuration: %s", line)
			}
		}
	}
}
