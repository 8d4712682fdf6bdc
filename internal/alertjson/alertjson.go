// Package alertjson writes an alert's JSON by hand, byte for byte as encoding/json writes a
// herald.Alert: the API answers it on every read of an alert, and a webhook posts it with each
// delivery of a storm, where encoding/json's reflection showed in profiles. The fields every
// alert has are written directly; the rare composite fields (current value, tags, labels,
// annotations) and strings that need escaping go through the Writer's Marshal.
package alertjson

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/jsonfield"
)

// Append appends w.Marshal(a)'s bytes to b: encoding/json.Marshal's with w{Marshal:
// json.Marshal, EscapeHTML: true}, the API's with jsonfield.MarshalNoHTML.
func Append(b []byte, a *herald.Alert, w jsonfield.Writer) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = w.String(b, a.ID)
	b = w.String(append(b, `,"groupId":`...), a.GroupID)
	b = w.String(append(b, `,"alertConfigId":`...), a.AlertConfigID)
	b = w.String(append(b, `,"eventTypeName":`...), a.EventTypeName)
	b = w.String(append(b, `,"status":`...), a.Status)
	b = appendTime(append(b, `,"created":`...), a.Created)
	b = appendTime(append(b, `,"updated":`...), a.Updated)
	b = appendTimeField(b, "resolved", a.Resolved)
	b = appendTimeField(b, "lastNotified", a.LastNotified)
	b = appendTimeField(b, "acknowledgedUntil", a.AcknowledgedUntil)
	b = w.StringField(b, "acknowledgementComment", a.AcknowledgementComment)
	b = w.StringField(b, "acknowledgingUsername", a.AcknowledgingUsername)
	b = w.StringField(b, "hostId", a.HostID)
	b = w.StringField(b, "hostnameAndPort", a.HostnameAndPort)
	b = w.StringField(b, "replicaSetName", a.ReplicaSetName)
	b = w.StringField(b, "clusterId", a.ClusterID)
	b = w.StringField(b, "clusterName", a.ClusterName)
	b = w.StringField(b, "shardName", a.ShardName)
	b = w.StringField(b, "sourceTypeName", a.SourceTypeName)
	b = w.StringField(b, "metricName", a.MetricName)
	var err error
	b = w.ValueField(b, "currentValue", a.CurrentValue, a.CurrentValue != nil, &err)
	b = w.ValueField(b, "tags", a.Tags, len(a.Tags) > 0, &err)
	b = w.StringField(b, "humanReadable", a.HumanReadable)
	b = w.ValueField(b, "labels", a.Labels, len(a.Labels) > 0, &err)
	b = w.StringField(b, "fingerprint", a.Fingerprint)
	b = w.ValueField(b, "annotations", a.Annotations, len(a.Annotations) > 0, &err)
	b = w.StringField(b, "generatorURL", a.GeneratorURL)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendTime appends t as herald.Time's MarshalJSON writes it (no character of its layout is
// one encoding/json escapes).
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
