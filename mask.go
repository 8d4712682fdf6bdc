package herald

import (
	"net/url"
	"strings"
)

// The masking rules of product.md §2. A secret written once is never readable again: every
// read goes through these.

// MaskTail shows only the last 4 characters of a key or token behind asterisks. Secrets of 8
// characters or fewer are masked whole, since their tail would give away too much of them.
func MaskTail(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 8 {
		return strings.Repeat("*", len(s))
	}
	return strings.Repeat("*", len(s)-4) + s[len(s)-4:]
}

// MaskPrivateKey shows an API private key (a UUID) from the stored tail, keeping its shape.
func MaskPrivateKey(tail string) string {
	return "********-****-****-****-********" + tail
}

// MaskAll masks a secret that is never shown in part (a webhook secret).
func MaskAll(s string) string {
	if s == "" {
		return ""
	}
	return "******"
}

// MaskURL keeps a URL's scheme and host and masks the rest: path, query and any user info
// (where incoming-webhook services put their tokens).
func MaskURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.Repeat("*", 8)
	}
	rest := strings.TrimPrefix(s, u.Scheme+"://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	if rest == "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/" + strings.Repeat("*", max(len(rest)-1, 4))
}
