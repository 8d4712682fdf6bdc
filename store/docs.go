package store

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/heraldhq/herald"
)

// Documents are JSON. Alerts and events, of which there are hundreds of thousands (every open
// alert and its opening event), are kept in a compact form of their own: one- or two-letter
// names, times in unix seconds, ids in 16 characters of base64 rather than 24 hex digits, and
// an alert's updated time left out while it equals its creation. Redis allocates a string in
// size classes (…, 192, 224, 256, 320, 384 bytes), so these bytes decide which class a
// document lands in: an open alert's document went from 338 bytes (a 384-byte class) to under
// 192. Documents written before, in the API's own form (they begin with {"id":), are read as
// they are; each is rewritten compactly the next time it changes.

// encodeDoc is the stored form of a document.
func encodeDoc(v any) ([]byte, error) {
	switch d := v.(type) {
	case herald.Alert:
		return json.Marshal(packAlert(d))
	case *herald.Alert:
		return json.Marshal(packAlert(*d))
	}
	return json.Marshal(v)
}

// encodeEvent is the stored form of an event of scope c (in c's hash, under its id): the id
// left out, and the project too where it is the scope's. An event of a project without one
// says so ("g":"~", an empty id after the raw mark). Its creation time is left out too where
// it is the second its id was made in, as it is for every event herald.NewEvent makes (a
// zero time is then written as zeroTime): 15 bytes that take an opening event's document
// from Redis's 128-byte size class to 112.
func encodeEvent(c collection, e herald.Event) ([]byte, error) {
	scope := c.groupID()
	own := scope != "" && e.GroupID == scope
	if own {
		e.GroupID = "" // (e is a copy) left out, and not packed only to be dropped
	}
	p := packEvent(e)
	switch s, ok := idSecond(e.ID); {
	case !ok:
	case p.Created == nil:
		p.Created = packTimeOrZero(e.Created)
	case *p.Created == s:
		p.Created = nil
	}
	if scope != "" && !own && e.GroupID == "" {
		p.GroupID = rawIDMark
	}
	return json.Marshal(&p)
}

// encodeDocAt is v's stored form at key. An alert's leaves out what its key says: its id and,
// in its project's slot, its project; a global alert's key names no project, and keeps it.
// That is 46 bytes of an open alert's document. Documents written before carry both (or an
// empty id, "i":""); decodeDocAt reads either.
func encodeDocAt(key string, v any) ([]byte, error) {
	switch d := v.(type) {
	case herald.Alert:
		return encodeAlertAt(key, &d)
	case *herald.Alert:
		return encodeAlertAt(key, d)
	case herald.Heartbeat:
		return json.Marshal(packHeartbeatAt(key, d))
	}
	return encodeDoc(v)
}

// encodeAlertAt is encodeDocAt of an alert (a pointer: the engine encodes hundreds a step,
// and an alert given as an interface value is copied to the heap first).
func encodeAlertAt(key string, a *herald.Alert) ([]byte, error) {
	p := packAlertAt(key, a)
	return json.Marshal(&p)
}

// packAlertAt is the stored form of an alert at key: its id and project left out where the
// key names them.
func packAlertAt(key string, a *herald.Alert) alertDoc {
	stored := *a
	if a.ID != "" && strings.HasSuffix(key, a.ID) && strings.HasSuffix(key[:len(key)-len(a.ID)], ":") {
		stored.ID = "" // left out, and not packed only to be dropped
	}
	if gid, _, ok := projectOfKey(key); ok && gid == a.GroupID {
		stored.GroupID = ""
	}
	return packAlert(stored)
}

// decodeDocAt is decodeDoc of the document stored at key: an alert's id and project, where
// its stored form leaves them out (encodeDocAt), are the key's.
func decodeDocAt[T docText](key string, b T, dst any) error {
	if h, ok := dst.(*herald.Heartbeat); ok {
		return decodeHeartbeatAt(key, []byte(b), h)
	}
	if err := decodeDoc(b, dst); err != nil {
		return err
	}
	switch d := dst.(type) {
	case *herald.Alert:
		identify(key, &d.ID, &d.GroupID)
	}
	return nil
}

// identify sets a document's id and project, where it left them out, from the key it was
// stored at: herald:{g:<project>}:<name>:<id>, or herald:{global}:<name>:<id>.
func identify(key string, id, groupID *string) {
	if *id == "" {
		if i := strings.LastIndexByte(key, ':'); i >= 0 {
			*id = key[i+1:]
		}
	}
	if *groupID == "" {
		*groupID, _, _ = projectOfKey(key)
	}
}

// docText is a stored document's text: a reply's string, or bytes.
type docText interface{ ~string | ~[]byte }

