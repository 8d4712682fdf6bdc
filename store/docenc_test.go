package store

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// The hand-written encoder of alerts writes exactly what encoding/json writes of the stored
// form, for every field filled, for none, and for strings encoding/json escapes.
func TestAlertDocumentEncodesAsEncodingJSON(t *testing.T) {
	var every herald.Alert
	filled(t, &every, 5)
	escaped := every
	escaped.HostnameAndPort = "a\"b\\c<d>&e\n\u2028é\xff"
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
		d := packAlert(a)
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeDoc(a)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// The same of events, with a raw record of strings only (written by hand) and of other values.
func TestEventDocumentEncodesAsEncodingJSON(t *testing.T) {
	var every herald.Event
	filled(t, &every, 6)
	engine := every
	engine.Raw = map[string]any{"status": "OPEN", "<k>": "a&b", "b": "é\n"}
	escaped := engine
	escaped.Hostname, escaped.ClusterName, escaped.Port, escaped.IsGlobalAdmin = "<h>", "a\"b", 0, nil
	for name, e := range map[string]herald.Event{"every field": every, "a raw record of strings": engine,
		"escaped strings": escaped, "empty raw record": {ID: "0123456789abcdef01234567", Raw: map[string]any{}}, "empty": {}} {
		p := packEvent(e)
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEventDoc(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// A value encoding/json refuses (a current value that is not a number) is refused the same.
func TestDocumentThatDoesNotEncodeIsRefused(t *testing.T) {
	a := herald.Alert{ID: "0123456789abcdef01234567", CurrentValue: &herald.CurrentValue{Number: math.NaN()}}
	if b, err := encodeDoc(a); err == nil {
		t.Errorf("alert with a NaN value encoded as %s", b)
	}
	e := herald.Event{ID: "0123456789abcdef01234567", Raw: map[string]any{"n": math.Inf(1)}}
	if b, err := encodeEvent(collection{}, e); err == nil {
		t.Errorf("event with an infinite raw value encoded as %s", b)
	}
}
