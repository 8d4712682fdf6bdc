// Package jsonfield appends JSON object members by hand, byte for byte as encoding/json writes
// them. It is for the few documents written often enough that reflection shows in profiles (an
// alert stored on every engine step, an alert answered on every read or posted with every
// webhook delivery); their encoders list their fields and leave composite values, and strings
// with anything but printable ASCII, quotes, backslashes, newlines, returns and tabs, to a
// Writer's Marshal.
//
// It owns only the byte form of members; which fields a document has, and their names, belong
// to the encoder that uses it (store's stored form, alertjson's alert as the API shows it).
package jsonfield

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A Writer appends members as its Marshal encodes them: encoding/json.Marshal (which escapes
// <, > and &), or an encoder with HTML escaping turned off.
type Writer struct {
	Marshal    func(any) ([]byte, error)
	EscapeHTML bool // Marshal escapes <, > and &
}

// MarshalNoHTML is encoding/json.Marshal with HTML escaping turned off (<, > and & as they
// are): the Marshal of a Writer for bodies that are not HTML, such as the API's.
func MarshalNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Name appends the start of a member that follows another: ,"name":
func Name(b []byte, name string) []byte {
	return append(append(append(b, `,"`...), name...), `":`...)
}

// String appends s quoted as w.Marshal quotes it: printable ASCII is copied, with a quote, a
// backslash, a newline, a carriage return and a tab escaped as encoding/json escapes them (an
// alert's summary is lines of text); a string with anything else is left to w.Marshal.
//
// Runs of bytes that need nothing are found by a table and copied whole: the engine quotes
// some twenty strings for every alert it opens (its document, event and notice), and a byte's
// own append and comparisons were most of it.
func (w Writer) String(b []byte, s string) []byte {
	start := len(b)
	b = append(b, '"')
	special := byte(escapeAlways)
	if w.EscapeHTML {
		special |= escapeInHTML
	}
	for i := 0; i < len(s); i++ {
		run := i
		for i < len(s) && escapes[s[i]]&special == 0 {
			i++
		}
		b = append(b, s[run:i]...)
		if i == len(s) {
			break
		}
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default: // a control, <, > or & (HTML escaping), or not ASCII
			j, _ := w.Marshal(s) // a string always encodes
			return append(b[:start], j...)
		}
	}
	return append(b, '"')
}

// escapes says of each byte whether a quoted string cannot copy it as it is: always
// (escapeAlways: quotes, backslashes, controls, DEL, bytes of non-ASCII runes), or where <, >
// and & are escaped (escapeInHTML).
var escapes = func() (t [256]byte) {
	for c := range t {
		switch {
		case c < 0x20 || c == '"' || c == '\\' || c == 0x7f || c >= utf8.RuneSelf:
			t[c] = escapeAlways
		case c == '<' || c == '>' || c == '&':
			t[c] = escapeInHTML
		}
	}
	return t
}()

const (
	escapeAlways = 1 << iota
	escapeInHTML
)

// StringField appends ,"name":"s" unless s is empty (omitempty).
func (w Writer) StringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return w.String(Name(b, name), s)
}

// IntField appends ,"name":n unless n is nil (omitempty).
func IntField(b []byte, name string, n *int64) []byte {
	if n == nil {
		return b
	}
	return strconv.AppendInt(Name(b, name), *n, 10)
}

// ValueField appends ,"name": and w.Marshal(v), if present (omitempty leaves out a field that
// is not); a value that does not encode sets *err, and nothing more is appended once it is set.
func (w Writer) ValueField(b []byte, name string, v any, present bool, err *error) []byte {
	if !present || *err != nil {
		return b
	}
	j, e := w.Marshal(v)
	if e != nil {
		*err = e
		return b
	}
	return append(Name(b, name), j...)
}
