package actlink_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
)

const (
	secretA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	secretB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var now = time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)

func keys(t *testing.T, s string) actlink.Keys {
	t.Helper()
	k, err := actlink.ParseKeys(s)
	if err != nil {
		t.Fatalf("ParseKeys: %v", err)
	}
	return k
}

func claims() actlink.Claims {
	return actlink.Claims{Group: "5f0c6b1e2a3b4c5d6e7f8091", Alert: "6a1b2c3d4e5f60718293a4b5",
		Action: actlink.Acknowledge1h, Recipient: "ana@example.com", Expires: now.Add(time.Hour)}
}

func TestTokenRoundTrip(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	for _, c := range []actlink.Claims{
		claims(),
		{Global: true, Group: "5f0c6b1e2a3b4c5d6e7f8091", Alert: "6a1b2c3d4e5f60718293a4b5", Action: actlink.View, Recipient: "+15550100", Expires: now.Add(time.Minute)},
		{Global: true, Alert: "6a1b2c3d4e5f60718293a4b5", Action: actlink.Unacknowledge, Expires: now.Add(actlink.MaxAge)},
		{Group: "5f0c6b1e2a3b4c5d6e7f8091", Alert: "6a1b2c3d4e5f60718293a4b5", Action: actlink.Acknowledge4h, Recipient: "#ops ✓", Expires: now.Add(time.Second)},
	} {
		tok, err := k.Sign(c)
		if err != nil {
			t.Fatalf("Sign(%+v): %v", c, err)
		}
		got, err := k.Verify(tok, now)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if got != c {
			t.Errorf("round trip: got %+v, want %+v", got, c)
		}
		if strings.Contains(tok, secretA[:8]) {
			t.Errorf("token carries the secret")
		}
	}
}

// Every byte of a token changed in every bit makes it fail: no field can be altered.
func TestTokenTamperedAnywhereFails(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	tok, err := k.Sign(claims())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), raw...)
			b[i] ^= 1 << bit
			got, err := k.Verify(base64.RawURLEncoding.EncodeToString(b), now)
			if err == nil {
				t.Fatalf("byte %d bit %d flipped: verified as %+v", i, bit, got)
			}
			if got != (actlink.Claims{}) {
				t.Fatalf("a failed token said %+v", got)
			}
		}
	}
	// Cut short, extended, or not base64 at all.
	for name, bad := range map[string]string{
		"empty":     "",
		"cut":       tok[:len(tok)-1],
		"half":      tok[:len(tok)/2],
		"extended":  tok + "A",
		"padded":    tok + "==",
		"not b64":   strings.Replace(tok, tok[:1], "*", 1),
		"huge":      strings.Repeat("A", 10000),
		"mac only":  tok[len(tok)-22:],
		"other tok": "eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
	} {
		if c, err := k.Verify(bad, now); err == nil {
			t.Errorf("%s: verified as %+v", name, c)
		}
	}
}

func TestTokenKeyRotation(t *testing.T) {
	old := keys(t, "old:"+secretA)
	tokOld, _ := old.Sign(claims())
	rotated := keys(t, "new:"+secretB+",old:"+secretA)
	tokNew, _ := rotated.Sign(claims())

	if _, err := rotated.Verify(tokOld, now); err != nil {
		t.Errorf("a token of the second key: %v", err)
	}
	if _, err := rotated.Verify(tokNew, now); err != nil {
		t.Errorf("a token of the first key: %v", err)
	}
	if _, err := old.Verify(tokNew, now); !errors.Is(err, actlink.ErrUnknownKey) {
		t.Errorf("a token of a key not held: %v, want ErrUnknownKey", err)
	}
	// Same id, other secret: a forgery.
	impostor := keys(t, "old:"+secretB)
	if _, err := impostor.Verify(tokOld, now); !errors.Is(err, actlink.ErrForged) {
		t.Errorf("same id, other secret: %v, want ErrForged", err)
	}
	retired := keys(t, "new:"+secretB)
	if _, err := retired.Verify(tokOld, now); !errors.Is(err, actlink.ErrUnknownKey) {
		t.Errorf("a retired key's token: %v, want ErrUnknownKey", err)
	}
}

