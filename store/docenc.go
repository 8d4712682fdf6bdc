package store

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/heraldhq/herald/internal/jsonfield"
)

// An alert's document is encoded for every step that changes it (a storm opens thousands a
// second; lastNotified, set after each delivery, is edited in place: MarkNotified), and
// encoding/json's reflection was a tenth of a worker's CPU in a storm. appendAlertDoc writes
// the same bytes as json.Marshal of alertDoc (a test compares them), by hand for the fields
// every alert has; the rare composite fields (labels, tags, current value) still go through
// encoding/json.
//
// One member is not where encoding/json puts it: lastNotified ("n"), which MarkNotified's
// script overwrites in place, is the document's first member, ten bytes wide (unix seconds
// have ten digits from 2001 to 2286; never notified is notifiedNever, null padded with spaces,
// which JSON allows after a value). The script reads the document's first 16 bytes and writes
// 10 of them, where it used to read, rebuild and write the whole document (a quarter less of
// Redis's time for it, and 10 bytes rather than the document in the append-only file). First,
// not right after "i": its place then depends on nothing before it, and an older Herald's
// script, which looks for documents that start with "i", leaves these to its path that reads
// and rewrites the document, rather than adding a second "n". A lastNotified of another width
// is written where encoding/json writes it (after "t", "u" and "r"), as every document was
// before, and the script takes its old path (a test compares its edit with this encoder's
// output).

// stored writes members as json.Marshal does.
var stored = jsonfield.Writer{Marshal: json.Marshal, EscapeHTML: true}

// notifiedNever is the ten bytes of the lastNotified slot of an alert never notified: null,
// which every reader of the document (encoding/json, the flat decoder, an older Herald's
// decoders) reads as no time, where a 0 would be read as 1970 by an older Herald.
const notifiedNever = "null      "

// notifiedSlot is the start of a document whose lastNotified is in its slot, up to the slot.
const notifiedSlot = `{"n":`

// inNotifiedSlot reports whether lastNotified n is written in the slot (ten bytes wide).
func inNotifiedSlot(n *int64) bool { return n == nil || 1e9 <= *n && *n < 1e10 }

// appendAlertDoc appends json.Marshal(d)'s bytes to b, but for lastNotified: first, in its
// slot, when inNotifiedSlot.
func appendAlertDoc(b []byte, d *alertDoc) ([]byte, error) {
	slot := inNotifiedSlot(d.LastNotified)
	if slot {
		b = append(b, notifiedSlot...)
		if d.LastNotified == nil {
			b = append(b, notifiedNever...)
		} else {
			b = strconv.AppendInt(b, *d.LastNotified, 10)
		}
		b = append(b, `,"i":`...)
	} else {
		b = append(b, `{"i":`...)
	}
	b = stored.String(b, d.ID)
	b = stored.StringField(b, "g", d.GroupID)
	b = stored.StringField(b, "c", d.AlertConfigID)
	b = stored.StringField(b, "e", d.EventTypeName)
	b = stored.StringField(b, "s", d.Status)
	b = jsonfield.IntField(b, "t", d.Created)
	b = jsonfield.IntField(b, "u", d.Updated)
	b = jsonfield.IntField(b, "r", d.Resolved)
	if !slot {
		b = jsonfield.IntField(b, "n", d.LastNotified)
	}
	b = jsonfield.IntField(b, "a", d.AcknowledgedUntil)
	b = stored.StringField(b, "ac", d.AcknowledgementComment)
	b = stored.StringField(b, "au", d.AcknowledgingUsername)
	b = stored.StringField(b, "h", d.HostID)
	b = stored.StringField(b, "hp", d.HostnameAndPort)
	b = stored.StringField(b, "rs", d.ReplicaSetName)
	b = stored.StringField(b, "ci", d.ClusterID)
	b = stored.StringField(b, "cn", d.ClusterName)
	b = stored.StringField(b, "sh", d.ShardName)
	b = stored.StringField(b, "st", d.SourceTypeName)
	b = stored.StringField(b, "m", d.MetricName)
	var err error
	b = stored.ValueField(b, "v", d.CurrentValue, d.CurrentValue != nil, &err)
	b = stored.ValueField(b, "tg", d.Tags, len(d.Tags) > 0, &err)
	b = stored.StringField(b, "hr", d.HumanReadable)
	b = stored.ValueField(b, "l", d.Labels, len(d.Labels) > 0, &err)
	b = stored.StringField(b, "f", d.Fingerprint)
	b = stored.ValueField(b, "an", d.Annotations, len(d.Annotations) > 0, &err)
	b = stored.StringField(b, "gu", d.GeneratorURL)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendEventDoc appends json.Marshal(d)'s bytes to b: an event is written with every alert
// opened or closed. Each field is written after a comma; the first comma becomes the brace.
func appendEventDoc(b []byte, d *eventDoc) ([]byte, error) {
	start := len(b)
	b = stored.StringField(b, "i", d.ID)
	b = jsonfield.IntField(b, "t", d.Created)
	b = stored.StringField(b, "e", d.EventTypeName)
	b = stored.StringField(b, "g", d.GroupID)
	b = stored.StringField(b, "o", d.OrgID)
	b = stored.StringField(b, "a", d.AlertID)
	b = stored.StringField(b, "c", d.AlertConfigID)
	b = stored.StringField(b, "w", d.MaintenanceWindowID)
	b = stored.StringField(b, "k", d.APIKeyID)
	b = stored.StringField(b, "pk", d.PublicKey)
	b = stored.StringField(b, "ui", d.UserID)
	b = stored.StringField(b, "un", d.Username)
	b = stored.StringField(b, "ra", d.RemoteAddress)
	if d.IsGlobalAdmin != nil {
		b = strconv.AppendBool(append(b, `,"ga":`...), *d.IsGlobalAdmin)
	}
	b = stored.StringField(b, "tk", d.TargetPublicKey)
	b = stored.StringField(b, "tu", d.TargetUsername)
	b = stored.StringField(b, "h", d.HostID)
	b = stored.StringField(b, "hn", d.Hostname)
	if d.Port != 0 {
		b = strconv.AppendInt(append(b, `,"p":`...), int64(d.Port), 10)
	}
	b = stored.StringField(b, "rs", d.ReplicaSetName)
	b = stored.StringField(b, "sh", d.ShardName)
	b = stored.StringField(b, "ci", d.ClusterID)
	b = stored.StringField(b, "cn", d.ClusterName)
	b = stored.StringField(b, "m", d.MetricName)
	var err error
	b = stored.ValueField(b, "v", d.CurrentValue, d.CurrentValue != nil, &err)
	if len(d.Raw) > 0 {
		b = appendRawField(b, d.Raw, &err)
	}
	if err != nil {
		return nil, err
	}
	if len(b) == start {
		return append(b, "{}"...), nil
	}
	b[start] = '{'
	return append(b, '}'), nil
}

// appendRawField appends an event's raw record: by hand when it holds strings only (the
// engine's {"status": ...}), in encoding/json's order of keys; through encoding/json otherwise.
func appendRawField(b []byte, raw map[string]any, err *error) []byte {
	var few [4]string // the keys of the engine's records, without an allocation
	keys := few[:0]
	for k, v := range raw {
		if _, ok := v.(string); !ok {
			return stored.ValueField(b, "r", raw, true, err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, `,"r":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(stored.String(b, k), ':')
		b = stored.String(b, raw[k].(string))
	}
	return append(b, '}')
}
