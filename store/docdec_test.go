package store

import (
	"encoding/json"
	"reflect"
	"slices"
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
	{`{"n":null      ,"i":"","e":"HOST_DOWN","s":"OPEN","t":1800000000}`, true}, // never notified, in its slot
	{`{"n":1800000090,"i":"","t":1800000000}`, true},
	{`{"n":null}`, true},
	{`{"t":1,"t":null,"u" : null` + "\n\t" + `}`, true},
	{`{"n":nul}`, false},
	{`{"n":nulll}`, false},
	{`{"n":Null}`, false},
	{`{"n":n`, false},
	{`{"n":null`, false},
	{`{"hr":null}`, false},
	{`{"tg":null}`, false},
	{`{"l":null}`, false},
	{`{"tg":["a"]}`, false},
	{`{"tg":[]}`, false},
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
		var got, fromString alertDoc
		ok := decodeFlatAlertDoc(b, &got)
		if ok {
			sameAsEncodingJSON(t, b, got)
		}
		// Redis's answer is read as the string it is: the same, from the same text.
		if decodeFlatAlertDoc(string(b), &fromString) != ok || ok && !reflect.DeepEqual(fromString, got) {
			t.Errorf("%q read from a string as %+v, from bytes as %+v (%v)", b, fromString, got, ok)
		}
	})
}

// projectDocs are project documents of each shape, true where the flat decoder reads them.
var projectDocs = []struct {
	doc  string
	flat bool
}{
	{`{}`, true},
	{`{"id":"6730d1f0aa00000000000001","name":"Prod ✓","orgId":"6730d1f0aa00000000000002","created":"2026-11-21T18:40:55Z","tags":[]}`, true},
	{`{"id":"x", "tags" : [ ] , "created":"2026-11-21T19:40:55+01:00"}`, true},
	{`{"created":"2026-11-21"}`, true},
	{`{"id":"a","id":"b"}`, true},
	{`{"tags":["a"]}`, false},
	{`{"tags":null}`, false},
	{`{"tags":[1]}`, false},
	{`{"tags":[}`, false},
	{`{"created":"yesterday"}`, false},
	{`{"created":null}`, false},
	{`{"created":1}`, false},
	{`{"id":1}`, false},
	{`{"id":[]}`, false},
	{`{"name":"say \"hi\""}`, false},
	{`{"ID":"case differs"}`, false},
	{`{"zz":"unknown"}`, false},
	{`{"id":"a"`, false},
	{``, false},
}

// The flat project decoder reads what it reads exactly as encoding/json does (into a project
// already holding values too), and leaves the rest.
func TestDecodeFlatProject(t *testing.T) {
	for _, c := range projectDocs {
		var got herald.Project
		if ok := decodeFlatProject([]byte(c.doc), &got); ok != c.flat {
			t.Errorf("%q: read by hand %v, want %v", c.doc, ok, c.flat)
			continue
		}
		if c.flat {
			projectSameAsEncodingJSON(t, []byte(c.doc))
		}
	}
}

// What the store writes for a new project is read by hand.
func TestStoredProjectReadByHand(t *testing.T) {
	p, _ := herald.NewProject("Prod", herald.NewID(time.Now()), nil, time.Now())
	b, err := encodeDoc(p)
	if err != nil {
		t.Fatal(err)
	}
	var flat herald.Project
	if !decodeFlatProject(b, &flat) {
		t.Fatalf("%s was left to encoding/json", b)
	}
	projectSameAsEncodingJSON(t, b)
	var back herald.Project
	if err := decodeDoc(b, &back); err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("%s read back as %+v (%v), want %+v", b, back, err, p)
	}
}

// Whatever the bytes, a project document the flat decoder reads is one encoding/json reads the same.
func FuzzDecodeFlatProject(f *testing.F) {
	for _, c := range projectDocs {
		f.Add([]byte(c.doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, fromString herald.Project
		ok := decodeFlatProject(b, &got)
		if ok {
			projectSameAsEncodingJSON(t, b)
		}
		if decodeFlatProject(string(b), &fromString) != ok || ok && !reflect.DeepEqual(fromString, got) {
			t.Errorf("%q read from a string as %+v, from bytes as %+v (%v)", b, fromString, got, ok)
		}
	})
}

// projectSameAsEncodingJSON checks that decodeDoc reads b as json.Unmarshal does, into an
// empty project and into one already holding values.
func projectSameAsEncodingJSON(t *testing.T, b []byte) {
	t.Helper()
	held := herald.Project{ID: "held", Name: "held", OrgID: "held", Created: herald.At(time.Unix(1, 0)), Tags: []string{"held"}}
	for _, start := range []herald.Project{{}, held} {
		want, got := start, start
		want.Tags = slices.Clone(start.Tags)
		if err := json.Unmarshal(b, &want); err != nil {
			t.Errorf("%q read by hand, but encoding/json refuses it: %v", b, err)
			return
		}
		if err := decodeDoc(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q read by hand as %+v (%v), encoding/json reads %+v", b, got, err, want)
		}
	}
}