func TestTokenExpiry(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	c := claims()
	tok, _ := k.Sign(c)
	for _, tc := range []struct {
		at   time.Time
		want error
	}{
		{now, nil},
		{c.Expires.Add(-time.Second), nil},
		{c.Expires, actlink.ErrExpired},
		{c.Expires.Add(time.Hour), actlink.ErrExpired},
	} {
		if _, err := k.Verify(tok, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("at %v: %v, want %v", tc.at, err, tc.want)
		}
	}
}

func TestExpiryAndLive(t *testing.T) {
	closed := now.Add(2 * time.Hour)
	for _, tc := range []struct {
		name             string
		issued, resolved time.Time
		want             time.Time
	}{
		{"open alert", now, time.Time{}, now.Add(actlink.MaxAge)},
		{"closed soon after", now, closed, closed.Add(actlink.AfterClose)},
		{"closed long after", now, now.Add(20 * 24 * time.Hour), now.Add(actlink.MaxAge)},
		{"fractions dropped", now.Add(1500 * time.Millisecond), time.Time{}, now.Add(actlink.MaxAge + time.Second)},
	} {
		if got := actlink.Expiry(tc.issued, tc.resolved); !got.Equal(tc.want) {
			t.Errorf("%s: Expiry %v, want %v", tc.name, got, tc.want)
		}
	}
	c := claims()
	c.Expires = now.Add(actlink.MaxAge)
	for _, tc := range []struct {
		name         string
		resolved, at time.Time
		want         bool
	}{
		{"open", time.Time{}, now, true},
		{"closed an hour ago", now.Add(-time.Hour), now, true},
		{"closed a day ago", now.Add(-actlink.AfterClose), now, false},
		{"past its expiry", time.Time{}, c.Expires, false},
	} {
		if got := actlink.Live(c, tc.resolved, tc.at); got != tc.want {
			t.Errorf("%s: Live %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ids  []string
		fail string
	}{
		{in: "k1:" + secretA, ids: []string{"k1"}},
		{in: " new:" + secretB + " , old:" + secretA, ids: []string{"new", "old"}},
		{in: "", fail: "key 1: want id:secret"},
		{in: "k1", fail: "key 1: want id:secret"},
		{in: "k1:short", fail: "key 1 (k1): the secret must be at least 32 characters"},
		{in: "bad id:" + secretA, fail: "key 1: the id must be"},
		{in: "a:" + secretA + ",a:" + secretB, fail: "key 2: the id a is used twice"},
		{in: "a:" + secretA + ",", fail: "key 2: want id:secret"},
	} {
		k, err := actlink.ParseKeys(tc.in)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("ParseKeys(%q): %v, want %q", tc.in, err, tc.fail)
			}
			if err != nil && (strings.Contains(err.Error(), secretA) || strings.Contains(err.Error(), secretB)) {
				t.Errorf("error shows a secret: %v", err)
			}
			continue
		}
		if err != nil || strings.Join(k.IDs(), ",") != strings.Join(tc.ids, ",") {
			t.Errorf("ParseKeys(%q): %v %v, want %v", tc.in, k.IDs(), err, tc.ids)
		}
	}
	if _, err := actlink.ParseKeys(actlink.NewKey("dev")); err != nil {
		t.Errorf("NewKey is not a key ParseKeys reads: %v", err)
	}
}

func TestSignRefusesWhatItCannotName(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	for name, mod := range map[string]func(*actlink.Claims){
		"bad alert":   func(c *actlink.Claims) { c.Alert = "../x" },
		"bad project": func(c *actlink.Claims) { c.Group = "nope" },
		"no action":   func(c *actlink.Claims) { c.Action = 0 },
		"no expiry":   func(c *actlink.Claims) { c.Expires = time.Time{} },
	} {
		c := claims()
		mod(&c)
		if tok, err := k.Sign(c); err == nil {
			t.Errorf("%s: signed %q", name, tok)
		}
	}
	if _, err := (actlink.Keys{}).Sign(claims()); err == nil {
		t.Error("signed with no keys")
	}
	long := claims()
	long.Recipient = strings.Repeat("é", 150)
	tok, err := k.Sign(long)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Verify(tok, now)
	if err != nil || len(got.Recipient) > 200 || !strings.HasPrefix(long.Recipient, got.Recipient) {
		t.Errorf("long recipient: %q %v", got.Recipient, err)
	}
}

