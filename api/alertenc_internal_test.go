package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// The hand-written encoder of an alert's answer writes exactly what marshal writes of the
// alert with its self link spliced in, for every field filled (a field added to herald.Alert
// and not to the encoder fails here), for none, and for strings encoding/json escapes.
func TestAlertAnswerEncodesAsEncodingJSON(t *testing.T) {
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
			t.Fatalf("no value for field %s of type %s: teach this test and appendAlert about it", name, f.Type())
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
	for name, a := range map[string]herald.Alert{"every field": every, "escaped strings": escaped,
		"empty composites": emptyComposite, "an open alert": open, "empty": {}} {
		for _, self := range []string{"http://127.0.0.1:8080" + BasePath + alertPath(a), "http://h/<&>\"é", ""} {
			want := spliceSelfLink(t, a, self)
			got, err := withLinks(a, self)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, self %q:\n got %s\nwant %s", name, self, got, want)
			}
			if !json.Valid(got) {
				t.Errorf("%s: not JSON: %s", name, got)
			}
		}
	}
}

// spliceSelfLink is the answer as encoding/json writes it: the alert, then its links.
func spliceSelfLink(t *testing.T, a herald.Alert, self string) []byte {
	t.Helper()
	b, err := marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if self == "" {
		return b
	}
	links, err := marshal([]Link{{Href: self, Rel: "self"}})
	if err != nil {
		t.Fatal(err)
	}
	return append(append(append(b[:len(b)-1:len(b)-1], `,"links":`...), links...), '}')
}
