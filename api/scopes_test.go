package api_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// An object is reached only through its own project's path: a caller with a role in one
// project (or an owner of its organization) who puts another project's ids under its own
// project's path, or its organization's, reads and changes nothing of that project, whether it
// is in another organization or in the caller's own (which its project role does not reach).
// Each attempt is refused, and the objects are as they were.
func TestNoRouteReachesAnotherProjectsObjects(t *testing.T) {
	e := newEnv(t)
	orgA, orgB := e.org("a"), e.org("b")
	mine := e.project(orgA, "mine")
	now := time.Now()
	callers := map[string]*client{
		"project owner": e.key(orgA, herald.Role{GroupID: mine, RoleName: herald.GroupOwner}),
		"org owner":     e.key(orgA, herald.Role{OrgID: orgA, RoleName: herald.OrgOwner}),
	}
	for _, other := range []struct{ name, org string }{{"another org's", orgB}, {"the same org's", orgA}} {
		p := e.project(other.org, "theirs")
		alert := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, now.Add(-time.Minute)))
		global := saveTestAlert(t, e, true, hostDownAlert(p, herald.StatusOpen, now.Add(-time.Minute)))
		cfg := e.Owner.do("GET", "/groups/"+p+"/alertConfigs", nil).wantStatus(200).results()[0]["id"].(string)
		win := createTestWindow(e, p, time.Hour, "HOST").str("id")
		sil := e.Owner.do("POST", "/prometheus/groups/"+p+"/api/v2/silences", silence("alertname", "A")).wantStatus(200).str("silenceID")
		ev := auditEvents(t, e, store.EventScope{GroupID: p}, "")[0].ID
		ack := map[string]any{"acknowledgedUntil": iso(now.Add(time.Hour))}
		for who, c := range callers {
			if who == "org owner" && other.org == orgA {
				continue // the organization's owner owns that project too
			}
			for _, rq := range []struct {
				method, path string
				body         any
			}{
				{"GET", "/groups/" + mine + "/alerts/" + alert.ID, nil},
				{"PATCH", "/groups/" + mine + "/alerts/" + alert.ID, ack},
				{"PATCH", "/groups/" + mine + "/alerts/" + global.ID, ack},
				{"GET", "/groups/" + mine + "/alerts/" + alert.ID + "/deliveries", nil},
				{"GET", "/groups/" + mine + "/alerts/" + global.ID + "/deliveries", nil},
				{"GET", "/groups/" + mine + "/alertConfigs/" + cfg, nil},
				{"GET", "/groups/" + mine + "/alertConfigs/" + cfg + "/alerts", nil},
				{"PATCH", "/groups/" + mine + "/alertConfigs/" + cfg, map[string]any{"enabled": false}},
				{"DELETE", "/groups/" + mine + "/alertConfigs/" + cfg, nil},
				{"GET", "/groups/" + mine + "/maintenanceWindows/" + win, nil},
				{"PATCH", "/groups/" + mine + "/maintenanceWindows/" + win, map[string]any{"description": "mine now"}},
				{"DELETE", "/groups/" + mine + "/maintenanceWindows/" + win, nil},
				{"GET", "/groups/" + mine + "/events/" + ev, nil},
				{"GET", "/orgs/" + orgA + "/events/" + ev, nil},
				{"GET", "/prometheus/groups/" + mine + "/api/v2/silence/" + sil, nil},
				{"POST", "/prometheus/groups/" + mine + "/api/v2/silences", func() map[string]any { s := silence("alertname", "B"); s["id"] = sil; return s }()},
				{"DELETE", "/prometheus/groups/" + mine + "/api/v2/silence/" + sil, nil},
			} {
				// 404 as for an unknown id (401 where the caller has no role at the path at all).
				if r := c.do(rq.method, rq.path, rq.body); r.Status != 404 && r.Status != 401 {
					t.Errorf("%s, %s %s with %s object: %d, want 404: %s", who, rq.method, rq.path, other.name, r.Status, r.Raw)
				}
			}
		}
		if a := e.Owner.do("GET", "/groups/"+p+"/alerts/"+alert.ID, nil).wantStatus(200); a.Body["acknowledgedUntil"] != nil {
			t.Errorf("%s alert was acknowledged: %s", other.name, a.Raw)
		}
		if g := e.Owner.do("GET", "/globalAlerts/"+global.ID, nil).wantStatus(200); g.Body["acknowledgedUntil"] != nil {
			t.Errorf("%s global alert was acknowledged: %s", other.name, g.Raw)
		}
		if c := e.Owner.do("GET", "/groups/"+p+"/alertConfigs/"+cfg, nil).wantStatus(200); c.Body["enabled"] != true {
			t.Errorf("%s configuration was changed: %s", other.name, c.Raw)
		}
		if w := e.Owner.do("GET", "/groups/"+p+"/maintenanceWindows/"+win, nil).wantStatus(200); w.Body["description"] != nil {
			t.Errorf("%s window was changed: %s", other.name, w.Raw)
		}
		if s := e.Owner.do("GET", "/prometheus/groups/"+p+"/api/v2/silence/"+sil, nil).wantStatus(200); s.str("comment") != "deploy" {
			t.Errorf("%s silence was changed: %s", other.name, s.Raw)
		}
	}
}
