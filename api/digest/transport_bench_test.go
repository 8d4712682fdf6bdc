package digest

import (
	"net/http"
	"testing"
)

// Every request of a client that keeps its nonce is authorized afresh (a count up, a new
// cnonce, the response digest): bench's scenario 7 runs 64 such clients on the machine the
// server under test runs on.
func BenchmarkTransportAuthorize(b *testing.B) {
	tr := &Transport{Username: testUser, Password: testPassword, nonce: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", realm: Realm}
	tr.ha1 = HA1In(tr.realm, tr.Username, tr.Password) // as the challenge's answer sets it

	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/api/public/v1.0/groups/6730d1f0aa00000000000001/alerts/6730d1f0aa00000000000002", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.authorize(req)
	}
}
