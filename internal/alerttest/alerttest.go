// Package alerttest has the alerts that tests of an alert's hand-written JSON encoders compare
// with encoding/json: every field filled, strings encoding/json escapes, empty composites, a
// plain open alert, and an empty one.
package alerttest

import (
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// Alerts are the alerts an encoder of herald.Alert must write as encoding/json does, by name.
// A field added to herald.Alert that this does not know how to fill fails tb.
func Alerts(tb testing.TB) map[string]herald.Alert {
	tb.Helper()
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
			tb.Fatalf("no value for field %s of type %s: teach alerttest and the alert encoders about it", name, f.Type())
		}
	}
	escaped := every
	escaped.HostnameAndPort = "a\"b\\c<d>&e\n\u2028é\xff\x7f"
	escaped.ShardName, escaped.ClusterName, escaped.HumanReadable = "<b>", "a&b", "é\r\n\tline"
	escaped.Labels = herald.Labels{"x<": "y&", "a": "\t"}
	escaped.Tags = []string{"t1", "<t2>"}
	escaped.CurrentValue = &herald.CurrentValue{}
	emptyComposite := every
	emptyComposite.Labels, emptyComposite.Annotations, emptyComposite.Tags, emptyComposite.CurrentValue = herald.Labels{}, nil, []string{}, nil
	open := herald.Alert{ID: "0123456789abcdef01234567", GroupID: "0123456789abcdef01234568", Status: "OPEN",
		EventTypeName: "HOST_DOWN", Created: herald.At(time.Unix(1_800_000_000, 0)), Updated: herald.At(time.Unix(1_800_000_000, 0))}
	return map[string]herald.Alert{"every field": every, "escaped strings": escaped, "empty composites": emptyComposite,
		"an open alert": open, "empty": {}}
}
