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
