package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// flatDocs are documents of each shape the flat decoder meets, true where it reads them itself.
var flatDocs = []struct {
	doc  string
	flat bool
}{
	{`{}`, true},
	{`{"i":"Zm9vYmFyYmF6cXV4MTIz","g":"abc","e":"HOST_DOWN","s":"OPEN","t":1700000000,"h":"h1","hp":"db1.example.com:27017"}`, true},
	{` { "i" : "x" ,` + "\n\t" + `"t" : -5 , "u":0 } `, true},
	{`{"hr":"Zoë ✓","t":9223372036854775807}`, true},
	{`{"i":"a","i":"b","t":1,"t":2}`, true},
	{`{"tg":["a"]}`, false},
	{`{"l":{"job":"node"}}`, false},
	{`{"v":{"number":1.5,"units":"RAW"}}`, false},
	{`{"hr":"say \"hi\""}`, false},
	{`{"hr":"\u00e9"}`, false},
	{`{"i":null}`, false},
	{`{"t":1.5}`, false},
	{`{"t":1e3}`, false},
	{`{"t":01}`, false},
	{`{"t":-}`, false},
	{`{"t":9223372036854775808}`, false},
	{`{"t":"1"}`, false},
	{`{"s":1}`, false},
	{`{"I":"case differs"}`, false},
	{`{"zz":"unknown"}`, false},
	{"{\"hr\":\"bad \xff utf-8\"}", false},
	{"{\"hr\":\"tab\there\"}", false},
	{`{"i":"a"`, false},
	{`{"i":"a",}`, false},
	{`{"i":"a"} x`, false},
	{`{"i" "a"}`, false},
	{`[]`, false},
	{``, false},
}

// The flat decoder reads what it reads exactly as encoding/json does, and leaves the rest.
func TestDecodeFlatAlertDoc(t *testing.T) {
	for _, c := range flatDocs {
		var got alertDoc
		if ok := decodeFlatAlertDoc([]byte(c.doc), &got); ok != c.flat {
			t.Errorf("%q: read by hand %v, want %v", c.doc, ok, c.flat)
			continue
		}
		if c.flat {
			sameAsEncodingJSON(t, []byte(c.doc), got)
		}
	}
}

// What the store writes for alerts without composite fields (nearly all) is read by hand.
func TestStoredAlertsReadByHand(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, a := range []herald.Alert{
		{ID: herald.NewID(now), GroupID: herald.NewID(now), AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
			Status: "OPEN", Created: herald.At(now), Updated: herald.At(now), HostID: "h1", HostnameAndPort: "db1:27017", ReplicaSetName: "rs0"},
		{ID: herald.NewID(now), GroupID: herald.NewID(now), EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Status: "CLOSED",
			Created: herald.At(now), Updated: herald.At(now.Add(time.Hour)), Resolved: herald.At(now.Add(time.Hour)),
			LastNotified: herald.At(now.Add(time.Minute)), AcknowledgedUntil: herald.At(now.Add(2 * time.Hour)),
			AcknowledgementComment: "on it", AcknowledgingUsername: "zoë", MetricName: "CONNECTIONS"},
	} {
		b, err := encodeDoc(a)
		if err != nil {
			t.Fatal(err)
		}
		var d alertDoc
		if !decodeFlatAlertDoc(b, &d) {
			t.Errorf("%s was left to encoding/json", b)
			continue
		}
		sameAsEncodingJSON(t, b, d)
		var back herald.Alert
		if err := decodeDoc(b, &back); err != nil || !reflect.DeepEqual(back, a) {
			t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, a)
		}
	}
}

func sameAsEncodingJSON(t *testing.T, b []byte, got alertDoc) {
	t.Helper()
	var want alertDoc
	if err := json.Unmarshal(b, &want); err != nil {
		t.Errorf("%q read by hand, but encoding/json refuses it: %v", b, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q read by hand as %+v, encoding/json reads %+v", b, got, want)
	}
}

// Whatever the bytes, a document the flat decoder reads is one encoding/json reads the same.
func FuzzDecodeFlatAlertDoc(f *testing.F) {
	for _, c := range flatDocs {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got alertDoc
		if decodeFlatAlertDoc(b, &got) {
			sameAsEncodingJSON(t, b, got)
		}
	})
}
