package alertjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/jsonfield"
)

// Append writes exactly what its Writer's Marshal writes of the alert, with and without HTML
// escaping, for every field filled (a field added to herald.Alert and not to Append fails
// here), for none, and for strings encoding/json escapes.
func TestAppendEncodesAsEncodingJSON(t *testing.T) {
	var every herald.Alert
	rv := reflect.ValueOf(&every).Elem()
	for i := range rv.NumField() {
		f, name := rv.Field(i), rv.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[herald.Time]():
			f.Set(reflect.ValueOf(herald.At(time.Unix(int64(1_700_000_000+1000*i), 0))))
		case f.Kind() == reflect.String:
			f.SetString(name + "-value")
		case f.Type() == reflect.TypeFor[*herald.CurrentValue]():
			f.Set(reflect.ValueOf(&herald.CurrentValue{Number: 1.5, Units: "RAW"}))
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{"a", name}))
		case f.Type() == reflect.TypeFor[herald.Labels]():
			f.Set(reflect.ValueOf(herald.Labels{"alertname": name, "job": "node"}))
		default:
			t.Fatalf("no value for field %s of type %s: teach this test and Append about it", name, f.Type())
		}
	}
	escaped := every
	escaped.HostnameAndPort = "a\"b\\c<d>&e\n\u2028é\xff\x7f"
	escaped.ShardName, escaped.ClusterName, escaped.HumanReadable = "<b>", "a&b", "é"
	escaped.Labels = herald.Labels{"x<": "y&", "a": "\t"}
	escaped.Tags = []string{"t1", "<t2>"}
	escaped.CurrentValue = &herald.CurrentValue{}
	emptyComposite := every
	emptyComposite.Labels, emptyComposite.Annotations, emptyComposite.Tags, emptyComposite.CurrentValue = herald.Labels{}, nil, []string{}, nil
	open := herald.Alert{ID: "0123456789abcdef01234567", GroupID: "0123456789abcdef01234568", Status: "OPEN",
		EventTypeName: "HOST_DOWN", Created: herald.At(time.Unix(1_800_000_000, 0)), Updated: herald.At(time.Unix(1_800_000_000, 0))}
	writers := map[string]jsonfield.Writer{
		"json.Marshal":  {Marshal: json.Marshal, EscapeHTML: true},
		"MarshalNoHTML": {Marshal: jsonfield.MarshalNoHTML},
	}
	for wname, w := range writers {
		for name, a := range map[string]herald.Alert{"every field": every, "escaped strings": escaped,
			"empty composites": emptyComposite, "an open alert": open, "empty": {}} {
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
