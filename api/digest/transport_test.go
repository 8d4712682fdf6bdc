package digest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The client side against the server side: a challenge is answered once, then the nonce is
// reused with increasing counts (no further challenge), bodies are sent again, and a wrong
// password ends at the 401.
func TestTransport(t *testing.T) {
	f := newFixture(t)
	tr := &Transport{Username: testUser, Password: testPassword}
	c := &http.Client{Transport: tr}
	for i := 1; i <= 3; i++ {
		resp, err := c.Post(f.srv.URL+"/x?n=1", "application/json", strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if tr.nc != 3 {
		t.Errorf("three requests on one nonce should count 3, counted %d (a challenge per request?)", tr.nc)
	}
	bad := &http.Client{Transport: &Transport{Username: testUser, Password: "wrong"}}
	resp, err := bad.Get(f.srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	}
}

// authorize writes the header fmt wrote before it was built by hand: the same parameters in
// the same order, quotes escaped, nc as %08x, the response digest over HA1 of the
// challenge's realm.
func TestTransportAuthorizeHeader(t *testing.T) {
	for _, tc := range []struct {
		user, realm, path string
		nc                uint64
	}{
		{"abcdefgh", Realm, "/api/public/v1.0/groups/g/alerts/a", 0},
		{`we"ird\user`, `a "realm"`, "/x?n=1&q=%22", 0xfffffffe},
		{"u", "r", "/", 1<<32 + 4},
	} {
		tr := &Transport{Username: tc.user, Password: "secret", nonce: "NONCE", realm: tc.realm, nc: tc.nc}
		tr.ha1 = HA1In(tc.realm, tc.user, "secret")
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1"+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := tr.authorize(req).Header.Get("Authorization")
		p, err := readParams(got)
		if err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		cnonce, _ := p.get("cnonce")
		quote := func(s string) string { return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) }
		nc, uri := fmt.Sprintf("%08x", tc.nc+1), req.URL.RequestURI()
		want := fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=MD5, qop=auth, nc=%s, cnonce="%s", response="%s"`,
			quote(tc.user), quote(tc.realm), "NONCE", quote(uri), nc, cnonce,
			responseDigest(HA1In(tc.realm, tc.user, "secret"), "NONCE", nc, cnonce, "auth", "GET", uri))
		if got != want {
			t.Errorf("header\n%s\nwant\n%s", got, want)
		}
		if len(cnonce) != 16 || !isHex(cnonce) {
			t.Errorf("cnonce %q: not 16 hex digits", cnonce)
		}
		if req.Header.Get("Authorization") != "" {
			t.Error("authorize changed the caller's request")
		}
	}
}
