package digest

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Realm is the protection space of the public API.
const Realm = "Public API"

// MonitoringRealm is the protection space of the queues' web console: another realm than the
// API's, so that a browser logged in to the console never replays those credentials to the
// API on another page's behalf.
const MonitoringRealm = "Herald Monitoring"

// HA1 is MD5(username:realm:password) in lower-case hex for the API's realm: the only thing a
// server stores of a secret.
func HA1(username, password string) string { return HA1In(Realm, username, password) }

// HA1In is HA1 for another realm.
func HA1In(realm, username, password string) string {
	return md5Hex(username + ":" + realm + ":" + password)
}

// NonceCounter remembers the highest nonce count seen per nonce, so a replayed or backwards count
// is refused even across several API processes (the implementation is Redis-backed, elsewhere).
type NonceCounter interface {
	// Advance records nc for nonce if it is greater than any count seen for that nonce and reports
	// whether it was. ttl bounds how long the record must be kept (the nonce lifetime).
	Advance(ctx context.Context, nonce string, nc uint64, ttl time.Duration) (bool, error)
}

// Credentials looks up the HA1 of a user name (a public key). ok=false: unknown user.
type Credentials func(ctx context.Context, username string) (ha1 string, ok bool, err error)

// Verifier issues Digest challenges and verifies Authorization headers. Its fields are read-only
// once set, so one Verifier serves concurrent requests.
type Verifier struct {
	Secret      []byte        // HMAC key that signs nonces; shared by every API process
	Lifetime    time.Duration // how long a nonce is valid (e.g. 5 minutes)
	Counter     NonceCounter
	Credentials Credentials
	Now         func() time.Time // nil: time.Now
	Realm       string           // "": Realm
}

// Result of verifying a request.
type Result struct {
	Username string // the authenticated user name
}

var (
	// ErrNoCredentials: the request has no Authorization header, or one of another scheme.
	ErrNoCredentials = errors.New("digest: no digest credentials")
	// ErrInvalid: malformed header, wrong realm, uri, qop or algorithm, unknown user, wrong
	// response or a replayed nonce count.
	ErrInvalid = errors.New("digest: invalid credentials")
	// ErrWrongCredentials: a well-formed answer to a nonce of this server from an unknown user
	// or with the wrong secret: a guess, which errors.Is also reports as ErrInvalid.
	ErrWrongCredentials = errors.New("digest: unknown user or wrong secret")
	// ErrStale: a nonce this server issued, correctly signed and answered with the right
	// response, but expired. The caller answers with Challenge(true).
	ErrStale = errors.New("digest: stale nonce")
)

const (
	nonceTimeLen   = 8
	nonceRandomLen = 12
	nonceMACLen    = 16
	nonceRawLen    = nonceTimeLen + nonceRandomLen + nonceMACLen
	nonceMACDomain = "herald digest nonce v1\x00"

	// clockSkew is how far in the future a nonce's issue time may lie: API processes sharing the
	// secret do not share a clock.
	clockSkew = time.Minute

	// maxHeaderLen bounds the Authorization header parsed; real ones are a few hundred bytes.
	maxHeaderLen = 16 << 10
)

var nonceEncoding = base64.RawURLEncoding.Strict()

// Challenge returns the value of the WWW-Authenticate header for a fresh nonce:
//
//	Digest realm="Public API", domain="", nonce="...", algorithm=MD5, qop="auth", stale=false
//
// (stale=true when stale is true).
func (v *Verifier) Challenge(stale bool) string {
	return `Digest realm="` + v.realm() + `", domain="", nonce="` + v.newNonce() +
		`", algorithm=MD5, qop="auth", stale=` + strconv.FormatBool(stale)
}

// Verify checks the Authorization header of r. It returns ErrNoCredentials, ErrInvalid or
// ErrStale (test with errors.Is); failures of Credentials or Counter are returned wrapped, as
// other errors, and so is a Verifier missing its Secret, Lifetime, Credentials or Counter.
func (v *Verifier) Verify(r *http.Request) (Result, error) {
	if v.Counter == nil || v.Credentials == nil {
		return Result{}, errNotConfigured
	}
	a, err := v.Read(r)
	if err != nil {
		return Result{}, err
	}
	ctx := r.Context()
	ha1, ok, err := v.Credentials(ctx, a.Username())
	if err != nil {
		return Result{}, fmt.Errorf("digest: looking up credentials: %w", err)
	}
	if !ok {
		return Result{}, wrongCredentials("unknown user")
	}
	if !a.Answers(ha1) {
		return Result{}, wrongCredentials("wrong response")
	}
	if a.Stale() {
		return Result{}, ErrStale
	}
	advanced, err := v.Counter.Advance(ctx, a.Nonce(), a.Count(), v.CountLifetime())
	if err != nil {
		return Result{}, fmt.Errorf("digest: recording nonce count: %w", err)
	}
	if !advanced {
		return Result{}, ErrReplayed
	}
	return Result{Username: a.Username()}, nil
}

