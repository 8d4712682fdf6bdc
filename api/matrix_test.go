package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// Who may call what: each level is the principals (named below) it lets through, written out
// rather than derived from herald.Principal.Can, so that this test is an independent account.
var accessLevels = map[string][]string{
	"readProject":     {"gOwner", "gMon", "gRead", "gUser", "oOwner", "oRead", "pOwner", "pMon", "pUser", "pRead"},
	"writeMonitoring": {"gOwner", "gMon", "oOwner", "pOwner", "pMon"},
	"assignKey":       {"gOwner", "gUser", "oOwner", "pOwner", "pUser"},
	"readOrg":         {"gOwner", "gMon", "gRead", "gUser", "oOwner", "oRead", "oMember"},
	"ownOrg":          {"gOwner", "oOwner"},
	"readGlobal":      {"gOwner", "gMon", "gRead", "gUser"},
	"monitorGlobal":   {"gOwner", "gMon"},
	"adminUsers":      {"gOwner", "gUser"},
	"ownGlobal":       {"gOwner"},
	// The lists of organizations and projects answer everyone, each with what it may read
	// (TestListsShowOnlyWhatTheCallerMayRead).
	"anyone": {"gOwner", "gMon", "gRead", "gUser", "oOwner", "oRead", "oMember", "pOwner", "pMon", "pUser", "pRead", "outside"},
}

// routeAccess is the rule of every route. A route of the route table missing here fails
// TestRoleMatrix: a new endpoint cannot ship without a tested rule.
var routeAccess = map[string]string{
	"PATCH /groups/{groupId}/apiKeys/{apiKeyId}":                 "assignKey",
	"GET /admin/apiKeys":                                         "readGlobal",
	"GET /admin/apiKeys/{apiKeyId}":                              "readGlobal",
	"GET /orgs/{orgId}/apiKeys/{apiKeyId}":                       "ownOrg",
	"POST /admin/apiKeys":                                        "ownGlobal",
	"POST /orgs/{orgId}/apiKeys":                                 "ownOrg",
	"GET /orgs":                                                  "anyone",
	"GET /groups":                                                "anyone",
	"POST /orgs":                                                 "ownGlobal",
	"GET /orgs/{orgId}":                                          "readOrg",
	"POST /groups":                                               "ownOrg",
	"GET /groups/{groupId}":                                      "readProject",
	"GET /groups/{groupId}/alertConfigs":                         "readProject",
	"POST /groups/{groupId}/alertConfigs":                        "writeMonitoring",
	"GET /groups/{groupId}/alertConfigs/{alertConfigId}":         "readProject",
	"PUT /groups/{groupId}/alertConfigs/{alertConfigId}":         "writeMonitoring",
	"PATCH /groups/{groupId}/alertConfigs/{alertConfigId}":       "writeMonitoring",
	"DELETE /groups/{groupId}/alertConfigs/{alertConfigId}":      "writeMonitoring",
	"GET /groups/{groupId}/alertConfigs/{alertConfigId}/alerts":  "readProject",
	"GET /groups/{groupId}/alerts":                               "readProject",
	"GET /groups/{groupId}/alerts/{alertId}":                     "readProject",
	"PATCH /groups/{groupId}/alerts/{alertId}":                   "writeMonitoring",
	"GET /groups/{groupId}/deliveries":                           "readProject",
	"GET /groups/{groupId}/alerts/{alertId}/deliveries":          "readProject",
	"GET /groups/{groupId}/deadLetters":                          "writeMonitoring",
	"POST /groups/{groupId}/deadLetters/{deliveryId}/replay":     "writeMonitoring",
	"GET /globalAlerts":                                          "monitorGlobal",
	"GET /globalAlerts/{alertId}":                                "monitorGlobal",
	"PATCH /globalAlerts/{alertId}":                              "monitorGlobal",
	"GET /globalAlertConfigs":                                    "monitorGlobal",
	"POST /globalAlertConfigs":                                   "monitorGlobal",
	"GET /globalAlertConfigs/{alertConfigId}":                    "monitorGlobal",
	"PATCH /globalAlertConfigs/{alertConfigId}":                  "monitorGlobal",
	"DELETE /globalAlertConfigs/{alertConfigId}":                 "monitorGlobal",
	"GET /globalAlertConfigs/{alertConfigId}/alerts":             "monitorGlobal",
	"POST /users":                                                "adminUsers",
	"GET /users/{userId}":                                        "adminUsers", // or the user itself (TestGetUserSelf)
	"GET /groups/{groupId}/maintenanceWindows":                   "readProject",
	"POST /groups/{groupId}/maintenanceWindows":                  "writeMonitoring",
	"POST /groups/{groupId}/maintenanceWindows/":                 "writeMonitoring",
	"GET /groups/{groupId}/maintenanceWindows/{windowId}":        "readProject",
	"PATCH /groups/{groupId}/maintenanceWindows/{windowId}":      "writeMonitoring",
	"DELETE /groups/{groupId}/maintenanceWindows/{windowId}":     "writeMonitoring",
	"GET /groups/{groupId}/hosts/{hostId}/disks/{partitionName}": "readProject",
	"GET /groups/{groupId}/heartbeats":                           "readProject",
	"POST /groups/{groupId}/heartbeats":                          "writeMonitoring",
	"GET /groups/{groupId}/heartbeats/{heartbeatId}":             "readProject",
	"PATCH /groups/{groupId}/heartbeats/{heartbeatId}":           "writeMonitoring",
	"DELETE /groups/{groupId}/heartbeats/{heartbeatId}":          "writeMonitoring",
	"POST /groups/{groupId}/heartbeats/{heartbeatId}/pause":      "writeMonitoring",
	"POST /groups/{groupId}/heartbeats/{heartbeatId}/resume":     "writeMonitoring",
	"POST /groups/{groupId}/heartbeats/{heartbeatId}/token":      "writeMonitoring",
	"POST /groups/{groupId}/observations":                        "writeMonitoring",
	"GET /groups/{groupId}/integrations":                         "readProject",
	"GET /groups/{groupId}/integrations/{integrationType}":       "readProject",
	"PUT /groups/{groupId}/integrations/{integrationType}":       "writeMonitoring",
	"POST /groups/{groupId}/integrations/{integrationType}":      "writeMonitoring",
	"DELETE /groups/{groupId}/integrations/{integrationType}":    "writeMonitoring",
	"GET /groups/{groupId}/events":                               "readProject",
	"GET /groups/{groupId}/events/{eventId}":                     "readProject",
	"GET /globalEvents":                                          "readGlobal",
	"GET /globalEvents/{eventId}":                                "readGlobal",
	"GET /orgs/{orgId}/events/{eventId}":                         "readOrg",

	"POST /prometheus/groups/{groupId}/api/v2/alerts":                "writeMonitoring",
	"GET /prometheus/groups/{groupId}/api/v2/alerts":                 "readProject",
	"GET /prometheus/groups/{groupId}/api/v2/status":                 "readProject",
	"GET /prometheus/groups/{groupId}/-/healthy":                     "readProject",
	"GET /prometheus/groups/{groupId}/-/ready":                       "readProject",
	"GET /prometheus/groups/{groupId}/api/v2/silences":               "readProject",
	"POST /prometheus/groups/{groupId}/api/v2/silences":              "writeMonitoring",
	"GET /prometheus/groups/{groupId}/api/v2/silence/{silenceId}":    "readProject",
	"DELETE /prometheus/groups/{groupId}/api/v2/silence/{silenceId}": "writeMonitoring",
}

