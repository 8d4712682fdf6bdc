package sms

import (
	"strings"
	"testing"
)

// Characters outside the GSM 7-bit alphabet become '?', so that one cannot make a text UCS-2
// (70 to a segment); the extension table's take two places; a cut never splits one and keeps
// within its places.
func TestGSM(t *testing.T) {
	for _, c := range []struct{ in, gsm string }{
		{"db1.example.com:27017", "db1.example.com:27017"},
		{"Zürich ñ é à Ø", "Zürich ñ é à Ø"},
		{"crème 🔥 ✓ 東京 ç", "crème ? ? ?? ?"},
	} {
		if got := toGSM(c.in); got != c.gsm {
			t.Errorf("toGSM(%q) = %q, want %q", c.in, got, c.gsm)
		}
	}
	for _, c := range []struct {
		in string
		n  int
	}{{"abc", 3}, {"{a}", 5}, {"€", 2}, {"ü", 1}} {
		if got := gsmLen(c.in); got != c.n {
			t.Errorf("gsmLen(%q) = %d, want %d", c.in, got, c.n)
		}
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abcdef", 6, "abcdef"}, {"abcdefg", 6, "abc..."}, {"ab{cdefg", 6, "ab..."}, {"a{bcdefg", 6, "a{..."}} {
		if got := cutGSM(c.in, c.n, "..."); got != c.want || gsmLen(got) > c.n {
			t.Errorf("cutGSM(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if Segments(strings.Repeat("a", 160)) != 1 || Segments(strings.Repeat("a", 161)) != 2 || Segments("✓"+strings.Repeat("a", 69)) != 1 || Segments("✓"+strings.Repeat("a", 70)) != 2 {
		t.Error("Segments miscounts")
	}
}
