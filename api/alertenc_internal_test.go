package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/alerttest"
)

// The hand-written encoder of an alert's answer writes exactly what marshal writes of the
// alert with its self link spliced in, for every field filled (a field added to herald.Alert
// and not to the encoder fails alerttest), for none, and for strings encoding/json escapes.
func TestAlertAnswerEncodesAsEncodingJSON(t *testing.T) {
	for name, a := range alerttest.Alerts(t) {
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
			// Appended to a buffer used before (bodyBuffers'), too small or large enough:
			// the same bytes, whatever it held.
			for _, used := range [][]byte{bytes.Repeat([]byte("x"), 7), bytes.Repeat([]byte("{}"), 4096)} {
				for _, v := range []any{a, &a} { // as a value, and as getAlert gives it
					got, err := appendWithLinks(used[:0], v, self)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s (%T), self %q, in a buffer of %d: %v\n got %s\nwant %s", name, v, self, cap(used), err, got, want)
					}
				}
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
