package digest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Transport is the client side: an http.RoundTripper that answers a Digest challenge with
// Username and Password and then reuses the nonce with increasing counts, as curl --digest
// does. Requests with a body must be replayable (http.NewRequest sets GetBody for the usual
// readers).
type Transport struct {
	Username, Password string
	Base               http.RoundTripper // nil: http.DefaultTransport

	mu    sync.Mutex
	nonce string
	realm string // the challenge's
	nc    uint64
}

// RoundTrip sends req, answering one challenge.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(t.authorize(req))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	params, perr := readParams(challenge)
	nonce, _ := params.get("nonce")
	if perr != nil || nonce == "" {
		return resp, nil // not a digest challenge: the caller sees the 401
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot send the body again
	}
	resp.Body.Close()
	t.mu.Lock()
	t.nonce, t.nc = nonce, 0
	t.realm, _ = params.get("realm")
	t.mu.Unlock()
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return base.RoundTrip(t.authorize(retry))
}

// authorize is req with an Authorization header for the current nonce (req itself before the
// first challenge).
func (t *Transport) authorize(req *http.Request) *http.Request {
	t.mu.Lock()
	if t.nonce == "" {
		t.mu.Unlock()
		return req
	}
	t.nc++
	nonce, realm, nc := t.nonce, t.realm, fmt.Sprintf("%08x", t.nc)
	t.mu.Unlock()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	cnonce := hex.EncodeToString(b)
	uri := req.URL.RequestURI()
	response := responseDigest(HA1In(realm, t.Username, t.Password), nonce, nc, cnonce, "auth", req.Method, uri)
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=MD5, qop=auth, nc=%s, cnonce="%s", response="%s"`,
		quote(t.Username), quote(realm), nonce, quote(uri), nc, cnonce, response))
	return out
}

func quote(s string) string { return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) }
