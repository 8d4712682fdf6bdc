package store

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// An alert's document is written three times for each notice it gets (the step that opens
// it, then lastNotified compared and set after delivery), and encoding/json's reflection was
// a tenth of a worker's CPU in a storm. appendAlertDoc writes the same bytes as json.Marshal
// of alertDoc (a test compares them), by hand for the fields every alert has; the rare
// composite fields (labels, tags, current value) still go through encoding/json.

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
	if d.CurrentValue != nil {
		if b, err = appendValueField(b, "v", d.CurrentValue); err != nil {
			return nil, err
		}
	}
	if len(d.Tags) > 0 {
		if b, err = appendValueField(b, "tg", d.Tags); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, "hr", d.HumanReadable)
	if len(d.Labels) > 0 {
		if b, err = appendValueField(b, "l", d.Labels); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, "f", d.Fingerprint)
	if len(d.Annotations) > 0 {
		if b, err = appendValueField(b, "an", d.Annotations); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, "gu", d.GeneratorURL)
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

// appendValueField appends ,"name": and v as encoding/json writes it.
func appendValueField(b []byte, name string, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return append(b, j...), nil
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
