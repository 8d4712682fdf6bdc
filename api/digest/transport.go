package digest

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/http"
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
	ha1   string // HA1 of realm, Username and Password: made once a challenge, not a request
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
	t.ha1 = HA1In(t.realm, t.Username, t.Password)
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
	nonce, realm, ha1, count := t.nonce, t.realm, t.ha1, t.nc
	t.mu.Unlock()
	var ncb [8]byte
	nc := string(appendCount(ncb[:0], count))
	var b [8]byte
	_, _ = rand.Read(b[:])
	var cb [16]byte
	cnonce := string(hex.AppendEncode(cb[:0], b[:]))
	uri := req.URL.RequestURI()
	var rb [2 * md5.Size]byte
	response := appendResponseDigest(rb[:0], ha1, nonce, nc, cnonce, "auth", req.Method, uri)
	// The header as fmt would write it, built without fmt (scenario 7's 64 clients make one a
	// request on the machine the server under test runs on).
	h := make([]byte, 0, 160+len(t.Username)+len(realm)+len(nonce)+len(uri))
	h = append(h, `Digest username="`...)
	h = appendQuoted(h, t.Username)
	h = append(h, `", realm="`...)
	h = appendQuoted(h, realm)
	h = append(append(append(h, `", nonce="`...), nonce...), `", uri="`...)
	h = appendQuoted(h, uri)
	h = append(append(append(h, `", algorithm=MD5, qop=auth, nc=`...), nc...), `, cnonce="`...)
	h = append(append(append(append(h, cnonce...), `", response="`...), response...), '"')
	out := req.Clone(req.Context())
	out.Header["Authorization"] = []string{string(h)}
	return out
}

// appendCount appends nc as the header writes it: eight lower-case hex digits (more for a
// count past 2^32, as %08x would).
func appendCount(b []byte, nc uint64) []byte {
	const digits = "0123456789abcdef"
	var buf [16]byte
	i := len(buf)
	for n := nc; n > 0 || i > len(buf)-8; n >>= 4 {
		i--
		buf[i] = digits[n&0xf]
	}
	return append(b, buf[i:]...)
}

// appendQuoted appends s with its backslashes and double quotes escaped, for a quoted-string.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == '"' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}
