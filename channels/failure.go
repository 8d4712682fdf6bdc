package channels

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Failure is a delivery that did not succeed.
type Failure struct {
	Status     int           // HTTP status, 0 when the request never got an answer
	Retry      bool          // transient: timeouts, connection errors, 408, 429, 5xx
	RetryAfter time.Duration // from a 429/503 Retry-After (seconds or HTTP date), 0 if none
	Rejected   bool          // 401/403: the target refused the credentials; never retried
	Reason     string        // short, for people; never a secret, never the target's full URL
}

func (f *Failure) Error() string {
	var b strings.Builder
	b.WriteString("delivery failed: ")
	b.WriteString(f.Reason)
	switch {
	case f.Rejected:
		b.WriteString(" (credentials rejected)")
	case f.Retry && f.RetryAfter > 0:
		fmt.Fprintf(&b, " (retryable, after %s)", f.RetryAfter)
	case f.Retry:
		b.WriteString(" (retryable)")
	default:
		b.WriteString(" (permanent)")
	}
	return b.String()
}

// maxRetryAfter bounds what a target may ask for, so that a huge value cannot overflow a
// Duration; the dispatcher applies its own, tighter policy.
const maxRetryAfter = 24 * time.Hour

// Classify turns an HTTP exchange into nil (2xx) or a *Failure. err is the transport error
// (what http.Client.Do returned); when it is not nil resp is ignored. A *Failure anywhere in
// err's chain (such as the one Transport returns for a refused address) is passed
// through as it is. Classify neither reads nor closes resp.Body.
//
// An answer: 2xx is delivered; 408, 429 and 5xx are retried (429 and 503 with their
// Retry-After); 401 and 403 are Rejected; anything else (other 4xx, a redirect, which the
// client does not follow, a 1xx) is permanent. No answer: a timeout, a cancelled context, a
// refused or reset connection, a failed name lookup are retried; a TLS certificate the client
// does not accept, or a TLS alert about certificates from the target, is permanent. A proxy
// that cannot be reached is retried; one that refuses (407, 403) is permanent, and not the
// target's refusal of its credentials.
func Classify(resp *http.Response, err error) error {
	if err != nil {
		return classifyTransport(err)
	}
	if resp == nil {
		return &Failure{Retry: true, Reason: "no response"}
	}
	code := resp.StatusCode
	if code >= 200 && code < 300 { // before the failure is built: a storm's every delivery
		return nil
	}
	if (code == http.StatusProxyAuthRequired || code == http.StatusForbidden) && resp.Request != nil &&
		resp.Request.URL.Scheme == "http" && viaProxy(resp.Request) {
		// Over plain HTTP the proxy's answer is the answer: its refusal cannot be told from the
		// target's, so it is permanent without blaming the target's credentials.
		f := proxyFailure(code)
		if code == http.StatusForbidden {
			f.Reason = "answered 403 Forbidden through the outbound proxy: the proxy's refusal or the target's"
		}
		return f
	}
	f := &Failure{Status: code, Reason: "target answered " + statusText(code)}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		f.Rejected = true
	case code == http.StatusRequestTimeout || code >= 500:
		f.Retry = true
	case code == http.StatusTooManyRequests:
		f.Retry = true
	case code >= 300 && code < 400:
		f.Reason += " (redirects are not followed)"
	}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		f.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return f
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}

// retryAfter reads a Retry-After value: delay-seconds or an HTTP date. 0 when absent, bad or
// already past.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) { // err: too large for 64 bits
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	// HTTP dates have whole seconds: round up so that the retry is not early.
	d = (d + time.Second - 1).Truncate(time.Second)
	return min(d, maxRetryAfter)
}

// classifyTransport turns a request that got no answer into a *Failure. Its messages are
// written here rather than taken from err, whose text names the target's URL.
func classifyTransport(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		// The proxy, not the target: retried, since the operator can put it right.
		inner := noAnswer(op.Err, "its")
		return &Failure{Retry: true, Reason: "the outbound proxy could not be reached: " + inner.Reason}
	}
	return noAnswer(err, "the target's")
}

// noAnswer classifies a failed exchange; whose says whose host name and TLS certificate its
// reasons are about.
func noAnswer(err error, whose string) *Failure {
	var (
		netErr    net.Error
		dnsErr    *net.DNSError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		op        *net.OpError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return &Failure{Retry: true, Reason: "request cancelled"}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return &Failure{Retry: true, Reason: "request timed out"}
	case errors.As(err, &dnsErr):
		return &Failure{Retry: true, Reason: whose + " host name could not be resolved"}
	case errors.As(err, &unknownCA):
		return &Failure{Reason: whose + " TLS certificate not accepted: signed by an unknown authority"}
	case errors.As(err, &hostErr):
		return &Failure{Reason: whose + " TLS certificate not accepted: not valid for the host name"}
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return &Failure{Reason: whose + " TLS certificate not accepted: expired or not yet valid"}
	case errors.As(err, &verify), errors.As(err, &invalid):
		return &Failure{Reason: whose + " TLS certificate not accepted"}
	case errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "certificate"):
		// A TLS alert from the other end about certificates: most often the client
		// certificate it wants is missing or not one it trusts.
		return &Failure{Reason: "TLS connection refused by the other end (" + op.Err.Error() + "): it may want a client certificate Herald does not have"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Failure{Retry: true, Reason: "connection refused"}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return &Failure{Retry: true, Reason: "connection reset"}
	}
	return &Failure{Retry: true, Reason: "connection failed"}
}