func TestLinksByAlertState(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	l, err := actlink.NewLinker(k, "https://herald.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	open := herald.Alert{ID: "6a1b2c3d4e5f60718293a4b5", GroupID: "5f0c6b1e2a3b4c5d6e7f8091", Status: herald.StatusOpen}
	acked := open
	acked.AcknowledgedUntil = herald.At(now.Add(time.Hour))
	closed := open
	closed.Status, closed.Resolved = herald.StatusClosed, herald.At(now)

	for _, tc := range []struct {
		name  string
		a     herald.Alert
		ended bool
		want  []actlink.Action
	}{
		{"open", open, false, []actlink.Action{actlink.View, actlink.Acknowledge1h, actlink.Acknowledge4h}},
		{"acknowledged", acked, false, []actlink.Action{actlink.View, actlink.Unacknowledge}},
		{"resolution notice", open, true, []actlink.Action{actlink.View}},
		{"closed", closed, false, []actlink.Action{actlink.View}},
	} {
		ls := l.Links(tc.a, false, tc.ended, "ana", now)
		got := map[string]string{"view": ls.View, "acknowledge1h": ls.Acknowledge1h, "acknowledge4h": ls.Acknowledge4h, "unacknowledge": ls.Unacknowledge}
		for _, act := range tc.want {
			link := got[act.String()]
			if !strings.HasPrefix(link, "https://herald.example.com/act/") {
				t.Errorf("%s: %s link %q", tc.name, act, link)
				continue
			}
			c, err := k.Verify(strings.TrimPrefix(link, "https://herald.example.com/act/"), now)
			if err != nil || c.Action != act || c.Alert != open.ID || c.Recipient != "ana" {
				t.Errorf("%s: %s link says %+v %v", tc.name, act, c, err)
			}
			delete(got, act.String())
		}
		for act, link := range got {
			if link != "" {
				t.Errorf("%s: offers %s", tc.name, act)
			}
		}
	}
	if none, _ := actlink.NewLinker(actlink.Keys{}, "https://x"); none != nil || !none.Links(open, false, false, "ana", now).Empty() {
		t.Error("no keys: want no links")
	}
	for _, bad := range []string{"", "ftp://x", "herald.example.com", "https://u:p@x", "https://x/?q=1"} {
		if _, err := actlink.NewLinker(k, bad); err == nil {
			t.Errorf("NewLinker(%q): no error", bad)
		}
	}
}

func TestDigestLinkNamesTheDigest(t *testing.T) {
	k := keys(t, "k1:"+secretA)
	l, err := actlink.NewLinker(k, "https://herald.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	d := herald.Digest{ID: "6a1b2c3d4e5f60718293a4b5", GroupID: "5f0c6b1e2a3b4c5d6e7f8091", Kind: "EMAIL", Recipient: "ana@example.com"}
	link := l.DigestLink(d, now)
	tok, ok := strings.CutPrefix(link, "https://herald.example.com/act/")
	if !ok {
		t.Fatalf("link %q is not under the external URL", link)
	}
	c, err := k.Verify(tok, now)
	if err != nil {
		t.Fatal(err)
	}
	want := actlink.Claims{Group: d.GroupID, Alert: d.ID, Action: actlink.ViewDigest, Recipient: d.Recipient, Expires: now.Add(actlink.MaxAge)}
	if c != want {
		t.Fatalf("claims %+v, want %+v", c, want)
	}
	if (*actlink.Linker)(nil).DigestLink(d, now) != "" {
		t.Fatal("a nil linker made a link")
	}
}
