package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/obsjson"
)

// A posted batch read whole by the fast reader answers exactly as the streaming decoder does:
// the same observations and kept bytes, or the same refusal, whichever reader takes it (the
// fast one leaves what it is not sure of to the streaming one).
func TestDecodeBatchFastReadAnswersAsStreaming(t *testing.T) {
	obs := func(host string) string {
		return `{"eventTypeName":"HOST_DOWN","active":true,"hostId":"` + host + `","hostnameAndPort":"` + host + `:27017"}`
	}
	const max = 3
	for _, tc := range []struct {
		name, body string
		short      int  // the body ends this many bytes before its Content-Length
		fast       bool // the fast reader takes it whole
	}{
		{name: "compact", body: "[" + obs("a") + "," + obs("b") + "]", fast: true},
		{name: "empty array", body: "[]", fast: true},
		{name: "null", body: "null"},
		{name: "spaced", body: "[ " + obs("a") + " ]"},
		{name: "unknown attribute", body: `[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h","colour":"red"}]`},
		{name: "unknown attribute of a composite", body: `[{"metricName":"ASSERT_REGULAR","value":1,"hostId":"h","currentValue":{"number":1,"units":"RAW","extra":1}}]`},
		{name: "attribute in another case", body: `[{"eventTypeName":"HOST_DOWN","active":true,"HostId":"h"}]`},
		{name: "too many", body: "[" + strings.Repeat(obs("a")+",", max) + obs("b") + "]", fast: true},
		{name: "an invalid item before the cap", body: "[" + obs("a") + `,{"eventTypeName":"NO_SUCH_TYPE","hostId":"h"},` + obs("b") + "," + obs("c") + "," + obs("d") + "]", fast: true},
		{name: "an invalid item", body: "[" + obs("a") + `,{"active":true}]`, fast: true},
		{name: "a member twice", body: "[" + obs("a") + `,{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h","hostId":"i"}]`},
		{name: "a label twice", body: `[{"eventTypeName":"PROMETHEUS_ALERT","active":true,"labels":{"a":"1","a":"2"}}]`},
		{name: "labels in two cases", body: `[{"eventTypeName":"PROMETHEUS_ALERT","active":true,"labels":{"a":"1","A":"2"}}]`, fast: true},
		{name: "not UTF-8", body: "[" + obs("a") + `,{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h","hostnameAndPort":"\xff"}]`},
		{name: "a label not UTF-8", body: "[{\"eventTypeName\":\"PROMETHEUS_ALERT\",\"active\":true,\"labels\":{\"a\":\"\xff\"}}]"},
		{name: "trailing data", body: "[" + obs("a") + "]x"},
		{name: "two arrays", body: "[" + obs("a") + "][]"},
		{name: "cut short", body: "[" + obs("a") + "," + obs("b") + "]", short: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func(fast fastReader[herald.Observation]) string {
				r := httptest.NewRequest("POST", "/", nil)
				r.Body = io.NopCloser(io.MultiReader(strings.NewReader(tc.body), errorReader{errIf(tc.short > 0)}))
				r.ContentLength = int64(len(tc.body) + tc.short)
				c := &call{r: r, bodyLimit: observationsBodyLimit}
				items, batch, err := decodeBatch(c, max, herald.Observation.Validate, fast)
				decoded, _ := json.Marshal(items)
				return fmt.Sprintf("items %s (%d)\nbatch %s\nerror %v", decoded, len(items), batch, err)
			}
			streaming, fast := read(nil), read(obsjson.Read)
			if fast != streaming {
				t.Errorf("read whole:\n%s\nstreamed:\n%s", fast, streaming)
			}
			if _, took := obsjson.Compact([]byte(tc.body)); tc.short == 0 && took != tc.fast {
				t.Errorf("the fast reader takes it: %v, want %v", took, tc.fast)
			}
		})
	}
}

// errIf is io.ErrUnexpectedEOF when cut, as a body shorter than its Content-Length reads.
func errIf(cut bool) error {
	if cut {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// The streaming decoder alone reads bodies over fastBatchLimit, and those of unknown length.
func TestDecodeBatchReadsLargeBodiesAsStreamed(t *testing.T) {
	var asked int
	fast := func(b []byte, each func(herald.Observation, int) error) ([]herald.Observation, bool, error) {
		asked++
		return obsjson.Read(b, each)
	}
	for _, length := range []int64{-1, fastBatchLimit + 1} {
		body := "[" + strings.Repeat(" ", int(max(length, 2))-2) + "]"
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.ContentLength = length
		c := &call{r: r, bodyLimit: observationsBodyLimit}
		if _, _, err := decodeBatch(c, 10, herald.Observation.Validate, fast); err != nil {
			t.Fatalf("length %d: %v", length, err)
		}
	}
	if asked != 0 {
		t.Errorf("the fast reader was given %d bodies, want none", asked)
	}
}

// BenchmarkDecodeBatch: a storm's batch of 500 HOST_DOWN observations as postObservations
// reads it, streamed by encoding/json and read whole by obsjson.
func BenchmarkDecodeBatch(b *testing.B) {
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprintf(`{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h-%d","hostnameAndPort":"h-%d.example.com:27017"}`, i, i)
	}
	body := "[" + strings.Join(items, ",") + "]"
	for _, tc := range []struct {
		name string
		fast fastReader[herald.Observation]
	}{{"streamed", nil}, {"obsjson", obsjson.Read}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r := httptest.NewRequest("POST", "/", strings.NewReader(body))
				c := &call{r: r, bodyLimit: observationsBodyLimit}
				if _, _, err := decodeBatch(c, herald.MaxObservationsPerRequest, herald.Observation.Validate, tc.fast); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items)), "ns/observation")
		})
	}
}

// Two attribute names are one to checkShape exactly when encoding/json matches them to the
// same field (bytes.EqualFold), the odd orbits of case folding included.
func TestFoldNameIsEqualFold(t *testing.T) {
	names := []string{"enabled", "Enabled", "ENABLED", "enabſed", "eventTypeName", "EVENTTYPENAME", "s", "S", "ſ",
		"k", "K", "\u212a", "σ", "ς", "Σ", "é", "É", "ß", "ẞ", "ǅ", "ǆ", "Ǆ", "", "a\ufffdb"}
	for _, a := range names {
		for _, b := range names {
			if same, want := foldName(a) == foldName(b), bytes.EqualFold([]byte(a), []byte(b)); same != want {
				t.Errorf("%q and %q fold alike: %v, EqualFold: %v", a, b, same, want)
			}
		}
	}
}
