package herald

import "time"

// Alert statuses.
const (
	StatusTracking  = "TRACKING"
	StatusOpen      = "OPEN"
	StatusClosed    = "CLOSED"
	StatusCancelled = "CANCELLED"
)

// ValidAlertStatus reports whether s is an alert status.
func ValidAlertStatus(s string) bool {
	switch s {
	case StatusTracking, StatusOpen, StatusClosed, StatusCancelled:
		return true
	}
	return false
}

// Active reports whether an alert in status s may still change: TRACKING or OPEN.
func Active(status string) bool { return status == StatusTracking || status == StatusOpen }

// CurrentValue is a measured value with its units.
type CurrentValue struct {
	Number float64 `json:"number"`
	Units  string  `json:"units"`
}

// Alert is a project or global alert, as the API shows it. Global alerts carry the id of a
// global configuration in AlertConfigID and the project they opened for in GroupID.
type Alert struct {
	ID                     string        `json:"id"`
	GroupID                string        `json:"groupId"`
	AlertConfigID          string        `json:"alertConfigId"`
	EventTypeName          string        `json:"eventTypeName"`
	Status                 string        `json:"status"`
	Created                Time          `json:"created"`
	Updated                Time          `json:"updated"`
	Resolved               Time          `json:"resolved,omitzero"`
	LastNotified           Time          `json:"lastNotified,omitzero"`
	AcknowledgedUntil      Time          `json:"acknowledgedUntil,omitzero"`
	AcknowledgementComment string        `json:"acknowledgementComment,omitempty"`
	AcknowledgingUsername  string        `json:"acknowledgingUsername,omitempty"`
	HostID                 string        `json:"hostId,omitempty"`
	HostnameAndPort        string        `json:"hostnameAndPort,omitempty"`
	ReplicaSetName         string        `json:"replicaSetName,omitempty"`
	ClusterID              string        `json:"clusterId,omitempty"`
	ClusterName            string        `json:"clusterName,omitempty"`
	ShardName              string        `json:"shardName,omitempty"`
	SourceTypeName         string        `json:"sourceTypeName,omitempty"`
	HeartbeatName          string        `json:"heartbeatName,omitempty"`
	MetricName             string        `json:"metricName,omitempty"`
	CurrentValue           *CurrentValue `json:"currentValue,omitempty"`
	Tags                   []string      `json:"tags,omitempty"`
	HumanReadable          string        `json:"humanReadable,omitempty"`

	// An alert from Prometheus (EventTypeName PROMETHEUS_ALERT): its label set, fingerprint,
	// annotations and generator URL.
	Labels       Labels `json:"labels,omitempty"`
	Fingerprint  string `json:"fingerprint,omitempty"`
	Annotations  Labels `json:"annotations,omitempty"`
	GeneratorURL string `json:"generatorURL,omitempty"`
}

// Acknowledged reports whether the alert is acknowledged at now.
func (a Alert) Acknowledged(now time.Time) bool {
	return !a.AcknowledgedUntil.IsZero() && now.Before(a.AcknowledgedUntil.Time)
}

// Acknowledge applies an acknowledgement request made at now by who: until a future time
// acknowledges (replacing any earlier acknowledgement), a past time un-acknowledges. It
// reports whether the alert is acknowledged afterwards. Only an active alert can be
// acknowledged.
func (a *Alert) Acknowledge(until Time, comment, who string, now time.Time) (bool, error) {
	if !Active(a.Status) {
		return false, Errorf(KindConflict, CodeAlertNotActive, []any{a.ID},
			"Alert %s is %s and can no longer be acknowledged.", a.ID, a.Status)
	}
	a.Updated = At(now)
	if !until.After(now) {
		a.AcknowledgedUntil, a.AcknowledgementComment, a.AcknowledgingUsername = Time{}, "", ""
		return false, nil
	}
	a.AcknowledgedUntil, a.AcknowledgementComment, a.AcknowledgingUsername = until, comment, who
	return true, nil
}

// CodeAlertNotActive refuses acknowledging a closed or cancelled alert.
const CodeAlertNotActive = "ALERT_NOT_ACTIVE"
