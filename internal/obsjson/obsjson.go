// Package obsjson reads batches of observations (JSON arrays of herald.Observation) faster
// than encoding/json's reflection, with the same result: the API reads every batch an agent
// posts with it, and the worker every batch it evaluates. It owns no state and touches nothing
// but the bytes it is given.
package obsjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// Decode decodes a batch exactly as json.Unmarshal does into a slice of herald.Observation. A
// batch is most often compact JSON with the attributes' own names: Compact reads that form by
// hand (kept for what it buys at ingest: docs/decisions.md#hand-written-code-and-libraries),
// and anything it is not sure of (whitespace, escapes, null, a name in another case or
// unknown, a number that does not parse, an object naming a member twice, bytes that are not
// UTF-8) goes to json.Unmarshal whole.
func Decode(b []byte) ([]herald.Observation, error) {
	if obs, ok := Compact(b); ok {
		return obs, nil
	}
	var obs []herald.Observation
	err := json.Unmarshal(b, &obs)
	return obs, err
}

// Compact reads a compact JSON array of observation objects; ok is false when b is anything
// else, or holds something it leaves to encoding/json. What it reads, it reads as a
// json.Decoder with DisallowUnknownFields reads each item (the API's strict reading) and as
// json.Unmarshal reads the array: it takes only the attributes' own names, and decodes each
// composite attribute (currentValue, at, disks, labels, annotations, endsAt) into its field
// with a decoder that refuses unknown fields; anything that decoder refuses is left to
// encoding/json whole, which decides. So is an object naming a member twice, and a string
// that is not UTF-8, which encoding/json would take silently (the last value; U+FFFD for each
// bad byte) and the API refuses.
func Compact(b []byte) (obs []herald.Observation, ok bool) {
	obs, ok, _ = Read(b, nil)
	return obs, ok
}

// Read reads b as Compact does, giving each observation to each (when set), with its index,
// as soon as it is read and before the next one is: an error of each ends the read there,
// answered with ok true, so that a batch refused at its first items costs what was read of
// it, not the whole batch decoded.
func Read(b []byte, each func(o herald.Observation, i int) error) (obs []herald.Observation, ok bool, err error) {
	r := obsReader{b: b}
	if !r.byte('[') {
		return nil, false, nil
	}
	// Room for a storm's batch of 500 at once; a larger one grows as it is read.
	obs = make([]herald.Observation, 0, min(1+len(b)/128, 1024))
	if r.byte(']') {
		return obs, r.i == len(b), nil
	}
	for {
		obs = append(obs, herald.Observation{})
		o := &obs[len(obs)-1]
		if !r.object(o) {
			return nil, false, nil
		}
		if each != nil {
			if err := each(*o, len(obs)-1); err != nil {
				return nil, true, err
			}
		}
		if r.byte(']') {
			return obs, r.i == len(b), nil
		}
		if !r.byte(',') {
			return nil, false, nil
		}
	}
}

// DistinctNames reports whether b is one compact JSON value (no whitespace, no null) in which
// no object names a member twice, as encoding/json matches names to fields (bytes.EqualFold),
// and that is all UTF-8: what the API would otherwise walk token by token to refuse, in each
// item of a batch its streaming decoder read. False only says it cannot tell (an escape in a
// name, more than maxNames names in an object, a null): the caller checks b another way.
func DistinctNames(b []byte) bool {
	r := obsReader{b: b}
	return r.skip(0, false) && r.i == len(b) && utf8.Valid(b)
}

// obsReader reads compact JSON from b at i.
type obsReader struct {
	b []byte
	i int
}

