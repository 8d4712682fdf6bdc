package digest

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// FuzzParseAuthorization checks that the parser never panics, fails only with ErrInvalid or
// ErrNoCredentials, and that what it accepts survives formatting and parsing again.
func FuzzParseAuthorization(f *testing.F) {
	for _, tc := range parseCases {
		if len(tc.header) <= 1024 {
			f.Add(tc.header)
		}
	}
	f.Add(validCreds("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").header())
	f.Add(`Digest realm="Public API", domain="", nonce="x", algorithm=MD5, qop="auth", stale=false`)
	f.Add("Digest a=\"\\\"\\\\\", b=\"\xff\xfe\", c=1")
	f.Fuzz(func(t *testing.T, header string) {
		params, err := parseAuthorization(header)
		sameParams(t, header, params, err)
		if err != nil {
			if params != nil {
				t.Errorf("parse %q: parameters %q with error %v", header, params, err)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNoCredentials) {
				t.Errorf("parse %q: unexpected error %v", header, err)
			}
			return
		}
		again := formatParams(params)
		if len(again) > maxHeaderLen {
			return
		}
		reparsed, err := parseAuthorization(again)
		if err != nil {
			t.Fatalf("parse %q gave %q, formatted as %q which does not parse: %v", header, params, again, err)
		}
		if !maps.Equal(params, reparsed) {
			t.Fatalf("parse %q gave %q, formatted as %q parsed as %q", header, params, again, reparsed)
		}
	})
}

// formatParams writes params back as a Digest header with every value quoted.
func formatParams(params map[string]string) string {
	escape := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(params)) {
		parts = append(parts, name+`="`+escape.Replace(params[name])+`"`)
	}
	return "Digest " + strings.Join(parts, ", ")
}

// sameParams checks that readParams, what the server reads a header with, reads what
// parseAuthorization does (params, or err): the same parameters, refusing the same headers.
func sameParams(t *testing.T, header string, params map[string]string, err error) {
	t.Helper()
	p, perr := readParams(header)
	if (err == nil) != (perr == nil) || errors.Is(perr, ErrInvalid) != errors.Is(err, ErrInvalid) {
		t.Fatalf("parse %q: %v, read as %v", header, err, perr)
	}
	if err != nil {
		return
	}
	var others []string
	for name, value := range params {
		if slices.Contains(paramNames[:], name) {
			if got, ok := p.get(name); !ok || got != value {
				t.Errorf("parse %q: %s=%q, read as %q (%v)", header, name, value, got, ok)
			}
		} else {
			others = append(others, name)
		}
	}
	for _, name := range paramNames {
		if _, ok := p.get(name); ok != hasKey(params, name) {
			t.Errorf("parse %q: %s read as present %v", header, name, ok)
		}
	}
	slices.Sort(others)
	if got := slices.Sorted(slices.Values(append(p.others[:p.nOther:p.nOther], p.more...))); !slices.Equal(got, others) {
		t.Errorf("parse %q: other parameters %q, read as %q", header, others, got)
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// FuzzQuotedAsByteByByte checks quoted against its byte-by-byte reading alone
// (quotedByteByByte, all of it before the common case was found with IndexByte): the same
// content, the same end, for every input, escapes, control characters and unterminated
// strings included.
func FuzzQuotedAsByteByByte(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b", x`, `"a\\"`, "\"a\tb\"", "\"a\x01b\"", "\"a\x7fb\"", `"unterminated`, `""`,
		`"a\`, "\"\\\x01\"", "\"\xff\xfe\"", `"a"b"`, `"nonce" , uri="/x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.HasPrefix(s, `"`) {
			s = `"` + s
		}
		p, ref := &paramParser{s: s}, &paramParser{s: s}
		got, ok := p.quoted()
		want, wantOK := ref.quotedByteByByte()
		if got != want || ok != wantOK || (ok && p.i != ref.i) {
			t.Errorf("quoted(%q) = %q %v, ends at %d; byte by byte %q %v, at %d", s, got, ok, p.i, want, wantOK, ref.i)
		}
	})
}

// The token characters' table is RFC 7230's tchar, byte for byte.
func TestTokenChars(t *testing.T) {
	for c := range 256 {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c))
		if isTokenChar(byte(c)) != want {
			t.Errorf("isTokenChar(%q) = %v", byte(c), !want)
		}
	}
}
