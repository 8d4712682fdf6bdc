package monitoring_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
)

// get fetches url with c and returns the status and body.
func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	return do(t, c, http.MethodGet, url)
}

func do(t *testing.T, c *http.Client, method, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestMonitoringIsForGlobalRolesOnly(t *testing.T) {
	r := newRig(t, true)
	r.enqueue(dispatch.QueueEngine)
	console, queues := r.URL+"/monitoring/", r.URL+"/monitoring/api/queues"

	anonymous := &http.Client{Timeout: 10 * time.Second}
	for _, url := range []string{console, queues} {
		resp, body := get(t, anonymous, url)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Digest ") {
			t.Errorf("GET %s without credentials: %d %q %s, want 401 and a Digest challenge", url, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}

	orgID, groupID := herald.NewID(time.Now()), herald.NewID(time.Now())
	for name, c := range map[string]*http.Client{
		"org owner":     r.client(orgID, herald.Role{OrgID: orgID, RoleName: herald.OrgOwner}),
		"project owner": r.client(orgID, herald.Role{GroupID: groupID, RoleName: herald.GroupOwner}),
	} {
		for _, url := range []string{console, queues} {
			resp, body := get(t, c, url)
			var e struct{ ErrorCode string }
			_ = json.Unmarshal([]byte(body), &e)
			if resp.StatusCode != http.StatusUnauthorized || e.ErrorCode != herald.CodeUserUnauthorized {
				t.Errorf("GET %s as %s: %d %s, want 401 %s", url, name, resp.StatusCode, body, herald.CodeUserUnauthorized)
			}
		}
	}

	viewer := r.client("", herald.Role{RoleName: herald.GlobalReadOnly})
	resp, body := get(t, viewer, console)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<script src="/monitoring/static/js/`) {
		t.Errorf("GET %s as a global read-only key: %d, want 200 and asynqmon's page rooted at /monitoring:\n%s", console, resp.StatusCode, body)
	}
	resp, body = get(t, viewer, queues)
	var list struct{ Queues []struct{ Queue string } }
	if err := json.Unmarshal([]byte(body), &list); resp.StatusCode != http.StatusOK || err != nil ||
		len(list.Queues) != 1 || list.Queues[0].Queue != dispatch.QueueEngine {
		t.Errorf("GET %s as a global read-only key: %d %s, want 200 listing the queue %q", queues, resp.StatusCode, body, dispatch.QueueEngine)
	}
}

// TestReadOnlyRefusesChanges deletes a pending task through asynqmon's API, as its delete
// button does: refused while read-only, done when writing is allowed. The page tells the
// browser which, so that it shows the buttons only when they work.
func TestReadOnlyRefusesChanges(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		r := newRig(t, readOnly)
		task := r.enqueue(dispatch.QueueEngine)
		owner := r.client("", herald.Role{RoleName: herald.GlobalOwner})
		flag := fmt.Sprintf(`window.FLAG_READ_ONLY="%t"`, readOnly)
		if resp, body := get(t, owner, r.URL+"/monitoring/"); resp.StatusCode != http.StatusOK || !strings.Contains(body, flag) {
			t.Errorf("GET /monitoring/: %d, want 200 and %s in:\n%s", resp.StatusCode, flag, body)
		}
		resp, body := do(t, owner, http.MethodDelete, r.URL+"/monitoring/api/queues/"+task.Queue+"/pending_tasks/"+task.ID)

		inspector := asynq.NewInspectorFromRedisClient(r.rdb)
		_, err := inspector.GetTaskInfo(task.Queue, task.ID)
		switch {
		case readOnly && (resp.StatusCode != http.StatusMethodNotAllowed || err != nil):
			t.Errorf("read-only: DELETE answered %d %q and the task's lookup says %v, want 405 and the task kept", resp.StatusCode, body, err)
		case !readOnly && (resp.StatusCode != http.StatusNoContent || err == nil):
			t.Errorf("writable: DELETE answered %d %q and the task's lookup says %v, want 204 and the task gone", resp.StatusCode, body, err)
		}
	}
}
