package herald

import (
	"cmp"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// Observation is one item of an observations request (docs/lifecycle.md#observations): either a condition
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

	// An alert from Prometheus (EventTypeName PROMETHEUS_ALERT), posted to the Alertmanager
	// front door: its label set (its identity, by fingerprint), annotations, the link to the
	// expression that fired, and when it stops firing unless refreshed (Active is false once
	// EndsAt has passed when it is posted).
	Labels       Labels `json:"labels,omitempty"`
	Annotations  Labels `json:"annotations,omitempty"`
	GeneratorURL string `json:"generatorURL,omitempty"`
	EndsAt       *Time  `json:"endsAt,omitempty"`

	// The heartbeat a HEARTBEAT_MISSED or HEARTBEAT_FAILED condition is about (the engine
	// makes these; agents cannot send them).
	HeartbeatName string `json:"heartbeatName,omitempty"`
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
		if info, ok := LookupEventType(o.EventTypeName); !ok {
			return bad("eventTypeName", "unknown event type %s", o.EventTypeName)
		} else if info.Category == CategoryHeartbeat {
			return bad("eventTypeName", "%s is reported by Herald's heartbeats, not by observations", o.EventTypeName)
		}
		if o.EventTypeName == "OUTSIDE_METRIC_THRESHOLD" {
			return missing("metricName")
		}
		if o.Active == nil {
			return missing("active")
		}
		if o.Value != nil {
			return bad("value", "a condition reports currentValue, not value and units")
		}
		if o.Units != "" {
			return bad("units", "a condition reports currentValue, not value and units")
		}
		if o.IsPrometheus() {
			return o.validatePrometheus(bad)
		}
		if o.HostID == "" && o.ReplicaSetName == "" && o.ClusterID == "" && o.ClusterName == "" {
			return missing("hostId")
		}
	}
	if o.HeartbeatName != "" {
		return bad("heartbeatName", "only Herald's heartbeats report a heartbeatName")
	}
	if err := o.prometheusOnly(bad); err != nil {
		return err
	}
	if o.CurrentValue != nil {
		if _, ok := UnitKindOf(o.CurrentValue.Units); !ok {
			return bad("currentValue.units", "unknown units %s", o.CurrentValue.Units)
		}
	}
	if o.HostID != "" && !ValidHostID(o.HostID) {
		return bad("hostId", "a host id is 1 to %d letters, digits, dots, dashes and underscores, starting with a letter or digit", maxHostIDLength)
	}
	if o.TypeName != "" && !ValidTypeNameValue(o.TypeName) {
		return bad("typeName", "unknown host type %s", o.TypeName)
	}
	if len(o.Disks) > 0 && o.HostID == "" {
		return missing("hostId")
	}
	for j, d := range o.Disks {
		field := fmt.Sprintf("disks[%d].partitionName", j)
		if d.PartitionName == "" {
			return missing(field)
		}
		if !validPartitionName(d.PartitionName) {
			return bad(field, "a partition name is at most %d bytes of UTF-8 without control characters", maxPartitionNameLength)
		}
	}
	return nil
}

// ValidateAt is Validate with the item's times checked against Herald's clock at now
// (RequestTimeProblem): at is when it was seen, endsAt an end.
func (o Observation) ValidateAt(i int, now time.Time) error {
	if err := o.Validate(i); err != nil {
		return err
	}
	return checkItemTimes(i, now, itemTime{"at", o.At, true}, itemTime{"endsAt", o.EndsAt, false})
}

// itemTime is a time of a request's item: its field, its value (nil: not given), and whether
// it says when something happened.
type itemTime struct {
	field    string
	t        *Time
	happened bool
}

// checkItemTimes refuses item i with 400 INVALID_OBSERVATION, naming the item and the field,
// when one of its times is out of bounds (RequestTimeProblem).
func checkItemTimes(i int, now time.Time, times ...itemTime) error {
	for _, it := range times {
		if it.t == nil {
			continue
		}
		if p := RequestTimeProblem(it.t.Time, it.happened, now); p != "" {
			return Errorf(KindInvalid, CodeInvalidObservation, []any{i, it.field}, "Item %d, %s: %s is out of bounds: %s", i, it.field, *it.t, p)
		}
	}
	return nil
}

const (
	maxHostIDLength        = 128
	maxPartitionNameLength = 256
)

// ValidHostID reports whether s can be a host id. Host ids go into store keys and URL paths,
// so they keep to letters, digits, dots, dashes and underscores, and start with a letter or
// digit (so "." and ".." never name a host).
func ValidHostID(s string) bool {
	if s == "" || len(s) > maxHostIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// validPartitionName: partition names are whatever the host calls them ("sda1", "/dev/sda1",
// "C:"), so anything printable goes; the disk endpoint's path carries them escaped.
func validPartitionName(s string) bool {
	if len(s) > maxPartitionNameLength || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// HostsOf is what observations (already validated) tell of the hosts of project groupID: one
// Host per distinct hostId, last seen at the latest of its items' times (now for items without
// one) and described by the last of its items that give each description, and each host's
// partitions, each named once.
func HostsOf(groupID string, obs []Observation, now time.Time) ([]Host, map[string][]string) {
	var hosts []Host
	at := map[string]int{} // hostId -> index in hosts
	disks := map[string][]string{}
	reported := map[[2]string]bool{} // {hostId, partitionName}
	for _, o := range obs {
		if o.HostID == "" {
			continue
		}
		seen := At(now)
		if o.At != nil {
			seen = *o.At
		}
		i, ok := at[o.HostID]
		if !ok {
			i = len(hosts)
			at[o.HostID] = i
			hosts = append(hosts, Host{ID: o.HostID, GroupID: groupID, LastSeen: seen})
		}
		h := &hosts[i]
		if seen.After(h.LastSeen.Time) {
			h.LastSeen = seen
		}
		h.HostnameAndPort = cmp.Or(o.HostnameAndPort, h.HostnameAndPort)
		h.TypeName = cmp.Or(o.TypeName, h.TypeName)
		h.ReplicaSetName = cmp.Or(o.ReplicaSetName, h.ReplicaSetName)
		for _, d := range o.Disks {
			k := [2]string{o.HostID, d.PartitionName}
			if !reported[k] {
				reported[k] = true
				disks[o.HostID] = append(disks[o.HostID], d.PartitionName)
			}
		}
	}
	return hosts, disks
}