// decodeDoc reads a stored document into dst, in either form: as Redis answered it (a string)
// or bytes.
func decodeDoc[T docText](b T, dst any) error {
	if a, ok := dst.(*herald.Alert); ok && !isAPIForm(b) {
		return decodeCompact[alertDoc]([]byte(b), a)
	}
	if h, ok := dst.(*herald.Heartbeat); ok {
		return decodeHeartbeatAt("", []byte(b), h)
	}
	return json.Unmarshal([]byte(b), dst)
}

// decodeDocOf reads the stored document of id of c, in any form, into dst.
func decodeDocOf(c collection, id string, b []byte, dst any) error {
	if e, ok := dst.(*herald.Event); ok && !isAPIForm(b) {
		return decodeEvent(c, id, b, e)
	}
	return decodeDocAt(c.doc(id), b, dst)
}

// decodeEvent reads an event's compact document: as encodeEvent writes it, without an id
// (the id is where it is stored, the project the scope's unless it names one), or as it was
// written before, with its id and project.
func decodeEvent(c collection, id string, b []byte, e *herald.Event) error {
	var d eventDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	stored := d.ID == ""
	*e = d.unpack()
	if stored {
		e.ID = id
		if s, ok := idSecond(id); ok && d.Created == nil {
			e.Created = herald.At(time.Unix(s, 0))
		}
		if d.GroupID == "" {
			e.GroupID = c.groupID()
		}
	}
	return nil
}

// decodeCompact reads the compact form D of a document into dst.
func decodeCompact[D interface{ unpack() T }, T any](b []byte, dst *T) error {
	var c D
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*dst = c.unpack()
	return nil
}

// isAPIForm reports whether a stored alert, event or heartbeat is in the form written before the
// compact one: the API's, whose first name is "id".
func isAPIForm[T docText](b T) bool {
	const apiForm = `{"id":`
	return len(b) >= len(apiForm) && string(b[:len(apiForm)]) == apiForm
}

// alertDoc is an alert as stored. Every field of herald.Alert has one here (a test checks).
// LastNotified is read from documents written before it was kept in the alert's reach hash
// (MarkNotified), and never written.
type alertDoc struct {
	ID                     string               `json:"i,omitempty"`
	GroupID                string               `json:"g,omitempty"`
	AlertConfigID          string               `json:"c,omitempty"`
	EventTypeName          string               `json:"e,omitempty"`
	Status                 string               `json:"s,omitempty"`
	Created                *int64               `json:"t,omitempty"`
	Updated                *int64               `json:"u,omitempty"` // absent: the same as Created
	Resolved               *int64               `json:"r,omitempty"`
	LastNotified           *int64               `json:"n,omitempty"`
	AcknowledgedUntil      *int64               `json:"a,omitempty"`
	AcknowledgementComment string               `json:"ac,omitempty"`
	AcknowledgingUsername  string               `json:"au,omitempty"`
	HostID                 string               `json:"h,omitempty"`
	HostnameAndPort        string               `json:"hp,omitempty"`
	ReplicaSetName         string               `json:"rs,omitempty"`
	ClusterID              string               `json:"ci,omitempty"`
	ClusterName            string               `json:"cn,omitempty"`
	ShardName              string               `json:"sh,omitempty"`
	SourceTypeName         string               `json:"st,omitempty"`
	HeartbeatName          string               `json:"hb,omitempty"`
	MetricName             string               `json:"m,omitempty"`
	CurrentValue           *herald.CurrentValue `json:"v,omitempty"`
	Tags                   []string             `json:"tg,omitempty"`
	HumanReadable          string               `json:"hr,omitempty"`
	Labels                 herald.Labels        `json:"l,omitempty"`
	Fingerprint            string               `json:"f,omitempty"`
	Annotations            herald.Labels        `json:"an,omitempty"`
	GeneratorURL           string               `json:"gu,omitempty"`
}

// packAlert is a's stored form, without its lastNotified (kept in its reach hash).
func packAlert(a herald.Alert) alertDoc {
	d := alertDoc{ID: packID(a.ID), GroupID: packID(a.GroupID), AlertConfigID: packID(a.AlertConfigID),
		EventTypeName: a.EventTypeName, Status: a.Status, Created: packTime(a.Created), Resolved: packTime(a.Resolved),
		AcknowledgedUntil:      packTime(a.AcknowledgedUntil),
		AcknowledgementComment: a.AcknowledgementComment, AcknowledgingUsername: a.AcknowledgingUsername,
		HostID: a.HostID, HostnameAndPort: a.HostnameAndPort, ReplicaSetName: a.ReplicaSetName, ClusterID: a.ClusterID,
		ClusterName: a.ClusterName, ShardName: a.ShardName, SourceTypeName: a.SourceTypeName, MetricName: a.MetricName,
		HeartbeatName: a.HeartbeatName,
		CurrentValue:  a.CurrentValue, Tags: a.Tags, HumanReadable: a.HumanReadable, Labels: a.Labels,
		Fingerprint: a.Fingerprint, Annotations: a.Annotations, GeneratorURL: a.GeneratorURL}
	if !a.Updated.Equal(a.Created.Time) {
		d.Updated = packTimeOrZero(a.Updated)
	}
	return d
}

