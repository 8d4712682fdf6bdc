package herald

import "time"

// Audit event types recorded for changes made through the API (docs/decisions.md#events).
const (
	EventAlertAcknowledged   = "ALERT_ACKNOWLEDGED_AUDIT"
	EventAlertUnacknowledged = "ALERT_UNACKNOWLEDGED_AUDIT"
	EventAlertConfigAdded    = "ALERT_CONFIG_ADDED_AUDIT"
	EventAlertConfigChanged  = "ALERT_CONFIG_CHANGED_AUDIT"
	EventAlertConfigDeleted  = "ALERT_CONFIG_DELETED_AUDIT"
	EventAlertConfigEnabled  = "ALERT_CONFIG_ENABLED_AUDIT"
	EventAlertConfigDisabled = "ALERT_CONFIG_DISABLED_AUDIT"
	// EventAlertConfigUndeliverable accompanies a configuration written with notifications the
	// installation cannot deliver as set up (DeliverySetup.Undeliverable): the write succeeds.
	EventAlertConfigUndeliverable = "ALERT_CONFIG_UNDELIVERABLE_AUDIT"
	EventWindowAdded              = "MAINTENANCE_WINDOW_ADDED_AUDIT"
	EventWindowChanged            = "MAINTENANCE_WINDOW_CHANGED_AUDIT"
	EventWindowDeleted            = "MAINTENANCE_WINDOW_DELETED_AUDIT"
	EventHeartbeatAdded           = "HEARTBEAT_ADDED_AUDIT"
	EventHeartbeatChanged         = "HEARTBEAT_CHANGED_AUDIT"
	EventHeartbeatDeleted         = "HEARTBEAT_DELETED_AUDIT"
	EventAPIKeyAddedToGroup       = "API_KEY_ADDED_TO_GROUP"
	EventAPIKeyCreated            = "API_KEY_CREATED"
	EventUserCreated              = "USER_CREATED_AUDIT"
	EventInvitedToGroup           = "INVITED_TO_GROUP"
	EventInvitedToOrg             = "INVITED_TO_ORG"
	EventIntegrationConfigured    = "INTEGRATION_CONFIGURED"
	EventIntegrationRemoved       = "INTEGRATION_REMOVED"
	EventGroupCreated             = "GROUP_CREATED"
	EventOrgCreated               = "ORG_CREATED"
)

// Event types the engine records when an alert ends (docs/decisions.md#events). An alert's
// opening is recorded under its own eventTypeName (the condition, e.g. HOST_DOWN); its end has
// a type of its own, so that a reader of the events tells the two apart without includeRaw.
const (
	EventAlertClosed    = "ALERT_CLOSED_AUDIT"
	EventAlertCancelled = "ALERT_CANCELLED_AUDIT"
)

// AlertEventType is the eventTypeName of the engine's event about alert a as a lifecycle step
// left it: a CLOSED or CANCELLED alert has its own; any other the alert's condition.
func AlertEventType(a Alert) string {
	switch a.Status {
	case StatusClosed:
		return EventAlertClosed
	case StatusCancelled:
		return EventAlertCancelled
	}
	return a.EventTypeName
}

// Event is an audit record, as the API shows it. Raw is the internal record behind it, shown
// only when a reader asks for it with includeRaw.
type Event struct {
	ID                  string        `json:"id"`
	Created             Time          `json:"created"`
	EventTypeName       string        `json:"eventTypeName"`
	GroupID             string        `json:"groupId,omitempty"`
	OrgID               string        `json:"orgId,omitempty"`
	AlertID             string        `json:"alertId,omitempty"`
	AlertConfigID       string        `json:"alertConfigId,omitempty"`
	MaintenanceWindowID string        `json:"maintenanceWindowId,omitempty"`
	HeartbeatID         string        `json:"heartbeatId,omitempty"`
	APIKeyID            string        `json:"apiKeyId,omitempty"`
	PublicKey           string        `json:"publicKey,omitempty"`
	UserID              string        `json:"userId,omitempty"`
	Username            string        `json:"username,omitempty"`
	RemoteAddress       string        `json:"remoteAddress,omitempty"`
	IsGlobalAdmin       *bool         `json:"isGlobalAdmin,omitempty"`
	TargetPublicKey     string        `json:"targetPublicKey,omitempty"`
	TargetUsername      string        `json:"targetUsername,omitempty"`
	HostID              string        `json:"hostId,omitempty"`
	Hostname            string        `json:"hostname,omitempty"`
	Port                int           `json:"port,omitempty"`
	ReplicaSetName      string        `json:"replicaSetName,omitempty"`
	ShardName           string        `json:"shardName,omitempty"`
	ClusterID           string        `json:"clusterId,omitempty"`
	ClusterName         string        `json:"clusterName,omitempty"`
	MetricName          string        `json:"metricName,omitempty"`
	CurrentValue        *CurrentValue `json:"currentValue,omitempty"`
	// Undeliverable says, on an ALERT_CONFIG_UNDELIVERABLE_AUDIT, which notifications reach
	// nobody as the installation is set up, why, and the setting to change.
	Undeliverable []Undeliverable `json:"undeliverable,omitempty"`
	Raw           map[string]any  `json:"raw,omitempty"`
}

// NewEvent is an audit event of type typ made by who at now, in scope s. Raw records the
// event's internal form; callers add the details of what changed.
func NewEvent(typ string, who Principal, s Scope, now time.Time) Event {
	e := Event{ID: NewID(now), Created: At(now), EventTypeName: typ, GroupID: s.GroupID, OrgID: s.OrgID,
		RemoteAddress: who.RemoteAddress}
	if who.APIKeyID != "" {
		e.APIKeyID, e.PublicKey = who.APIKeyID, who.PublicKey
	} else if who.UserID != "" {
		e.UserID, e.Username = who.UserID, who.Username
	}
	if who.APIKeyID != "" || who.UserID != "" {
		admin := who.holdsGlobal(GlobalMonitoringAdmin, GlobalOwner)
		e.IsGlobalAdmin = &admin
	}
	e.Raw = map[string]any{"_t": typ, "id": e.ID, "cre": e.Created.String(), "source": "API"}
	if s.GroupID != "" {
		e.Raw["gid"] = s.GroupID
	}
	if s.OrgID != "" {
		e.Raw["orgId"] = s.OrgID
	}
	return e
}