var errNotConfigured = errors.New("digest: verifier not configured (secret, lifetime, credentials and counter are required)")

// ErrReplayed is ErrInvalid for a nonce count not higher than one seen: a replay.
var ErrReplayed = invalid("nonce count replayed")

// Answer is a request's Digest credentials with every check made that needs neither the
// user's secret nor the nonce counts seen: Verify's first half, for a server that looks the
// secret up and records the count its own way (in one round trip to its store). Whoever uses
// it must still check Answers with the user's HA1, refuse Stale with ErrStale, and advance
// Count for Nonce, refusing a count not advanced with ErrReplayed, in that order.
type Answer struct {
	a      authorization
	method string
	stale  bool
}

// Username is the user name the credentials claim.
func (a *Answer) Username() string { return a.a.username }

// Nonce is the nonce answered; Count its nonce count.
func (a *Answer) Nonce() string { return a.a.nonce }
func (a *Answer) Count() uint64 { return a.a.nc }

// Stale: the nonce, issued by this server, expired.
func (a *Answer) Stale() bool { return a.stale }

// Answers reports whether the response was computed with ha1 (in constant time).
func (a *Answer) Answers(ha1 string) bool {
	var want, got [2 * md5.Size]byte
	appendResponseDigest(want[:0], ha1, a.a.nonce, a.a.ncText, a.a.cnonce, a.a.qop, a.method, a.a.uri)
	appendLower(got[:0], a.a.response) // checkParams made it 2*md5.Size hex digits
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

// CountLifetime is how long a nonce's count must be remembered: a nonce dated up to the clock
// skew ahead stays valid that much longer than Lifetime after its first use.
func (v *Verifier) CountLifetime() time.Duration { return v.Lifetime + clockSkew }

// Read checks the Authorization header of r as far as it can without the user's secret: its
// syntax, realm, uri, qop and algorithm, and that this server signed the nonce (not in the
// future). It returns ErrNoCredentials or ErrInvalid as Verify does.
func (v *Verifier) Read(r *http.Request) (Answer, error) {
	if len(v.Secret) == 0 || v.Lifetime <= 0 {
		return Answer{}, errNotConfigured
	}
	headers := r.Header.Values("Authorization")
	if len(headers) == 0 {
		return Answer{}, ErrNoCredentials
	}
	if len(headers) > 1 {
		return Answer{}, invalid("several Authorization headers")
	}
	params, err := readParams(headers[0])
	if err != nil {
		return Answer{}, err
	}
	a, err := checkParams(&params, r, v.realm())
	if err != nil {
		return Answer{}, err
	}
	issued, err := v.openNonce(a.nonce)
	if err != nil {
		return Answer{}, err
	}
	now := v.now()
	if issued.After(now.Add(clockSkew)) {
		return Answer{}, invalid("nonce issued in the future")
	}
	return Answer{a: a, method: r.Method, stale: now.Sub(issued) > v.Lifetime}, nil
}

// invalid wraps ErrInvalid with a reason that never holds a secret.
func invalid(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalid, reason)
}

// wrongCredentials is ErrInvalid and ErrWrongCredentials, with a reason that never holds a secret.
func wrongCredentials(reason string) error {
	return fmt.Errorf("%w: %w: %s", ErrInvalid, ErrWrongCredentials, reason)
}

// Username is the user name a request's Digest Authorization header claims, unverified, or ""
// when it has none (or one that does not parse). It lets a server refuse a throttled name
// before verifying anything.
func Username(r *http.Request) string {
	headers := r.Header.Values("Authorization")
	if len(headers) != 1 {
		return ""
	}
	p, err := readParams(headers[0])
	if err != nil {
		return ""
	}
	username, _ := p.get("username")
	return username
}

