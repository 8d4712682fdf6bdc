package api

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/jsonfield"
)

// GET of one alert is the endpoint agents and dashboards poll, and encoding/json's reflection
// was most of encoding its answer. appendAlert writes the same bytes as marshal (encoding/json
// without HTML escaping) of a herald.Alert, by hand for the fields every alert has; the rare
// composite fields (current value, tags, labels, annotations) and strings that need escaping
// still go through marshal. A test compares the two for every field.

// answered writes members as marshal does.
var answered = jsonfield.Writer{Marshal: marshal}

// appendAlert appends marshal(a)'s bytes to b.
func appendAlert(b []byte, a *herald.Alert) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = answered.String(b, a.ID)
	b = answered.String(append(b, `,"groupId":`...), a.GroupID)
	b = answered.String(append(b, `,"alertConfigId":`...), a.AlertConfigID)
	b = answered.String(append(b, `,"eventTypeName":`...), a.EventTypeName)
	b = answered.String(append(b, `,"status":`...), a.Status)
	b = appendTime(append(b, `,"created":`...), a.Created)
	b = appendTime(append(b, `,"updated":`...), a.Updated)
	b = appendTimeField(b, "resolved", a.Resolved)
	b = appendTimeField(b, "lastNotified", a.LastNotified)
	b = appendTimeField(b, "acknowledgedUntil", a.AcknowledgedUntil)
	b = answered.StringField(b, "acknowledgementComment", a.AcknowledgementComment)
	b = answered.StringField(b, "acknowledgingUsername", a.AcknowledgingUsername)
	b = answered.StringField(b, "hostId", a.HostID)
	b = answered.StringField(b, "hostnameAndPort", a.HostnameAndPort)
	b = answered.StringField(b, "replicaSetName", a.ReplicaSetName)
	b = answered.StringField(b, "clusterId", a.ClusterID)
	b = answered.StringField(b, "clusterName", a.ClusterName)
	b = answered.StringField(b, "shardName", a.ShardName)
	b = answered.StringField(b, "sourceTypeName", a.SourceTypeName)
	b = answered.StringField(b, "metricName", a.MetricName)
	var err error
	b = answered.ValueField(b, "currentValue", a.CurrentValue, a.CurrentValue != nil, &err)
	b = answered.ValueField(b, "tags", a.Tags, len(a.Tags) > 0, &err)
	b = answered.StringField(b, "humanReadable", a.HumanReadable)
	b = answered.ValueField(b, "labels", a.Labels, len(a.Labels) > 0, &err)
	b = answered.StringField(b, "fingerprint", a.Fingerprint)
	b = answered.ValueField(b, "annotations", a.Annotations, len(a.Annotations) > 0, &err)
	b = answered.StringField(b, "generatorURL", a.GeneratorURL)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendTime appends t as herald.Time's MarshalJSON writes it.
func appendTime(b []byte, t herald.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, herald.TimeLayout)
	return append(b, '"')
}

// appendTimeField appends ,"name":t unless t is zero (omitzero).
func appendTimeField(b []byte, name string, t herald.Time) []byte {
	if t.IsZero() {
		return b
	}
	return appendTime(jsonfield.Name(b, name), t)
}

// appendSelfLink appends the links member holding the self link, as withLinks splices it.
func appendSelfLink(b []byte, self string) []byte {
	b = answered.String(append(b, `"links":[{"href":`...), self)
	return append(b, `,"rel":"self"}]`...)
}
