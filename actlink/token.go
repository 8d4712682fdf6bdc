package actlink

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// Action is what a link does.
type Action byte

// The actions a link can carry.
const (
	View Action = iota + 1
	Acknowledge1h
	Acknowledge4h
	Unacknowledge
	// ViewDigest opens a digest's page: Claims.Alert is then the digest's id.
	ViewDigest
)

var actionNames = map[Action]string{
	View:          "view",
	Acknowledge1h: "acknowledge1h",
	Acknowledge4h: "acknowledge4h",
	Unacknowledge: "unacknowledge",
	ViewDigest:    "digest",
}

func (a Action) String() string {
	if s, ok := actionNames[a]; ok {
		return s
	}
	return fmt.Sprintf("action(%d)", byte(a))
}

// Acknowledges is how long the action acknowledges its alert for; 0 for an action that does
// not acknowledge.
func (a Action) Acknowledges() time.Duration {
	switch a {
	case Acknowledge1h:
		return time.Hour
	case Acknowledge4h:
		return 4 * time.Hour
	}
	return 0
}

// Token lifetimes: at most MaxAge after it was issued, and at most AfterClose after its
// alert closed.
const (
	MaxAge     = 14 * 24 * time.Hour
	AfterClose = 24 * time.Hour
)

// Claims are what a token says.
type Claims struct {
	Global    bool   // a global alert (read under /globalAlerts)
	Group     string // the project the alert is of, or opened for; "" for none
	Alert     string
	Action    Action
	Recipient string    // whom the notice went to: a username, address, number or channel
	Expires   time.Time // whole seconds
}

// Limits of what a token holds.
const (
	maxRecipient = 200 // bytes
	maxToken     = 600 // characters of a token, before it is decoded
	macSize      = 16  // bytes of HMAC-SHA256 kept (128 bits)
	version      = 1
	flagGlobal   = 1 << 0
	flagGroup    = 1 << 1
	macContext   = "herald-act-1\x00"
)

// Errors of Verify. Each says what is wrong without repeating the token.
var (
	ErrMalformed  = errors.New("the link is not a Herald action link, or it was cut short")
	ErrUnknownKey = errors.New("the link was signed with a key this Herald no longer has")
	ErrForged     = errors.New("the link's signature does not match: it was changed or forged")
	ErrExpired    = errors.New("the link has expired")
)

// Key is one action key: an id, carried in each token it signs, and its secret.
type Key struct {
	ID     string
	secret []byte
}

// Keys are the operator's action keys: the first signs, every one verifies.
type Keys struct{ keys []Key }

// MinSecret is the shortest secret a key may have, in bytes.
const MinSecret = 32

// ParseKeys reads HERALD_ACTION_KEYS: comma-separated `id:secret` pairs, the signing key
// first. Ids are 1 to 16 letters, digits, '.', '_' or '-'; secrets at least MinSecret bytes.
// Errors name the key by its position and id, never its secret.
func ParseKeys(s string) (Keys, error) {
	var ks Keys
	seen := map[string]bool{}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		id, secret, ok := strings.Cut(part, ":")
		if !ok {
			return Keys{}, fmt.Errorf("key %d: want id:secret", i+1)
		}
		if !validKeyID(id) {
			return Keys{}, fmt.Errorf("key %d: the id must be 1 to 16 letters, digits, '.', '_' or '-'", i+1)
		}
		if len(secret) < MinSecret {
			return Keys{}, fmt.Errorf("key %d (%s): the secret must be at least %d characters", i+1, id, MinSecret)
		}
		if seen[id] {
			return Keys{}, fmt.Errorf("key %d: the id %s is used twice", i+1, id)
		}
		seen[id] = true
		ks.keys = append(ks.keys, Key{ID: id, secret: []byte(secret)})
	}
	return ks, nil
}

// NewKey is a fresh random key in the form ParseKeys reads, for `herald dev`.
func NewKey(id string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("actlink: no randomness: " + err.Error())
	}
	return id + ":" + base64.RawURLEncoding.EncodeToString(b[:])
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 16 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Empty reports whether there are no keys: notices then carry no links.
func (k Keys) Empty() bool { return len(k.keys) == 0 }

// IDs are the keys' ids, the signing key first.
func (k Keys) IDs() []string {
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.ID
	}
	return ids
}