func (v *Verifier) realm() string {
	if v.Realm != "" {
		return v.Realm
	}
	return Realm
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// newNonce returns base64url(issue time || random || HMAC-SHA256(Secret, domain || time || random)[:16]).
func (v *Verifier) newNonce() string {
	var raw [nonceRawLen]byte
	binary.BigEndian.PutUint64(raw[:nonceTimeLen], uint64(v.now().UnixNano()))
	_, _ = rand.Read(raw[nonceTimeLen : nonceTimeLen+nonceRandomLen]) // never fails (crypto/rand)
	v.signNonce(raw[nonceTimeLen+nonceRandomLen:], raw[:nonceTimeLen+nonceRandomLen])
	return nonceEncoding.EncodeToString(raw[:])
}

// signNonce writes the MAC of a nonce's body (its time and random bytes) to mac.
func (v *Verifier) signNonce(mac, body []byte) {
	pool, m := nonceMACFor(v.Secret)
	in := append(append(m.in[:0], nonceMACDomain...), body...)
	m.Write(in)
	copy(mac, m.Sum(m.sum[:0])[:nonceMACLen])
	m.Reset()
	pool.Put(m)
}

// nonceMAC is an HMAC-SHA256 of nonces, with room for its input and output (what is given to
// the hash escapes: kept here, it is not allocated per request).
type nonceMAC struct {
	hash.Hash
	in  [len(nonceMACDomain) + nonceTimeLen + nonceRandomLen]byte
	sum [sha256.Size]byte
}

// macPool keeps the HMACs of nonces with one secret for reuse: every request checks its
// nonce's, and a new one costs its key's two SHA-256 blocks and a few allocations. A process
// has one secret (the API's): the pool of the last one used is kept (a Verifier is copied per
// request, so not in it).
type macPool struct {
	secret string
	sync.Pool
}

var nonceMACs atomic.Pointer[macPool]

// nonceMACFor is a reset HMAC of nonces keyed with secret, and the pool to put it back in.
func nonceMACFor(secret []byte) (*macPool, *nonceMAC) {
	p := nonceMACs.Load()
	if p == nil || p.secret != string(secret) {
		p = &macPool{secret: string(secret)}
		nonceMACs.Store(p)
	}
	if m, ok := p.Get().(*nonceMAC); ok {
		return p, m
	}
	return p, &nonceMAC{Hash: hmac.New(sha256.New, secret)}
}

// openNonce checks that nonce was signed with Secret and returns its issue time.
func (v *Verifier) openNonce(nonce string) (time.Time, error) {
	if len(nonce) != nonceEncoding.EncodedLen(nonceRawLen) {
		return time.Time{}, invalid("malformed nonce")
	}
	var encoded [(nonceRawLen*8 + 5) / 6]byte // its length, checked above
	var raw [nonceRawLen]byte
	if n, err := nonceEncoding.Decode(raw[:], encoded[:copy(encoded[:], nonce)]); err != nil || n != nonceRawLen {
		return time.Time{}, invalid("malformed nonce")
	}
	body, mac := raw[:nonceTimeLen+nonceRandomLen], raw[nonceTimeLen+nonceRandomLen:]
	var want [nonceMACLen]byte
	v.signNonce(want[:], body)
	if !hmac.Equal(mac, want[:]) {
		return time.Time{}, invalid("nonce not issued by this server")
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(raw[:nonceTimeLen]))), nil
}

// authorization is a syntactically valid Digest Authorization header of this API.
type authorization struct {
	username, nonce, uri, response, qop, cnonce string
	ncText                                      string // as sent: it enters the digest
	nc                                          uint64
}

