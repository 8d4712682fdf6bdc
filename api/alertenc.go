package api

import (
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// GET of one alert is the endpoint agents and dashboards poll, and encoding/json's reflection
// was most of encoding its answer. appendAlert writes the same bytes as marshal (encoding/json
// without HTML escaping) of a herald.Alert, by hand for the fields every alert has; the rare
// composite fields (current value, tags, labels, annotations) and strings that need escaping
// still go through marshal. A test compares the two for every field.

// appendAlert appends marshal(a)'s bytes to b.
func appendAlert(b []byte, a *herald.Alert) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, a.ID)
	b = appendJSONString(append(b, `,"groupId":`...), a.GroupID)
	b = appendJSONString(append(b, `,"alertConfigId":`...), a.AlertConfigID)
	b = appendJSONString(append(b, `,"eventTypeName":`...), a.EventTypeName)
	b = appendJSONString(append(b, `,"status":`...), a.Status)
	b = appendTime(append(b, `,"created":`...), a.Created)
	b = appendTime(append(b, `,"updated":`...), a.Updated)
	b = appendTimeField(b, "resolved", a.Resolved)
	b = appendTimeField(b, "lastNotified", a.LastNotified)
	b = appendTimeField(b, "acknowledgedUntil", a.AcknowledgedUntil)
	b = appendStringField(b, "acknowledgementComment", a.AcknowledgementComment)
	b = appendStringField(b, "acknowledgingUsername", a.AcknowledgingUsername)
	b = appendStringField(b, "hostId", a.HostID)
	b = appendStringField(b, "hostnameAndPort", a.HostnameAndPort)
	b = appendStringField(b, "replicaSetName", a.ReplicaSetName)
	b = appendStringField(b, "clusterId", a.ClusterID)
	b = appendStringField(b, "clusterName", a.ClusterName)
	b = appendStringField(b, "shardName", a.ShardName)
	b = appendStringField(b, "sourceTypeName", a.SourceTypeName)
	b = appendStringField(b, "metricName", a.MetricName)
	var err error
	b = appendValueField(b, "currentValue", a.CurrentValue, a.CurrentValue != nil, &err)
	b = appendValueField(b, "tags", a.Tags, len(a.Tags) > 0, &err)
	b = appendStringField(b, "humanReadable", a.HumanReadable)
	b = appendValueField(b, "labels", a.Labels, len(a.Labels) > 0, &err)
	b = appendStringField(b, "fingerprint", a.Fingerprint)
	b = appendValueField(b, "annotations", a.Annotations, len(a.Annotations) > 0, &err)
	b = appendStringField(b, "generatorURL", a.GeneratorURL)
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
	return appendTime(append(append(append(b, `,"`...), name...), `":`...), t)
}

// appendStringField appends ,"name":"s" unless s is empty (omitempty).
func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(append(append(b, `,"`...), name...), `":`...), s)
}

// appendValueField appends ,"name": and marshal(v), if present (omitempty leaves out a field
// that is not); a value that does not encode sets *err.
func appendValueField(b []byte, name string, v any, present bool, err *error) []byte {
	if !present || *err != nil {
		return b
	}
	j, e := marshal(v)
	if e != nil {
		*err = e
		return b
	}
	return append(append(append(append(b, `,"`...), name...), `":`...), j...)
}

// appendJSONString appends s quoted as marshal quotes it: printable ASCII other than " and \
// is copied (marshal does not escape HTML); anything else is left to marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == 0x7f {
			j, _ := marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendSelfLink appends the links member holding the self link, as withLinks splices it.
func appendSelfLink(b []byte, self string) []byte {
	b = appendJSONString(append(b, `"links":[{"href":`...), self)
	return append(b, `,"rel":"self"}]`...)
}
