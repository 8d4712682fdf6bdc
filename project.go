package herald

import "time"

// Org is an organization: it owns projects and organization API keys.
type Org struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Created Time   `json:"created"`
}

// Project (the API's "group") belongs to one organization. Tags select it for global alert
// configurations that apply to all projects.
type Project struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	OrgID   string   `json:"orgId"`
	Created Time     `json:"created"`
	Tags    []string `json:"tags"`
}

// Scope is the project's place for access checks.
func (p Project) Scope() Scope { return Scope{OrgID: p.OrgID, GroupID: p.ID} }

// NewProject is a new project of organization orgID with its default alert configurations.
func NewProject(name, orgID string, tags []string, now time.Time) (Project, []AlertConfig) {
	if tags == nil {
		tags = []string{}
	}
	p := Project{ID: NewID(now), Name: name, OrgID: orgID, Created: At(now), Tags: tags}
	var configs []AlertConfig
	for _, rule := range DefaultAlertConfigs() {
		configs = append(configs, AlertConfig{ID: NewID(now), GroupID: p.ID, Created: p.Created, Updated: p.Created, AlertRule: rule})
	}
	return p, configs
}

// DefaultAlertConfigs are the configurations a new project starts with, as on the platform:
// the conditions nobody wants to miss, each telling the project's owners by email.
func DefaultAlertConfigs() []AlertRule {
	group := func(delay int) []Notification {
		t := true
		f := false
		return []Notification{{TypeName: "GROUP", DelayMin: delay, IntervalMin: 60, Roles: []string{GroupOwner}, EmailEnabled: &t, SMSEnabled: &f}}
	}
	rules := []AlertRule{
		{EventTypeName: "HOST_DOWN", Notifications: group(5)},
		{EventTypeName: "MONITORING_AGENT_DOWN", Notifications: group(5)},
		{EventTypeName: "BACKUP_AGENT_DOWN", Notifications: group(5)},
		{EventTypeName: "AUTOMATION_AGENT_DOWN", Notifications: group(5)},
		{EventTypeName: "NO_PRIMARY", Notifications: group(15)},
		{EventTypeName: "TOO_MANY_ELECTIONS", Threshold: &Threshold{Operator: "GREATER_THAN", Threshold: 3}, Notifications: group(0)},
		{EventTypeName: "OUTSIDE_METRIC_THRESHOLD", MetricThreshold: &MetricThreshold{MetricName: "OPLOG_SLAVE_LAG_MASTER_TIME", Mode: "AVERAGE", Operator: "GREATER_THAN", Threshold: 1, Units: "MINUTES"}, Notifications: group(5)},
		{EventTypeName: "OUTSIDE_METRIC_THRESHOLD", MetricThreshold: &MetricThreshold{MetricName: "QUERY_TARGETING_SCANNED_OBJECTS_PER_RETURNED", Mode: "AVERAGE", Operator: "GREATER_THAN", Threshold: 1000, Units: "RAW"}, Notifications: group(10)},
		{EventTypeName: EventTypeHeartbeatMissed, Notifications: group(0)},
		{EventTypeName: EventTypeHeartbeatFailed, Notifications: group(0)},
	}
	for i := range rules {
		rules[i].Enabled = true
		rules[i].Matchers = []Matcher{}
	}
	return rules
}