// checkParams checks the parameters that do not need the nonce key nor the user's secret.
func checkParams(p *params, r *http.Request, realm string) (authorization, error) {
	for _, name := range [...]string{"username", "realm", "nonce", "uri", "response", "qop", "nc", "cnonce"} {
		if _, ok := p.get(name); !ok {
			return authorization{}, invalid("missing parameter " + name)
		}
	}
	get := func(name string) string { v, _ := p.get(name); return v }
	a := authorization{
		username: get("username"),
		nonce:    get("nonce"),
		uri:      get("uri"),
		response: get("response"),
		qop:      get("qop"),
		cnonce:   get("cnonce"),
		ncText:   get("nc"),
	}
	if a.username == "" {
		return a, invalid("empty username")
	}
	if _, ok := p.get("username*"); ok {
		return a, invalid("username* not supported")
	}
	if u, ok := p.get("userhash"); ok && !strings.EqualFold(u, "false") {
		return a, invalid("userhash not supported")
	}
	if get("realm") != realm {
		return a, invalid("wrong realm")
	}
	if alg, ok := p.get("algorithm"); ok && !strings.EqualFold(alg, "MD5") {
		return a, invalid("unsupported algorithm")
	}
	if a.qop != "auth" {
		return a, invalid("unsupported qop")
	}
	if len(a.ncText) != 8 || !isHex(a.ncText) {
		return a, invalid("nonce count is not 8 hex digits")
	}
	a.nc, _ = strconv.ParseUint(a.ncText, 16, 64) // cannot fail: 8 hex digits
	if a.nc == 0 {
		return a, invalid("nonce count is zero")
	}
	if a.cnonce == "" {
		return a, invalid("empty cnonce")
	}
	if len(a.response) != 2*md5.Size || !isHex(a.response) {
		return a, invalid("malformed response")
	}
	if a.uri == "" || (a.uri != r.RequestURI && a.uri != r.URL.RequestURI()) {
		return a, invalid("uri does not match the request")
	}
	return a, nil
}

// responseDigest is MD5(HA1:nonce:nc:cnonce:qop:MD5(method:uri)) in lower-case hex.
func responseDigest(ha1, nonce, nc, cnonce, qop, method, uri string) string {
	var b [2 * md5.Size]byte
	return string(appendResponseDigest(b[:0], ha1, nonce, nc, cnonce, qop, method, uri))
}

// appendResponseDigest appends responseDigest's hex digits to b (ha1 in either case), without
// allocating for answers of the usual size: every request of a kept caller computes it.
func appendResponseDigest(b []byte, ha1, nonce, nc, cnonce, qop, method, uri string) []byte {
	var buf [512]byte
	in := append(append(append(buf[:0], method...), ':'), uri...)
	var ha2 [2 * md5.Size]byte
	appendMD5Hex(ha2[:0], in)
	in = appendLower(buf[:0], ha1)
	for _, s := range [...]string{nonce, nc, cnonce, qop} {
		in = append(append(in, ':'), s...)
	}
	in = append(append(in, ':'), ha2[:]...)
	return appendMD5Hex(b, in)
}

func md5Hex(s string) string {
	var b [2 * md5.Size]byte
	return string(appendMD5Hex(b[:0], []byte(s)))
}

// appendMD5Hex appends MD5(in) in lower-case hex to b.
func appendMD5Hex(b, in []byte) []byte {
	sum := md5.Sum(in)
	return hex.AppendEncode(b, sum[:])
}

// appendLower appends s to b with ASCII upper-case letters lowered.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// params are the parameters of a Digest Authorization header that this server reads, by
// name (lower-cased), and the names of the others: read for every request, so held in place
// rather than in a map (its parse allocates nothing for a header of the usual parameters).
type params struct {
	values [len(paramNames)]string
	seen   [len(paramNames)]bool
	others [4]string // names of the parameters this server does not read: the first ones,
	nOther int       // how many of others are set,
	more   []string  // and the rest
}

// paramNames are the parameters params holds the values of.
var paramNames = [...]string{"username", "realm", "nonce", "uri", "response", "qop", "nc", "cnonce", "algorithm", "userhash", "username*"}

// get is the value of parameter name (one of paramNames), and whether the header has it.
func (p *params) get(name string) (string, bool) {
	i := paramIndex(name)
	if i < 0 {
		return "", false
	}
	return p.values[i], p.seen[i]
}

func paramIndex(name string) int {
	for i, n := range paramNames {
		if n == name {
			return i
		}
	}
	return -1
}

// set records a parameter; a repeated one is refused.
func (p *params) set(name, value string) error {
	if i := paramIndex(name); i >= 0 {
		if p.seen[i] {
			return invalid("repeated parameter")
		}
		p.values[i], p.seen[i] = value, true
		return nil
	}
	if slices.Contains(p.others[:p.nOther], name) || slices.Contains(p.more, name) {
		return invalid("repeated parameter")
	}
	if p.nOther < len(p.others) {
		p.others[p.nOther] = name
		p.nOther++
	} else {
		p.more = append(p.more, name)
	}
	return nil
}

