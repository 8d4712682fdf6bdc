package alertjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/alerttest"
	"github.com/heraldhq/herald/internal/jsonfield"
)

// Append writes exactly what its Writer's Marshal writes of the alert, with and without HTML
// escaping, for every field filled (a field added to herald.Alert and not to Append fails
// alerttest), for none, and for strings encoding/json escapes.
func TestAppendEncodesAsEncodingJSON(t *testing.T) {
	writers := map[string]jsonfield.Writer{
		"json.Marshal":  {Marshal: json.Marshal, EscapeHTML: true},
		"MarshalNoHTML": {Marshal: jsonfield.MarshalNoHTML},
	}
	for wname, w := range writers {
		for name, a := range alerttest.Alerts(t) {
			want, err := w.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Append([]byte("prefix"), &a, w)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Errorf("%s, %s:\n got %s\nwant prefix%s", wname, name, got, want)
			}
		}
	}
}

// A composite value that does not encode is an error, not a document cut short.
func TestAppendReportsAValueThatDoesNotEncode(t *testing.T) {
	fail := jsonfield.Writer{Marshal: func(v any) ([]byte, error) {
		if _, ok := v.(herald.Labels); ok {
			return nil, &json.UnsupportedValueError{Str: "labels"}
		}
		return json.Marshal(v)
	}}
	a := herald.Alert{ID: "a1", Labels: herald.Labels{"a": "b"}}
	if b, err := Append(nil, &a, fail); err == nil {
		t.Errorf("no error; wrote %s", b)
	}
}

// BenchmarkAppend: a storm's webhook body (a HOST_DOWN alert with its summary), by Append and
// by encoding/json.
//
//	go test ./internal/alertjson/ -run '^$' -bench . -benchmem
func BenchmarkAppend(b *testing.B) {
	now := herald.At(time.Unix(1_800_000_000, 0))
	a := herald.Alert{ID: "0123456789abcdef01234567", GroupID: "0123456789abcdef01234568", AlertConfigID: "0123456789abcdef01234569",
		EventTypeName: "HOST_DOWN", Status: "OPEN", Created: now, Updated: now, HostID: "h12345", HostnameAndPort: "h12345.example.com:27017",
		HumanReadable: "Alert OPEN: HOST_DOWN\nHost: h12345.example.com:27017\nCreated: 2027-01-15T08:00:00Z\n"}
	w := jsonfield.Writer{Marshal: json.Marshal, EscapeHTML: true}
	b.Run("Append", func(b *testing.B) {
		for range b.N {
			if _, err := Append(make([]byte, 0, 1024), &a, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for range b.N {
			if _, err := json.Marshal(a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
