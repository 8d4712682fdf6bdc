package digest

import "testing"

// A Digest header is parsed on every authenticated request.
func BenchmarkParseAuthorization(b *testing.B) {
	h := `Digest username="abcdefgh", realm="MMS Public API", nonce="AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", uri="/api/atlas/v1.0/groups/6730d1f0aa00000000000001/alerts/6730d1f0aa00000000000002", response="0123456789abcdef0123456789abcdef", qop=auth, nc=0000002a, cnonce="0a4f113b", algorithm=MD5`
	b.ReportAllocs()
	for b.Loop() {
		parseAuthorization(h)
	}
}

// BenchmarkReadParams is the server's parse of the same header (Verifier.Read's; the one above
// is the tests' map of every parameter).
func BenchmarkReadParams(b *testing.B) {
	h := `Digest username="abcdefgh", realm="MMS Public API", nonce="AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", uri="/api/atlas/v1.0/groups/6730d1f0aa00000000000001/alerts/6730d1f0aa00000000000002", response="0123456789abcdef0123456789abcdef", qop=auth, nc=0000002a, cnonce="0a4f113b", algorithm=MD5`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readParams(h); err != nil {
			b.Fatal(err)
		}
	}
}
