package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/alerttest"
)

// The hand-written encoder of alerts writes exactly what encoding/json writes of the stored
// form, for the alerts every alert encoder is held to, and for one with every field filled
// and ids of herald's form (which the stored form packs), but for lastNotified: first, ten
// bytes wide (null and six spaces when never notified), when it has ten digits or is not
// set, and where encoding/json writes it otherwise.
func TestAlertDocumentEncodesAsEncodingJSON(t *testing.T) {
	cases := alerttest.Alerts(t)
	var every herald.Alert
	filled(t, &every, 5)
	cases["every field, ids of herald's form"] = every
	for name, unix := range map[string]int64{"first of ten digits": 1_000_000_000, "last of ten digits": 9_999_999_999,
		"nine digits": 999_999_999, "eleven digits": 10_000_000_000, "the epoch": 0, "ten characters, negative": -999_999_999} {
		a := cases["an open alert"]
		a.LastNotified = herald.At(time.Unix(unix, 0))
		cases["notified at "+name] = a
	}
	for name, a := range cases {
		d := packAlert(a)
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		switch n := d.LastNotified; {
		case n == nil:
			want = append([]byte(`{"n":null      ,`), want[1:]...)
		case len(strconv.FormatInt(*n, 10)) == 10 && *n > 0:
			d.LastNotified = nil
			rest, _ := json.Marshal(d)
			want = append([]byte(`{"n":`+strconv.FormatInt(*n, 10)+`,`), rest[1:]...)
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
	one := func(k string, v any) herald.Event { e := every; e.Raw = map[string]any{k: v}; return e }
	for name, e := range map[string]herald.Event{"every field": every, "a raw record of strings": engine,
		"escaped strings": escaped, "empty raw record": {ID: "0123456789abcdef01234567", Raw: map[string]any{}}, "empty": {},
		"the engine's raw record": one("status", "OPEN"), "one escaped string": one("<k>", "a&b\né"), "one number": one("n", 2.5)} {
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
