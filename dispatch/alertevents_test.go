package dispatch_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// alertEvents are the eventTypeNames of the project's events about alert id, oldest first,
// as the events API shows them without includeRaw.
func (r *rig) alertEvents(id string) []string {
	r.t.Helper()
	var types []string
	for _, v := range r.do("GET", "/groups/"+r.project+"/events", nil, 200)["results"].([]any) {
		if ev := v.(map[string]any); ev["alertId"] == id {
			types = append([]string{ev["eventTypeName"].(string)}, types...)
		}
	}
	return types
}

// An alert's opening and its end read apart in the events API: the opening under the
// condition's type, the close and the cancellation each under a type of its own.
func TestAlertEndIsItsOwnEventType(t *testing.T) {
	const minute = 200 * time.Millisecond
	for _, c := range []struct {
		name, want string
		end        func(r *rig, cfg string)
	}{
		{"closed", herald.EventAlertClosed, func(r *rig, _ string) { r.observe(hostDown("h1", false)) }},
		{"cancelled", herald.EventAlertCancelled, func(r *rig, cfg string) {
			r.do("PATCH", "/groups/"+r.project+"/alertConfigs/"+cfg, map[string]any{"enabled": false}, 200)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, minute)
			cfg := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
			r.observe(hostDown("h1", true))
			id := r.onlyAlert("OPEN")["id"].(string)
			c.end(r, cfg)
			var got []string
			if !eventually(5*time.Second, func() bool { got = r.alertEvents(id); return len(got) == 2 }) {
				t.Fatalf("events of the alert: %v, want its opening and its end", got)
			}
			if got[0] != "HOST_DOWN" || got[1] != c.want {
				t.Errorf("events of the alert %v, want [HOST_DOWN %s]", got, c.want)
			}
		})
	}
}