// readParams reads an Authorization header (scanAuthorization) into params.
func readParams(header string) (params, error) {
	var p params
	err := scanAuthorization(header, p.set)
	return p, err
}

// scanAuthorization reads an Authorization header of the Digest scheme, telling set each
// parameter in turn, its name lower-cased (set's error ends the scan). An empty header or
// another scheme is ErrNoCredentials; anything malformed is ErrInvalid. Grammar (RFC 7235,
// RFC 7230 #rule):
//
//	credentials = auth-scheme 1*SP #auth-param
//	auth-param  = token BWS "=" BWS ( token / quoted-string )
//
// with empty list elements allowed and arbitrary spaces and tabs around separators. A repeated
// parameter is refused (by set): which of the two was meant is ambiguous.
func scanAuthorization(header string, set func(name, value string) error) error {
	if len(header) > maxHeaderLen {
		return invalid("header too long")
	}
	s := trimOWS(header)
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	scheme := s[:i]
	if scheme == "" || !strings.EqualFold(scheme, "Digest") {
		return ErrNoCredentials
	}
	if i < len(s) && s[i] != ' ' && s[i] != '\t' {
		return invalid("malformed scheme") // e.g. `Digest="x"`
	}
	p := &paramParser{s: s, i: i}
	for {
		p.skipOWS()
		if p.done() {
			return nil
		}
		if p.peek() == ',' {
			p.i++
			continue
		}
		name := strings.ToLower(p.token())
		if name == "" {
			return invalid("malformed parameter name")
		}
		p.skipOWS()
		if p.done() || p.peek() != '=' {
			return invalid("parameter without value")
		}
		p.i++
		p.skipOWS()
		var value string
		if !p.done() && p.peek() == '"' {
			v, ok := p.quoted()
			if !ok {
				return invalid("malformed quoted string")
			}
			value = v
		} else {
			value = p.token()
			if value == "" {
				return invalid("malformed parameter value")
			}
		}
		if err := set(name, value); err != nil {
			return err
		}
		p.skipOWS()
		if p.done() {
			return nil
		}
		if p.peek() != ',' {
			return invalid("missing comma between parameters")
		}
		p.i++
	}
}

type paramParser struct {
	s string
	i int
}

func (p *paramParser) done() bool { return p.i >= len(p.s) }
func (p *paramParser) peek() byte { return p.s[p.i] }

func (p *paramParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *paramParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string starting at the opening quote and returns its unescaped content.
// Control characters other than tab are refused. Without escapes (what clients send) the
// content is a slice of the header, not a copy.
func (p *paramParser) quoted() (string, bool) {
	// What clients send: up to the closing quote, no escape and no control character. Found
	// with IndexByte (vectorised) rather than byte by byte, which reads anything else.
	start := p.i + 1 // after the opening quote
	if n := strings.IndexByte(p.s[start:], '"'); n >= 0 {
		if content := p.s[start : start+n]; strings.IndexByte(content, '\\') < 0 && !hasCTL(content) {
			p.i = start + n + 1
			return content, true
		}
	}
	return p.quotedByteByByte()
}

// quotedByteByByte is quoted, reading byte by byte: escapes unescaped, control characters
// refused.
func (p *paramParser) quotedByteByByte() (string, bool) {
	p.i++ // opening quote
	start := p.i
	var b []byte // the content so far, once an escape made it differ from the header
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if b == nil {
				return p.s[start : p.i-1], true
			}
			return string(b), true
		case c == '\\':
			if p.i+1 >= len(p.s) || isCTL(p.s[p.i+1]) {
				return "", false
			}
			if b == nil {
				b = append([]byte(nil), p.s[start:p.i]...)
			}
			b = append(b, p.s[p.i+1])
			p.i += 2
		case isCTL(c):
			return "", false
		default:
			if b != nil {
				b = append(b, c)
			}
			p.i++
		}
	}
	return "", false // unterminated
}

func trimOWS(s string) string {
	return strings.Trim(s, " \t")
}

func isCTL(c byte) bool { return (c < 0x20 && c != '\t') || c == 0x7f }

// hasCTL reports whether s holds a control character (isCTL).
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if isCTL(s[i]) {
			return true
		}
	}
	return false
}

// isTokenChar reports whether c is a tchar of RFC 7230.
func isTokenChar(c byte) bool { return tokenChars[c] }

// tokenChars are the tchars of RFC 7230, by byte: every character of a token is looked up.
var tokenChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()