// byte takes c if it is next.
func (r *obsReader) byte(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// object reads one observation's members into o.
func (r *obsReader) object(o *herald.Observation) bool {
	if !r.byte('{') {
		return false
	}
	if r.byte('}') {
		return true
	}
	var small [smallNames]span
	names := small[:0]
	for {
		start := r.i
		name, ok := r.plainBytes()
		if !ok || !r.byte(':') {
			return false
		}
		// A name in another case is left to encoding/json (member), so only the same name
		// can name a member twice.
		if names, ok = r.newName(names, span{start + 1, r.i - 2}, true); !ok || !r.member(o, name) {
			return false
		}
		if r.byte('}') {
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// member reads the value of the member called name into o.
func (r *obsReader) member(o *herald.Observation, name []byte) bool {
	var s *string
	switch string(name) { // compared in place, not copied

	case "eventTypeName":
		s = &o.EventTypeName
	case "metricName":
		s = &o.MetricName
	case "units":
		s = &o.Units
	case "hostId":
		s = &o.HostID
	case "hostnameAndPort":
		s = &o.HostnameAndPort
	case "typeName":
		s = &o.TypeName
	case "replicaSetName":
		s = &o.ReplicaSetName
	case "clusterId":
		s = &o.ClusterID
	case "clusterName":
		s = &o.ClusterName
	case "shardName":
		s = &o.ShardName
	case "sourceTypeName":
		s = &o.SourceTypeName
	case "heartbeatName":
		s = &o.HeartbeatName
	case "generatorURL":
		s = &o.GeneratorURL
	case "active":
		var v bool
		switch {
		case r.literal("true"):
			v = true
		case r.literal("false"):
		default:
			return false
		}
		o.Active = &v
		return true
	case "value":
		start := r.i
		if !r.number() {
			return false
		}
		v, err := strconv.ParseFloat(string(r.b[start:r.i]), 64)
		if err != nil {
			return false
		}
		o.Value = &v
		return true
	case "currentValue":
		return r.composite(&o.CurrentValue, false)
	case "at":
		return r.composite(&o.At, false)
	case "disks":
		return r.composite(&o.Disks, false)
	case "labels":
		return r.composite(&o.Labels, true)
	case "annotations":
		return r.composite(&o.Annotations, true)
	case "endsAt":
		return r.composite(&o.EndsAt, false)
	default: // another case of a name, or not one: encoding/json's matching decides
		return false
	}
	v, ok := r.plainBytes()
	if ok {
		*s = string(v)
	}
	return ok
}

// plainBytes reads a string that needs no unescaping (printable, valid UTF-8, no backslash):
// its bytes, in b.
func (r *obsReader) plainBytes() ([]byte, bool) {
	if !r.byte('"') {
		return nil, false
	}
	start, ascii := r.i, true
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; {
		case c == '"':
			s := r.b[start:r.i]
			r.i++
			if !ascii && !utf8.Valid(s) { // encoding/json replaces what is not UTF-8
				return nil, false
			}
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// literal takes word if it is next.
func (r *obsReader) literal(word string) bool {
	if len(r.b)-r.i >= len(word) && string(r.b[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	return false
}

// number reads a number as JSON's grammar has it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *obsReader) number() bool {
	r.byte('-')
	switch {
	case r.byte('0'):
	case r.i < len(r.b) && r.b[r.i] >= '1' && r.b[r.i] <= '9':
		r.digits()
	default:
		return false
	}
	if r.byte('.') && !r.digits() {
		return false
	}
	if r.byte('e') || r.byte('E') {
		if !r.byte('+') {
			r.byte('-')
		}
		if !r.digits() {
			return false
		}
	}
	return true
}

// digits takes the digits next, and says whether there was one.
func (r *obsReader) digits() bool {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i > start
}

// composite decodes the value next (an object, an array or a string: not null, which
// encoding/json treats apart) into field, refusing unknown fields as the API does. A label
// set (labelSet: herald.Labels, a map) compares its names as they are, as encoding/json does.
func (r *obsReader) composite(field any, labelSet bool) bool {
	start := r.i
	if !r.skip(0, labelSet) {
		return false
	}
	v := r.b[start:r.i]
	if !utf8.Valid(v) { // encoding/json replaces what is not UTF-8
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	return dec.Decode(field) == nil
}

// A span is where a name is in b, quotes left out.
type span struct{ start, end int }

const (
	// smallNames is how many names of an object are kept without allocating.
	smallNames = 16
	// maxNames bounds the names of one object the reader compares with each other (a label set
	// holds at most herald.MaxPrometheusLabels); an object with more is left to encoding/json.
	maxNames = herald.MaxPrometheusLabels
)

// newName adds the name at s to names, the names of one object so far; ok is false when the
// object names it twice (exact: as they are, otherwise as encoding/json matches names to
// fields, bytes.EqualFold), or when the reader cannot be sure it does not (an escape, too
// many names): encoding/json's streaming decoder takes the last of two, and the API's
// reading refuses them, so such an object is left to them.
func (r *obsReader) newName(names []span, s span, exact bool) (_ []span, ok bool) {
	name := r.b[s.start:s.end]
	if len(names) == maxNames || bytes.IndexByte(name, '\\') >= 0 {
		return names, false
	}
	for _, n := range names {
		other := r.b[n.start:n.end]
		if exact && string(other) == string(name) || !exact && bytes.EqualFold(other, name) {
			return names, false
		}
	}
	return append(names, s), true
}

// skip passes over the compact value next: an object, an array, a string, a number, true or
// false (null is not taken), refusing an object that names a member twice (newName; exact for
// the names of the object next, if it is one). depth bounds nesting, as encoding/json's does.
func (r *obsReader) skip(depth int, exact bool) bool {
	if r.i >= len(r.b) || depth > 100 {
		return false
	}
	switch r.b[r.i] {
	case '{', '[':
		end := byte('}')
		if r.b[r.i] == '[' {
			end = ']'
		}
		object := end == '}'
		r.i++
		if r.byte(end) {
			return true
		}
		var small [smallNames]span
		names := small[:0]
		for {
			if object {
				start := r.i
				if !r.skipString() || !r.byte(':') {
					return false
				}
				var ok bool
				if names, ok = r.newName(names, span{start + 1, r.i - 2}, exact); !ok {
					return false
				}
			}
			if !r.skip(depth+1, false) {
				return false
			}
			if r.byte(end) {
				return true
			}
			if !r.byte(',') {
				return false
			}
		}
	case '"':
		return r.skipString()
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	default:
		return r.number()
	}
}

// skipString passes over a string, escapes and all (json.Unmarshal checks them).
func (r *obsReader) skipString() bool {
	if !r.byte('"') {
		return false
	}
	for ; r.i < len(r.b); r.i++ {
		switch r.b[r.i] {
		case '"':
			r.i++
			return true
		case '\\':
			r.i++
		}
	}
	return false
}
