package store

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// An alert's document is encoded for every step that changes it (a storm opens thousands a
// second; lastNotified, set after each delivery, is edited in place: MarkNotified), and
// encoding/json's reflection was a tenth of a worker's CPU in a storm. appendAlertDoc writes
// the same bytes as json.Marshal of alertDoc (a test compares them), by hand for the fields
// every alert has; the rare composite fields (labels, tags, current value) still go through
// encoding/json. MarkNotified's script relies on where it writes "n": right after "t", "u"
// and "r" (a test compares its edit with this encoder's output).

// appendAlertDoc appends json.Marshal(d)'s bytes to b.
func appendAlertDoc(b []byte, d *alertDoc) ([]byte, error) {
	b = append(b, `{"i":`...)
	b = appendJSONString(b, d.ID)
	b = appendStringField(b, "g", d.GroupID)
	b = appendStringField(b, "c", d.AlertConfigID)
	b = appendStringField(b, "e", d.EventTypeName)
	b = appendStringField(b, "s", d.Status)
	b = appendIntField(b, "t", d.Created)
	b = appendIntField(b, "u", d.Updated)
	b = appendIntField(b, "r", d.Resolved)
	b = appendIntField(b, "n", d.LastNotified)
	b = appendIntField(b, "a", d.AcknowledgedUntil)
	b = appendStringField(b, "ac", d.AcknowledgementComment)
	b = appendStringField(b, "au", d.AcknowledgingUsername)
	b = appendStringField(b, "h", d.HostID)
	b = appendStringField(b, "hp", d.HostnameAndPort)
	b = appendStringField(b, "rs", d.ReplicaSetName)
	b = appendStringField(b, "ci", d.ClusterID)
	b = appendStringField(b, "cn", d.ClusterName)
	b = appendStringField(b, "sh", d.ShardName)
	b = appendStringField(b, "st", d.SourceTypeName)
	b = appendStringField(b, "m", d.MetricName)
	var err error
	b = appendValueField(b, "v", d.CurrentValue, d.CurrentValue != nil, &err)
	b = appendValueField(b, "tg", d.Tags, len(d.Tags) > 0, &err)
	b = appendStringField(b, "hr", d.HumanReadable)
	b = appendValueField(b, "l", d.Labels, len(d.Labels) > 0, &err)
	b = appendStringField(b, "f", d.Fingerprint)
	b = appendValueField(b, "an", d.Annotations, len(d.Annotations) > 0, &err)
	b = appendStringField(b, "gu", d.GeneratorURL)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendStringField appends ,"name":"s" unless s is empty (omitempty).
func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return appendJSONString(b, s)
}

// appendIntField appends ,"name":n unless n is nil (omitempty).
func appendIntField(b []byte, name string, n *int64) []byte {
	if n == nil {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return strconv.AppendInt(b, *n, 10)
}

// appendValueField appends ,"name": and v as encoding/json writes it, if present (a field
// that is not, omitempty leaves out); a value that does not encode sets *err.
func appendValueField(b []byte, name string, v any, present bool, err *error) []byte {
	if !present || *err != nil {
		return b
	}
	j, e := json.Marshal(v)
	if e != nil {
		*err = e
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return append(b, j...)
}

// appendJSONString appends s quoted as encoding/json quotes it: printable ASCII other than
// what it escapes is copied; anything else is left to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendEventDoc appends json.Marshal(d)'s bytes to b: an event is written with every alert
// opened or closed.
func appendEventDoc(b []byte, d *eventDoc) ([]byte, error) {
	b = append(b, `{"i":`...)
	b = appendJSONString(b, d.ID)
	b = appendIntField(b, "t", d.Created)
	b = appendStringField(b, "e", d.EventTypeName)
	b = appendStringField(b, "g", d.GroupID)
	b = appendStringField(b, "o", d.OrgID)
	b = appendStringField(b, "a", d.AlertID)
	b = appendStringField(b, "c", d.AlertConfigID)
	b = appendStringField(b, "w", d.MaintenanceWindowID)
	b = appendStringField(b, "k", d.APIKeyID)
	b = appendStringField(b, "pk", d.PublicKey)
	b = appendStringField(b, "ui", d.UserID)
	b = appendStringField(b, "un", d.Username)
	b = appendStringField(b, "ra", d.RemoteAddress)
	if d.IsGlobalAdmin != nil {
		b = strconv.AppendBool(append(b, `,"ga":`...), *d.IsGlobalAdmin)
	}
	b = appendStringField(b, "tk", d.TargetPublicKey)
	b = appendStringField(b, "tu", d.TargetUsername)
	b = appendStringField(b, "h", d.HostID)
	b = appendStringField(b, "hn", d.Hostname)
	if d.Port != 0 {
		b = strconv.AppendInt(append(b, `,"p":`...), int64(d.Port), 10)
	}
	b = appendStringField(b, "rs", d.ReplicaSetName)
	b = appendStringField(b, "sh", d.ShardName)
	b = appendStringField(b, "ci", d.ClusterID)
	b = appendStringField(b, "cn", d.ClusterName)
	b = appendStringField(b, "m", d.MetricName)
	var err error
	b = appendValueField(b, "v", d.CurrentValue, d.CurrentValue != nil, &err)
	if len(d.Raw) > 0 {
		b = appendRawField(b, d.Raw, &err)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendRawField appends an event's raw record: by hand when it holds strings only (the
// engine's {"status": ...}), in encoding/json's order of keys; through encoding/json otherwise.
func appendRawField(b []byte, raw map[string]any, err *error) []byte {
	keys := make([]string, 0, len(raw))
	for k, v := range raw {
		if _, ok := v.(string); !ok {
			return appendValueField(b, "r", raw, true, err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, `,"r":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		b = appendJSONString(b, raw[k].(string))
	}
	return append(b, '}')
}
