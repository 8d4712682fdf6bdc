package actlink

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/heraldhq/herald"
)

// Linker makes the links of notices: Base (HERALD_EXTERNAL_URL) followed by /act/{token}.
// A nil Linker makes none.
type Linker struct {
	keys Keys
	base string
}

// NewLinker is a Linker signing with keys, its links under base, an absolute http(s) URL.
// It is nil, with no error, when keys is empty.
func NewLinker(keys Keys, base string) (*Linker, error) {
	if keys.Empty() {
		return nil, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("HERALD_EXTERNAL_URL must be an absolute http:// or https:// URL without user, query or fragment, as people reach Herald")
	}
	return &Linker{keys: keys, base: strings.TrimRight(u.String(), "/")}, nil
}

// Base is the external URL links start with.
func (l *Linker) Base() string { return l.base }

// Actions are the actions a notice about a offers at now: view only when the notice tells
// that it ended (or the alert is no longer active); view and withdraw when it is
// acknowledged; else view and both acknowledgements.
func Actions(a herald.Alert, ended bool, now time.Time) []Action {
	switch {
	case ended || !herald.Active(a.Status):
		return []Action{View}
	case a.Acknowledged(now):
		return []Action{View, Unacknowledge}
	}
	return []Action{View, Acknowledge1h, Acknowledge4h}
}

// Links are the links of a notice about a (global: a global alert), to recipient, made at
// now; ended says the notice tells that the alert ended. No links when l is nil or the alert
// cannot be named.
func (l *Linker) Links(a herald.Alert, global, ended bool, recipient string, now time.Time) herald.ActionLinks {
	var out herald.ActionLinks
	if l == nil {
		return out
	}
	exp := Expiry(now, a.Resolved.Time)
	for _, act := range Actions(a, ended, now) {
		tok, err := l.keys.Sign(Claims{Global: global, Group: a.GroupID, Alert: a.ID, Action: act, Recipient: recipient, Expires: exp})
		if err != nil {
			return herald.ActionLinks{}
		}
		link := l.URL(tok)
		switch act {
		case View:
			out.View = link
		case Acknowledge1h:
			out.Acknowledge1h = link
		case Acknowledge4h:
			out.Acknowledge4h = link
		case Unacknowledge:
			out.Unacknowledge = link
		}
	}
	return out
}

// DigestLink is the link to the page of digest d, made at now: it lists every alert of the
// digest and offers to acknowledge them all. "" when l is nil.
func (l *Linker) DigestLink(d herald.Digest, now time.Time) string {
	if l == nil {
		return ""
	}
	tok, err := l.keys.Sign(Claims{Group: d.GroupID, Alert: d.ID, Action: ViewDigest, Recipient: d.Recipient, Expires: Expiry(now, time.Time{})})
	if err != nil {
		return ""
	}
	return l.URL(tok)
}

// URL is the page of token.
func (l *Linker) URL(token string) string { return l.base + "/act/" + token }

// Keys are the keys l signs with.
func (l *Linker) Keys() Keys { return l.keys }
