package herald

import (
	"fmt"
	"math"
)

// Observation is one item of an observations request (product.md §6): either a condition
// (EventTypeName, Active) or a measurement (MetricName, Value, Units), about one target. Both
// may name disk partitions of their host.
type Observation struct {
	EventTypeName   string        `json:"eventTypeName,omitempty"`
	Active          *bool         `json:"active,omitempty"`
	MetricName      string        `json:"metricName,omitempty"`
	Value           *float64      `json:"value,omitempty"`
	Units           string        `json:"units,omitempty"`
	HostID          string        `json:"hostId,omitempty"`
	HostnameAndPort string        `json:"hostnameAndPort,omitempty"`
	TypeName        string        `json:"typeName,omitempty"`
	ReplicaSetName  string        `json:"replicaSetName,omitempty"`
	ClusterID       string        `json:"clusterId,omitempty"`
	ClusterName     string        `json:"clusterName,omitempty"`
	ShardName       string        `json:"shardName,omitempty"`
	SourceTypeName  string        `json:"sourceTypeName,omitempty"`
	CurrentValue    *CurrentValue `json:"currentValue,omitempty"`
	At              *Time         `json:"at,omitempty"`
	Disks           []Disk        `json:"disks,omitempty"`
}

// Disk is a disk partition of a host.
type Disk struct {
	PartitionName string `json:"partitionName"`
}

// Host is a host an observation named, with the partitions observations reported for it.
type Host struct {
	ID              string `json:"id"`
	GroupID         string `json:"groupId"`
	HostnameAndPort string `json:"hostnameAndPort,omitempty"`
	TypeName        string `json:"typeName,omitempty"`
	ReplicaSetName  string `json:"replicaSetName,omitempty"`
	LastSeen        Time   `json:"lastSeen"`
}

// IsMeasurement tells a measurement from a condition.
func (o Observation) IsMeasurement() bool { return o.MetricName != "" }

// MaxObservationsPerRequest bounds one request; agents send thousands, not millions.
const MaxObservationsPerRequest = 50000

// Validate checks item i of a request. Every problem names the item's index and field.
func (o Observation) Validate(i int) error {
	bad := func(field, format string, args ...any) error {
		return Errorf(KindInvalid, CodeInvalidObservation, []any{i, field}, "Item %d, %s: %s", i, field, fmt.Sprintf(format, args...))
	}
	missing := func(field string) error {
		return Errorf(KindInvalid, CodeMissingAttribute, []any{i, field}, "Item %d: the required attribute %s was not specified.", i, field)
	}
	if o.IsMeasurement() {
		if o.EventTypeName != "" && o.EventTypeName != "OUTSIDE_METRIC_THRESHOLD" {
			return bad("eventTypeName", "a measurement has no eventTypeName other than OUTSIDE_METRIC_THRESHOLD")
		}
		if o.Active != nil {
			return bad("active", "a measurement has no active flag")
		}
		kind, ok := LookupMetric(o.MetricName)
		if !ok {
			return bad("metricName", "unknown metric %s", o.MetricName)
		}
		if o.Value == nil {
			return missing("value")
		}
		if math.IsNaN(*o.Value) || math.IsInf(*o.Value, 0) {
			return bad("value", "not a finite number")
		}
		if o.Units == "" {
			return missing("units")
		}
		uk, ok := UnitKindOf(o.Units)
		if !ok {
			return bad("units", "unknown units %s", o.Units)
		}
		if uk != kind {
			return bad("units", "%s is not measured in %s", o.MetricName, o.Units)
		}
		if o.HostID == "" {
			return missing("hostId")
		}
	} else {
		if o.EventTypeName == "" {
			return missing("eventTypeName")
		}
		if _, ok := LookupEventType(o.EventTypeName); !ok {
			return bad("eventTypeName", "unknown event type %s", o.EventTypeName)
		}
		if o.EventTypeName == "OUTSIDE_METRIC_THRESHOLD" {
			return missing("metricName")
		}
		if o.Active == nil {
			return missing("active")
		}
		if o.Value != nil || o.Units != "" {
			return bad("value", "a condition reports currentValue, not value and units")
		}
		if o.HostID == "" && o.ReplicaSetName == "" && o.ClusterID == "" && o.ClusterName == "" {
			return missing("hostId")
		}
	}
	if o.CurrentValue != nil {
		if _, ok := UnitKindOf(o.CurrentValue.Units); !ok {
			return bad("currentValue.units", "unknown units %s", o.CurrentValue.Units)
		}
	}
	if o.TypeName != "" && !ValidTypeNameValue(o.TypeName) {
		return bad("typeName", "unknown host type %s", o.TypeName)
	}
	if len(o.Disks) > 0 && o.HostID == "" {
		return missing("hostId")
	}
	for j, d := range o.Disks {
		if d.PartitionName == "" {
			return missing(fmt.Sprintf("disks[%d].partitionName", j))
		}
	}
	return nil
}
