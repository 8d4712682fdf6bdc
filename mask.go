package herald

import (
	"net/url"
	"strings"
)

// The masking rules of docs/api.md#masking. A secret written once is never readable again: every
// read goes through these.

// MaskTail shows only the last 4 characters of a key or token behind asterisks. Secrets of 8
// characters or fewer are masked whole, since their tail would give away too much of them.
func MaskTail(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) <= 8 {
		return strings.Repeat("*", len(r))
	}
	return strings.Repeat("*", len(r)-4) + string(r[len(r)-4:])
}

// MaskPrivateKey shows an API private key (a UUID) from the stored tail, keeping its shape.
func MaskPrivateKey(tail string) string {
	return "********-****-****-****-********" + tail
}

// MaskAll masks a secret that is never shown in part (a webhook secret): a fixed mask, so
// that not even its length shows.
func MaskAll(s string) string {
	if s == "" {
		return ""
	}
	return "******"
}

// MaskURL keeps a URL's scheme and host and masks the rest: user info, path, query and
// fragment (where incoming-webhook services put their tokens). Something that does not parse
// as a URL with a host is masked whole.
func MaskURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.Repeat("*", 8)
	}
	shown := u.Scheme + "://" + u.Host
	if u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
		return shown
	}
	return shown + "/" + strings.Repeat("*", max(len(s)-len(shown)-1, 4))
}

// IsMask reports whether s looks like what the functions above show instead of a secret: it
// holds a run of four asterisks, as the mask of every secret of 4 characters or more does and
// no key, token or URL that a service hands out does.
func IsMask(s string) bool { return strings.Contains(s, "****") }