func (d alertDoc) unpack() herald.Alert {
	a := herald.Alert{ID: unpackID(d.ID), GroupID: unpackID(d.GroupID), AlertConfigID: unpackID(d.AlertConfigID),
		EventTypeName: d.EventTypeName, Status: d.Status, Created: unpackTime(d.Created), Resolved: unpackTime(d.Resolved),
		LastNotified: unpackTime(d.LastNotified), AcknowledgedUntil: unpackTime(d.AcknowledgedUntil),
		AcknowledgementComment: d.AcknowledgementComment, AcknowledgingUsername: d.AcknowledgingUsername,
		HostID: d.HostID, HostnameAndPort: d.HostnameAndPort, ReplicaSetName: d.ReplicaSetName, ClusterID: d.ClusterID,
		ClusterName: d.ClusterName, ShardName: d.ShardName, SourceTypeName: d.SourceTypeName, MetricName: d.MetricName,
		HeartbeatName: d.HeartbeatName,
		CurrentValue:  d.CurrentValue, Tags: d.Tags, HumanReadable: d.HumanReadable, Labels: d.Labels,
		Fingerprint: d.Fingerprint, Annotations: d.Annotations, GeneratorURL: d.GeneratorURL}
	a.Updated = a.Created
	if d.Updated != nil {
		a.Updated = unpackTime(d.Updated)
	}
	return a
}

// eventDoc is an event as stored. Every field of herald.Event has one here (a test checks).
// encodeEvent leaves out what where it is stored says (its id, its project): an open alert's
// opening event drops from Redis's 192-byte size class to 128. Documents written before carry
// both (decodeEvent reads either).
type eventDoc struct {
	ID                  string                 `json:"i,omitempty"`
	Created             *int64                 `json:"t,omitempty"`
	EventTypeName       string                 `json:"e,omitempty"`
	GroupID             string                 `json:"g,omitempty"`
	OrgID               string                 `json:"o,omitempty"`
	AlertID             string                 `json:"a,omitempty"`
	AlertConfigID       string                 `json:"c,omitempty"`
	MaintenanceWindowID string                 `json:"w,omitempty"`
	HeartbeatID         string                 `json:"hbi,omitempty"`
	APIKeyID            string                 `json:"k,omitempty"`
	PublicKey           string                 `json:"pk,omitempty"`
	UserID              string                 `json:"ui,omitempty"`
	Username            string                 `json:"un,omitempty"`
	RemoteAddress       string                 `json:"ra,omitempty"`
	IsGlobalAdmin       *bool                  `json:"ga,omitempty"`
	TargetPublicKey     string                 `json:"tk,omitempty"`
	TargetUsername      string                 `json:"tu,omitempty"`
	HostID              string                 `json:"h,omitempty"`
	Hostname            string                 `json:"hn,omitempty"`
	Port                int                    `json:"p,omitempty"`
	ReplicaSetName      string                 `json:"rs,omitempty"`
	ShardName           string                 `json:"sh,omitempty"`
	ClusterID           string                 `json:"ci,omitempty"`
	ClusterName         string                 `json:"cn,omitempty"`
	MetricName          string                 `json:"m,omitempty"`
	CurrentValue        *herald.CurrentValue   `json:"v,omitempty"`
	Undeliverable       []herald.Undeliverable `json:"u,omitempty"`
	Raw                 map[string]any         `json:"r,omitempty"`
}

func packEvent(e herald.Event) eventDoc {
	return eventDoc{Created: packTime(e.Created), EventTypeName: e.EventTypeName,
		GroupID: packID(e.GroupID), OrgID: packID(e.OrgID), AlertID: packID(e.AlertID), AlertConfigID: packID(e.AlertConfigID),
		MaintenanceWindowID: packID(e.MaintenanceWindowID), HeartbeatID: packID(e.HeartbeatID), APIKeyID: packID(e.APIKeyID), PublicKey: e.PublicKey,
		UserID: packID(e.UserID), Username: e.Username, RemoteAddress: e.RemoteAddress, IsGlobalAdmin: e.IsGlobalAdmin,
		TargetPublicKey: e.TargetPublicKey, TargetUsername: e.TargetUsername, HostID: e.HostID, Hostname: e.Hostname,
		Port: e.Port, ReplicaSetName: e.ReplicaSetName, ShardName: e.ShardName, ClusterID: e.ClusterID,
		ClusterName: e.ClusterName, MetricName: e.MetricName, CurrentValue: e.CurrentValue, Undeliverable: e.Undeliverable, Raw: e.Raw}
}

