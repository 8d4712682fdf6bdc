package api

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// A Content-Length value is the length in decimal, one value of length and capacity 1 (a
// handler adding to it appends to a copy), the same slice for the same length below the bound.
func TestContentLength(t *testing.T) {
	for _, n := range []int{0, 7, 99, 100, 655, maxSharedLength - 1, maxSharedLength, 1 << 30} {
		for range 2 { // made, then kept (below the bound)
			v := contentLength(n)
			if len(v) != 1 || cap(v) != 1 || v[0] != strconv.Itoa(n) {
				t.Fatalf("contentLength(%d) = %q (capacity %d)", n, v, cap(v))
			}
		}
		if shared := &contentLength(n)[0] == &contentLength(n)[0]; shared != (n < maxSharedLength) {
			t.Errorf("contentLength(%d) shared: %v", n, shared)
		}
	}
}

// href of a path in parts is url of the joined path, whatever the base: the request's host
// over HTTP or TLS, or the configured external URL.
func TestHrefAsURL(t *testing.T) {
	a := herald.Alert{GroupID: "g1", ID: "a1"}
	parts := alertPathParts(&a)
	for _, external := range []string{"", "https://herald.example.com:8443"} {
		for _, tls := range []bool{false, true} {
			r := httptest.NewRequest(http.MethodGet, "http://api.example:8080/x", nil)
			if tls {
				r.TLS = &tlsState
			}
			c := &call{s: &Server{cfg: Config{ExternalURL: external}}, r: r}
			if got, want := c.href(parts[:]...), c.url(alertPath(a)); got != want {
				t.Errorf("external %q, TLS %v: %q, want %q", external, tls, got, want)
			}
			if want := map[bool]string{false: "http", true: "https"}[tls] + "://api.example:8080" + BasePath + "/groups/g1/alerts/a1"; external == "" && c.url(alertPath(a)) != want {
				t.Errorf("TLS %v: %q, want %q", tls, c.url(alertPath(a)), want)
			}
		}
	}
}

var tlsState tls.ConnectionState