// Sign makes the token of c under the first key. The recipient is cut to 200 bytes.
func (k Keys) Sign(c Claims) (string, error) {
	if k.Empty() {
		return "", errors.New("no action keys")
	}
	if c.Group != "" && !herald.ValidID(c.Group) {
		return "", fmt.Errorf("not a project id: %q", c.Group)
	}
	if !herald.ValidID(c.Alert) {
		return "", fmt.Errorf("not an alert id: %q", c.Alert)
	}
	if _, ok := actionNames[c.Action]; !ok {
		return "", fmt.Errorf("no such action: %s", c.Action)
	}
	if c.Expires.Unix() <= 0 {
		return "", errors.New("no expiry")
	}
	key := k.keys[0]
	b := make([]byte, 0, 64+len(c.Recipient))
	b = append(b, version, byte(len(key.ID)))
	b = append(b, key.ID...)
	var flags byte
	if c.Global {
		flags |= flagGlobal
	}
	if c.Group != "" {
		flags |= flagGroup
	}
	b = append(b, flags)
	if c.Group != "" {
		b, _ = hex.AppendDecode(b, []byte(c.Group)) // checked above
	}
	b, _ = hex.AppendDecode(b, []byte(c.Alert))
	b = append(b, byte(c.Action))
	b = binary.AppendUvarint(b, uint64(c.Expires.Unix()))
	r := cut(c.Recipient, maxRecipient)
	b = binary.AppendUvarint(b, uint64(len(r)))
	b = append(b, r...)
	b = append(b, mac(key.secret, b)...)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Verify checks token at now and says what it claims. A token that does not verify says
// nothing: its claims are zero.
func (k Keys) Verify(token string, now time.Time) (Claims, error) {
	if len(token) > maxToken {
		return Claims{}, ErrMalformed
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < macSize+2 {
		return Claims{}, ErrMalformed
	}
	payload, sum := b[:len(b)-macSize], b[len(b)-macSize:]
	c, kid, ok := parse(payload)
	if !ok {
		return Claims{}, ErrMalformed
	}
	var key *Key
	for i := range k.keys {
		if k.keys[i].ID == kid {
			key = &k.keys[i]
		}
	}
	if key == nil {
		return Claims{}, ErrUnknownKey
	}
	if !hmac.Equal(sum, mac(key.secret, payload)) {
		return Claims{}, ErrForged
	}
	if !now.Before(c.Expires) {
		return Claims{}, ErrExpired
	}
	return c, nil
}

// parse reads a token's payload; every byte must be used.
func parse(b []byte) (c Claims, kid string, ok bool) {
	if len(b) < 2 || b[0] != version {
		return Claims{}, "", false
	}
	n := int(b[1])
	b = b[2:]
	if len(b) < n+1 {
		return Claims{}, "", false
	}
	kid, b = string(b[:n]), b[n:]
	flags := b[0]
	b = b[1:]
	if flags&^(flagGlobal|flagGroup) != 0 {
		return Claims{}, "", false
	}
	c.Global = flags&flagGlobal != 0
	if flags&flagGroup != 0 {
		if len(b) < 12 {
			return Claims{}, "", false
		}
		c.Group, b = hex.EncodeToString(b[:12]), b[12:]
	}
	if len(b) < 13 {
		return Claims{}, "", false
	}
	c.Alert, c.Action, b = hex.EncodeToString(b[:12]), Action(b[12]), b[13:]
	if _, known := actionNames[c.Action]; !known {
		return Claims{}, "", false
	}
	exp, m := binary.Uvarint(b)
	if m <= 0 || exp == 0 || exp > 1<<40 {
		return Claims{}, "", false
	}
	b = b[m:]
	rl, m := binary.Uvarint(b)
	if m <= 0 || rl > maxRecipient || uint64(len(b)-m) != rl {
		return Claims{}, "", false
	}
	r := b[m:]
	if !utf8.Valid(r) {
		return Claims{}, "", false
	}
	c.Expires, c.Recipient = time.Unix(int64(exp), 0).UTC(), string(r)
	return c, kid, true
}

func mac(secret, payload []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(macContext))
	h.Write(payload)
	return h.Sum(nil)[:macSize]
}

// cut shortens s to at most n bytes on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Expiry is when a token issued at issued ends: MaxAge after it, or AfterClose after the
// alert resolved, whichever is first. A zero resolved is an alert still open.
func Expiry(issued, resolved time.Time) time.Time {
	end := issued.Add(MaxAge)
	if !resolved.IsZero() {
		if r := resolved.Add(AfterClose); r.Before(end) {
			end = r
		}
	}
	return end.Truncate(time.Second)
}

// Live reports whether a verified token may still act on its alert at now: a token issued
// while the alert was open ends AfterClose after the alert closed.
func Live(c Claims, resolved, now time.Time) bool {
	return now.Before(c.Expires) && (resolved.IsZero() || now.Before(resolved.Add(AfterClose)))
}
