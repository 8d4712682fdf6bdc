package store

import (
	"strconv"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// An alert's document is read on every GET of it (the endpoint agents and dashboards poll),
// and encoding/json's reflection was most of the read's decoding. decodeFlatAlertDoc reads
// the documents of nearly every alert by hand: those whose values are all plain strings and
// integers. Anything else (labels, tags, a current value, an escape, null, a name it does not
// know) it leaves to encoding/json, which reads every document the same (a fuzz test compares
// them). The alert's project, read with it, is read the same way (decodeFlatProject).
//
// Both read a document as Redis answered it, a string, or as bytes (docText): read from the
// string, their values are slices of it, not copies.

// docText is a stored document's text: a reply's string, or bytes.
type docText interface{ ~string | ~[]byte }

// decodeFlatAlertDoc reads b into d as json.Unmarshal would, when b is a flat document;
// false (d then partly written) when it is not, for encoding/json to read.
func decodeFlatAlertDoc[T docText](b T, d *alertDoc) bool {
	return scanFlatObject(b, func(name, str T, num int64, kind flatKind) bool {
		switch kind {
		case flatEmptyArray:
			return false // only tags are arrays, and an alert leaves out empty ones
		case flatNumber, flatNull:
			var p **int64
			switch string(name) {
			case "t":
				p = &d.Created
			case "u":
				p = &d.Updated
			case "r":
				p = &d.Resolved
			case "n":
				p = &d.LastNotified
			case "a":
				p = &d.AcknowledgedUntil
			default:
				return false
			}
			if kind == flatNull {
				*p = nil // as encoding/json: lastNotified's slot, never notified
				return true
			}
			v := num // on the heap only for a member that is a number
			*p = &v
			return true
		}
		var p *string
		switch string(name) {
		case "i":
			p = &d.ID
		case "g":
			p = &d.GroupID
		case "c":
			p = &d.AlertConfigID
		case "e":
			p = &d.EventTypeName
		case "s":
			p = &d.Status
		case "ac":
			p = &d.AcknowledgementComment
		case "au":
			p = &d.AcknowledgingUsername
		case "h":
			p = &d.HostID
		case "hp":
			p = &d.HostnameAndPort
		case "rs":
			p = &d.ReplicaSetName
		case "ci":
			p = &d.ClusterID
		case "cn":
			p = &d.ClusterName
		case "sh":
			p = &d.ShardName
		case "st":
			p = &d.SourceTypeName
		case "m":
			p = &d.MetricName
		case "hr":
			p = &d.HumanReadable
		case "f":
			p = &d.Fingerprint
		case "gu":
			p = &d.GeneratorURL
		default:
			return false
		}
		*p = string(str)
		return true
	})
}

// flatKind is the kind of a member's value scanFlatObject read.
type flatKind uint8

const (
	flatString     flatKind = iota // str holds it
	flatNumber                     // num holds it
	flatEmptyArray                 // []: a project's tags, most often
	flatNull                       // null: an alert's lastNotified never set, in its slot
)

// scanFlatObject reads b as one JSON object whose names and string values have no escapes
// and whose other values are integers (-?(0|[1-9][0-9]*), fitting an int64), null or empty
// arrays, calling field for each member in order; false as soon as b is anything else or
// field says false. Whitespace is skipped wherever JSON allows it (after lastNotified's
// placeholder, in every new alert document, among others).
func scanFlatObject[T docText](b T, field func(name, str T, num int64, kind flatKind) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		name, next, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"':
			str, next, ok := plainString(b, i)
			if !ok || !field(name, str, 0, flatString) {
				return false
			}
			i = next
		case '[':
			i = skipSpace(b, i+1)
			if i >= len(b) || b[i] != ']' || !field(name, b[:0], 0, flatEmptyArray) {
				return false
			}
			i++
		case 'n':
			if len(b)-i < len("null") || string(b[i:i+len("null")]) != "null" || !field(name, b[:0], 0, flatNull) {
				return false
			}
			i += len("null")
		default:
			num, next, ok := plainInt(b, i)
			if !ok || !field(name, b[:0], num, flatNumber) {
				return false
			}
			i = next
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// decodeFlatProject reads b into p as json.Unmarshal would, when b is a flat project document
// (its tags empty, its creation time a time herald.ParseTime reads); false (p then partly
// written) when it is not, for encoding/json to read. A project is read with every GET of
// one of its alerts.
func decodeFlatProject[T docText](b T, p *herald.Project) bool {
	return scanFlatObject(b, func(name, str T, _ int64, kind flatKind) bool {
		switch string(name) {
		case "tags":
			if kind != flatEmptyArray {
				return false
			}
			p.Tags = []string{}
			return true
		case "created":
			if kind != flatString {
				return false
			}
			t, ok := herald.ParseTime(string(str))
			p.Created = t
			return ok
		}
		if kind != flatString {
			return false
		}
		switch string(name) {
		case "id":
			p.ID = string(str)
		case "name":
			p.Name = string(str)
		case "orgId":
			p.OrgID = string(str)
		default:
			return false
		}
		return true
	})
}

// plainString reads the JSON string at b[i] (its opening quote) when it has no escape, no
// control character and is valid UTF-8: its content and the index after its closing quote.
func plainString[T docText](b T, i int) (str T, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return str, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			str = b[i+1 : j]
			if !ascii && !validUTF8(str) {
				return b[:0], 0, false // encoding/json replaces what is invalid
			}
			return str, j + 1, true
		case c == '\\' || c < 0x20:
			return b[:0], 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return b[:0], 0, false
}

// validUTF8 is utf8.Valid of either text.
func validUTF8[T docText](b T) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		var buf [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(buf[:copy(buf[:], b[i:min(i+utf8.UTFMax, len(b))])])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}

// plainInt reads the JSON integer at b[i]: -?(0|[1-9][0-9]*) followed by no fraction or
// exponent, within an int64.
func plainInt[T docText](b T, i int) (n int64, next int, ok bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := j
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == digits || (b[digits] == '0' && j > digits+1) {
		return 0, 0, false // no digits, or a leading zero
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	return n, j, err == nil
}

func skipSpace[T docText](b T, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