// TestRoleMatrix calls every route of the route table as a holder of each role (and as an
// owner of another organization) and checks that exactly the route's level gets past
// authorization: everyone else is told 401 USER_UNAUTHORIZED.
func TestRoleMatrix(t *testing.T) {
	e := newEnv(t)
	org, otherOrg := e.org("acme"), e.org("globex")
	p := e.project(org, "prod")
	principals := map[string]*client{
		"gOwner":  e.Owner,
		"gMon":    e.key("", herald.Role{RoleName: herald.GlobalMonitoringAdmin}),
		"gRead":   e.key("", herald.Role{RoleName: herald.GlobalReadOnly}),
		"gUser":   e.key("", herald.Role{RoleName: herald.GlobalUserAdmin}),
		"oOwner":  e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner}),
		"oRead":   e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgReadOnly}),
		"oMember": e.key(org, herald.Role{OrgID: org, RoleName: "ORG_MEMBER"}),
		"pOwner":  e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupOwner}),
		"pMon":    e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupMonitoringAdmin}),
		"pUser":   e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupUserAdmin}),
		"pRead":   e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}),
		"outside": e.key(otherOrg, herald.Role{OrgID: otherOrg, RoleName: herald.OrgOwner}),
	}
	for level, names := range accessLevels {
		for _, n := range names {
			if principals[n] == nil {
				t.Fatalf("level %s names unknown principal %s", level, n)
			}
		}
	}
	const none = "5f0000000000000000000000" // an id nothing has: authorization comes before lookups
	ids := strings.NewReplacer("{groupId}", p, "{orgId}", org, "{integrationType}", "WEBHOOK", "{hostId}", "h1",
		"{partitionName}", "sda1", "{alertConfigId}", none, "{alertId}", none, "{windowId}", none,
		"{apiKeyId}", none, "{eventId}", none, "{userId}", none, "{deliveryId}", none, "{silenceId}", none, "{heartbeatId}", none)
	patterns := api.RoutePatterns()
	for _, pattern := range patterns {
		level, ok := routeAccess[pattern]
		if !ok {
			t.Errorf("route %s has no rule in routeAccess", pattern)
			continue
		}
		method, path, _ := strings.Cut(pattern, " ")
		path = ids.Replace(path)
		for name, c := range principals {
			var body any
			switch {
			case pattern == "POST /groups":
				body = map[string]any{"name": "m-" + name, "orgId": org}
			case strings.HasPrefix(pattern, "PATCH /groups/{groupId}/apiKeys"):
				body = map[string]any{"roles": []string{herald.GroupReadOnly}}
			case method != http.MethodGet && method != http.MethodDelete:
				body = map[string]any{}
			}
			r := c.boundTo(t).do(method, path, body)
			denied := r.Status == http.StatusUnauthorized && r.str("errorCode") == herald.CodeUserUnauthorized
			if want := slices.Contains(accessLevels[level], name); denied == want {
				t.Errorf("%s as %s: %d %s, want allowed=%v (%s)", pattern, name, r.Status, r.str("errorCode"), want, level)
			}
		}
	}
	for pattern := range routeAccess {
		if !slices.Contains(patterns, pattern) {
			t.Errorf("routeAccess names %s, which is not a route", pattern)
		}
	}
}
