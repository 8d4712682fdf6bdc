package herald

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// The fields of a kind (a notification's webhookUrl, an integration's serviceKey) are held by
// name, as the kind declares them, so that a kind's package adds its fields without a change
// here. In JSON they sit beside the other attributes, as they always have.

// setField is a copy of fields with name set to value, or removed when value is "" (nil when
// none is left). A copy, so that a notification or integration copied by value is changed
// alone, as one of named fields would be.
func setField(fields map[string]string, name, value string) map[string]string {
	out := make(map[string]string, len(fields)+1)
	maps.Copy(out, fields)
	if value == "" {
		delete(out, name)
	} else {
		out[name] = value
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Field is the value of the notification's field name ("" when unset).
func (n Notification) Field(name string) string { return n.Fields[name] }

// SetField sets the notification's field name; "" unsets it.
func (n *Notification) SetField(name, value string) { n.Fields = setField(n.Fields, name, value) }

// notificationJSON and notificationRoles are a notification's attributes other than its
// kind's fields, in the order they have always been written: a notice's fingerprint of its
// notification is a hash of these bytes.
type notificationJSON struct {
	TypeName     string `json:"typeName"`
	DelayMin     int    `json:"delayMin"`
	IntervalMin  int    `json:"intervalMin"`
	EmailEnabled *bool  `json:"emailEnabled,omitempty"`
	SMSEnabled   *bool  `json:"smsEnabled,omitempty"`
}

type notificationRoles struct {
	Roles []string `json:"roles,omitempty"`
}

// MarshalJSON writes the notification's attributes, then its kind's fields in the order the
// kind declares them (others after, by name), then its roles.
func (n Notification) MarshalJSON() ([]byte, error) {
	var declared []string
	if k, ok := LookupKind(n.TypeName); ok {
		for _, f := range k.Fields {
			declared = append(declared, f.Name)
		}
	}
	return marshalFields(notificationJSON{n.TypeName, n.DelayMin, n.IntervalMin, n.EmailEnabled, n.SMSEnabled},
		n.Fields, declared, notificationRoles{n.Roles})
}

// UnmarshalJSON reads what MarshalJSON writes: every attribute that is not one of the others
// is a field of the kind.
func (n *Notification) UnmarshalJSON(b []byte) error {
	var common struct {
		notificationJSON
		notificationRoles
	}
	fields, err := splitFields(b, &common, "typeName", "delayMin", "intervalMin", "emailEnabled", "smsEnabled", "roles")
	*n = Notification{TypeName: common.TypeName, DelayMin: common.DelayMin, IntervalMin: common.IntervalMin,
		EmailEnabled: common.EmailEnabled, SMSEnabled: common.SMSEnabled, Roles: common.Roles, Fields: fields}
	return err
}

type integrationJSON struct {
	Type string `json:"type"`
}

type integrationEnabled struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// MarshalJSON writes the integration's type, its fields in the order its type declares them
// (others after, by name), and enabled.
func (i Integration) MarshalJSON() ([]byte, error) {
	var declared []string
	if it, ok := LookupIntegrationType(i.Type); ok {
		for _, f := range it.Fields {
			declared = append(declared, f.Name)
		}
	}
	return marshalFields(integrationJSON{i.Type}, i.Fields, declared, integrationEnabled{i.Enabled})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (i *Integration) UnmarshalJSON(b []byte) error {
	var common struct {
		integrationJSON
		integrationEnabled
	}
	fields, err := splitFields(b, &common, "type", "enabled")
	*i = Integration{Type: common.Type, Fields: fields, Enabled: common.Enabled}
	return err
}

// marshalFields writes one JSON object: the members of struct head, fields (those named in
// order first, the others by name), then the members of struct tail. HTML characters are left
// to the encoder the object goes through (json.Marshal escapes them, the API's does not).
func marshalFields(head any, fields map[string]string, order []string, tail any) ([]byte, error) {
	w := &objectWriter{out: []byte{'{'}}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	w.members(head)
	rest := slices.Sorted(maps.Keys(fields))
	rest = slices.DeleteFunc(rest, func(name string) bool { return slices.Contains(order, name) })
	for _, name := range append(order, rest...) {
		if v, ok := fields[name]; ok {
			w.member(name, v)
		}
	}
	w.members(tail)
	return append(w.out, '}'), w.err
}

// splitFields decodes object b into common, and returns its other attributes, which must be
// strings, as fields (nil when none).
func splitFields(b []byte, common any, names ...string) (map[string]string, error) {
	if err := json.Unmarshal(b, common); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	var fields map[string]string
	for name, raw := range all {
		if slices.Contains(names, name) {
			continue
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		if v != "" {
			if fields == nil {
				fields = map[string]string{}
			}
			fields[name] = v
		}
	}
	return fields, nil
}

// objectWriter is the object marshalFields writes.
type objectWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
	out []byte
	err error
}

// encode is v in JSON, without the encoder's line end.
func (w *objectWriter) encode(v any) []byte {
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil && w.err == nil {
		w.err = err
	}
	return bytes.TrimSuffix(w.buf.Bytes(), []byte{'\n'})
}

// members adds the members of struct v.
func (w *objectWriter) members(v any) {
	if b := w.encode(v); len(b) > 2 { // not {}, nor an error
		w.next()
		w.out = append(w.out, b[1:len(b)-1]...)
	}
}

// member adds name: value.
func (w *objectWriter) member(name, value string) {
	w.next()
	w.out = append(w.out, w.encode(name)...)
	w.out = append(w.out, ':')
	w.out = append(w.out, w.encode(value)...)
}

func (w *objectWriter) next() {
	if len(w.out) > 1 {
		w.out = append(w.out, ',')
	}
}

// UnmarshalJSON reads a notification of a request: the kind fields of every kind (any case,
// as encoding/json matches names), each a string or null, and the other attributes. An
// attribute that is neither is refused as encoding/json refuses an unknown field.
func (in *NotificationInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[NotificationInput]()}
	}
	var (
		rest     = []byte{'{'}
		fieldErr error
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if name, ok := notificationFieldName(key); ok {
			var v *string
			if err := json.Unmarshal(raw, &v); err != nil && fieldErr == nil {
				fieldErr = &json.UnmarshalTypeError{Value: jsonKind(raw), Type: reflect.TypeFor[string](), Field: name}
			}
			if in.Fields == nil {
				in.Fields = map[string]*string{}
			}
			in.Fields[name] = v
			continue
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		k, _ := json.Marshal(key)
		rest = append(append(append(rest, k...), ':'), raw...)
	}
	rest = append(rest, '}')
	type plain NotificationInput // without this method
	restDec := json.NewDecoder(bytes.NewReader(rest))
	restDec.DisallowUnknownFields()
	fields := in.Fields
	if err := restDec.Decode((*plain)(in)); err != nil {
		return err
	}
	in.Fields = fields
	return fieldErr
}

// jsonKind is what encoding/json calls the JSON value b in its errors.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// notificationFieldName is the field of some kind that key names, as encoding/json matches a
// name to a field: exactly, else in any case.
func notificationFieldName(key string) (string, bool) {
	var folded string
	for _, k := range kindRegistry {
		for _, f := range k.Fields {
			if f.Name == key {
				return key, true
			}
			if folded == "" && strings.EqualFold(f.Name, key) {
				folded = f.Name
			}
		}
	}
	return folded, folded != ""
}

// fieldOf is the name of the field a request's param names: its last part
// ("notifications[0].webhookUrl": webhookUrl).
func fieldOf(param string) string {
	return param[strings.LastIndexByte(param, '.')+1:]
}

// OneOf is a Check of a field that takes one of values.
func OneOf(values ...string) func(param, value string) error {
	return func(param, v string) error {
		if slices.Contains(values, v) {
			return nil
		}
		list := strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
		return Invalid(CodeInvalidEnumValue, param, "%s must be %s.", fieldOf(param), list)
	}
}
