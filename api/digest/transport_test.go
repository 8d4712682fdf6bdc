package digest

import (
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