func (d eventDoc) unpack() herald.Event {
	if len(d.Undeliverable) == 0 && d.EventTypeName == herald.EventAlertConfigUndeliverable {
		d.Undeliverable = legacyUndeliverable(d.Raw)
	}
	return herald.Event{ID: unpackID(d.ID), Created: unpackTime(d.Created), EventTypeName: d.EventTypeName,
		GroupID: unpackID(d.GroupID), OrgID: unpackID(d.OrgID), AlertID: unpackID(d.AlertID), AlertConfigID: unpackID(d.AlertConfigID),
		MaintenanceWindowID: unpackID(d.MaintenanceWindowID), HeartbeatID: unpackID(d.HeartbeatID), APIKeyID: unpackID(d.APIKeyID), PublicKey: d.PublicKey,
		UserID: unpackID(d.UserID), Username: d.Username, RemoteAddress: d.RemoteAddress, IsGlobalAdmin: d.IsGlobalAdmin,
		TargetPublicKey: d.TargetPublicKey, TargetUsername: d.TargetUsername, HostID: d.HostID, Hostname: d.Hostname,
		Port: d.Port, ReplicaSetName: d.ReplicaSetName, ShardName: d.ShardName, ClusterID: d.ClusterID,
		ClusterName: d.ClusterName, MetricName: d.MetricName, CurrentValue: d.CurrentValue,
		Undeliverable: d.Undeliverable, Raw: d.Raw}
}

// legacyUndeliverable reads the undeliverable notifications an event written before they had
// a field of their own kept in its raw record.
func legacyUndeliverable(raw map[string]any) []herald.Undeliverable {
	v, ok := raw["undeliverable"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	var us []herald.Undeliverable
	if err != nil || json.Unmarshal(b, &us) != nil {
		return nil
	}
	return us
}

// rawIDMark starts a stored id that is not in herald's form (24 lower-case hex digits) and is
// kept as it is: base64url has no '~', so the two never meet.
const rawIDMark = "~"

// packID shortens an id of herald's form to the 16 base64url characters of its 12 bytes.
// Its bytes are decoded and encoded in stack buffers: every alert packs several ids (its
// document, its events, its attempts).
func packID(id string) string {
	if id == "" {
		return ""
	}
	if raw, ok := idBytes(id); ok {
		var out [16]byte // base64url of 12 bytes, unpadded
		base64.RawURLEncoding.Encode(out[:], raw[:])
		return string(out[:])
	}
	return rawIDMark + id
}

func unpackID(s string) string {
	if s == "" {
		return ""
	}
	if raw, ok := strings.CutPrefix(s, rawIDMark); ok {
		return raw
	}
	var buf [16]byte // a packed id is 12 bytes: decoded here, not on the heap
	b := buf[:]
	if base64.RawURLEncoding.DecodedLen(len(s)) > len(buf) {
		b = make([]byte, base64.RawURLEncoding.DecodedLen(len(s)))
	}
	n, err := base64.RawURLEncoding.Decode(b, []byte(s))
	if err != nil {
		return s
	}
	return hex.EncodeToString(b[:n])
}

// zeroTime stands for the zero time where a time must be given (an alert updated "never"
// while created at some time: not something Herald writes, but kept exactly all the same).
const zeroTime = math.MinInt64

// packTime is t in unix seconds (herald.Time's precision), nil for the zero time.
// idSecond is the second an id of herald's form was made in (herald.NewID: its first four
// bytes); false for any other id.
func idSecond(id string) (int64, bool) {
	if !herald.ValidID(id) {
		return 0, false
	}
	b, err := hex.DecodeString(id[:8])
	if err != nil {
		return 0, false
	}
	return int64(binary.BigEndian.Uint32(b)), true
}

func packTime(t herald.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	s := t.Unix()
	return &s
}

func packTimeOrZero(t herald.Time) *int64 {
	if t.IsZero() {
		z := int64(zeroTime)
		return &z
	}
	return packTime(t)
}

func unpackTime(s *int64) herald.Time {
	if s == nil || *s == zeroTime {
		return herald.Time{}
	}
	return herald.At(time.Unix(*s, 0))
}
