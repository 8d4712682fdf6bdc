package digest

import (
	"errors"
	"net/http"
	"testing"
)

// Only a well-formed answer from an unknown user or with a wrong secret is a guess (what a
// server throttles); a replay, a malformed header or a foreign nonce is refused but is not.
func TestWrongCredentialsAreGuesses(t *testing.T) {
	f := newFixture(t)
	nonce := f.challenge(t)["nonce"]
	for _, tc := range []struct {
		name  string
		creds func() creds
		guess bool
	}{
		{"wrong password", func() creds { c := validCreds(nonce); c.pass = "wrong"; return c }, true},
		{"unknown user", func() creds { c := validCreds(nonce); c.user = "nobody"; return c }, true},
		{"wrong realm", func() creds { c := validCreds(nonce); c.realm = MonitoringRealm; return c }, false},
		{"made-up nonce", func() creds { return validCreds("dcd98b7102dd2f0e8b11d0f600bfb0c093") }, false},
	} {
		expectResult(t, f.get(t, testPath, tc.creds().header()), http.StatusUnauthorized, "invalid")
		if _, err := f.last(); errors.Is(err, ErrWrongCredentials) != tc.guess {
			t.Errorf("%s: %v, want a guess: %v", tc.name, err, tc.guess)
		}
	}
}

// A Verifier of another realm challenges in it and takes only answers computed in it.
func TestOtherRealm(t *testing.T) {
	f := newFixture(t)
	f.v.Realm = MonitoringRealm
	ch := f.challenge(t)
	if ch["realm"] != MonitoringRealm {
		t.Fatalf("challenge realm %q", ch["realm"])
	}
	api := validCreds(ch["nonce"])
	expectResult(t, f.get(t, testPath, api.header()), http.StatusUnauthorized, "invalid")
	// The users' HA1 is the API realm's: an answer in the console's realm verifies against it
	// only if the server holds that realm's HA1, which this fixture does not.
	console := validCreds(ch["nonce"])
	console.realm = MonitoringRealm
	expectResult(t, f.get(t, testPath, console.header()), http.StatusUnauthorized, "invalid")
	if _, err := f.last(); !errors.Is(err, ErrWrongCredentials) {
		t.Errorf("an answer in the right realm with another realm's secret: %v, want a wrong secret", err)
	}
}

// Username is the name a header claims, "" without a parsable Digest header.
func TestUsername(t *testing.T) {
	for header, want := range map[string]string{
		validCreds("n").header(): testUser,
		"":                       "",
		"Basic dXNlcjpwYXNz":     "",
		`Digest username="a`:     "",
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		if got := Username(r); got != want {
			t.Errorf("Username(%q) = %q, want %q", header, got, want)
		}
	}
}
