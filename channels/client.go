package channels

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/netguard"
)

// DefaultTimeout bounds a whole exchange with a target, the answer's body included.
const DefaultTimeout = 10 * time.Second

// How the transport keeps connections. A session of the dispatcher has up to 64 deliveries in
// flight (32 of one kind), and a worker runs several sessions: a service that gets a storm's
// notices keeps up to 128 idle connections, and all services together 256, so that a worker
// delivering to thousands of webhooks does not hold a descriptor for each of them.
const (
	maxIdlePerHost = 128
	maxIdle        = 256
	idleTimeout    = 90 * time.Second
	dialTimeout    = 10 * time.Second
	handshakeLimit = 10 * time.Second
)

// TransportConfig is how the senders reach their targets.
type TransportConfig struct {
	// AllowPrivate lets targets be, or resolve to, loopback, private, link-local and other
	// addresses that are not globally reachable (netguard.Public).
	AllowPrivate bool
	// Proxy carries every request, loopback targets included. Nil: the proxy of the
	// environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as http.ProxyFromEnvironment reads it.
	Proxy *url.URL
	// TLS is what connections to targets trust and present.
	TLS TLS
}

// TLS is what a TLS connection to a target (or to an https proxy) trusts and presents.
type TLS struct {
	Roots       *x509.CertPool   // the certificate authorities trusted; nil: the system's
	Certificate *tls.Certificate // presented when a target asks for one (mTLS); nil: none
}

// Transport is the one http.RoundTripper of every HTTP sender: net/http's Transport with
// connections kept per host, HTTP/2 where the target offers it, the proxy of its
// configuration, and the private-address guard.
//
// Unless AllowPrivate, a target must be globally reachable. Sent directly, the dialer checks
// the address it is about to connect to, after name resolution and before any packet is sent
// (so a name that points at 127.0.0.1 is refused too). Sent through a proxy, the target's name
// is resolved and every address checked before the request goes out, and the proxy's own
// address is dialled without the check: the operator chose it. The refusal is a
// *Failure{Reason: ReasonTargetNotAllowed}.
type Transport struct {
	allowPrivate bool
	proxy        func(*url.URL) (*url.URL, error) // the proxy of a target, nil for none
	direct       net.Dialer                       // for targets: checked unless allowPrivate
	toProxy      net.Dialer                       // for the proxy: never checked
	current      atomic.Pointer[http.Transport]   // replaced, not changed, by SetTLS
}

// NewTransport makes the transport of cfg.
func NewTransport(cfg TransportConfig) *Transport {
	t := &Transport{allowPrivate: cfg.AllowPrivate}
	if cfg.Proxy != nil {
		fixed := *cfg.Proxy
		t.proxy = func(*url.URL) (*url.URL, error) { return &fixed, nil }
	} else {
		// Read when the transport is made, where http.ProxyFromEnvironment reads it once per
		// process: the same rules (NO_PROXY, and never a proxy for localhost or loopback).
		t.proxy = httpproxy.FromEnvironment().ProxyFunc()
	}
	t.direct = net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t.toProxy = t.direct
	if !cfg.AllowPrivate {
		t.direct.Control = refusePrivate
	}
	t.SetTLS(cfg.TLS)
	return t
}

// SetTLS makes new connections trust and present what c says; connections already open keep
// theirs until they close (the idle ones are closed now). It is how the operator's files are
// reloaded without a restart.
func (t *Transport) SetTLS(c TLS) {
	cfg := &tls.Config{RootCAs: c.Roots, MinVersion: tls.VersionTLS12}
	if c.Certificate != nil {
		cfg.Certificates = []tls.Certificate{*c.Certificate}
	}
	next := &http.Transport{
		Proxy:                  proxyOf,
		OnProxyConnectResponse: proxyAnswer,
		DialContext:            t.dial,
		TLSClientConfig:        cfg,
		// A custom dialer and TLS configuration turn HTTP/2 off unless asked for.
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: handshakeLimit,
		MaxIdleConns:        maxIdle,
		MaxIdleConnsPerHost: maxIdlePerHost,
		IdleConnTimeout:     idleTimeout,
	}
	if old := t.current.Swap(next); old != nil {
		old.CloseIdleConnections()
	}
}

// Client is an HTTP client over t: timeout bounds a whole exchange, the answer's body
// included, and redirects are not followed (Classify makes a 3xx a permanent failure: a POST
// turned into a GET elsewhere is not a delivery).
func (t *Transport) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// NewHTTPClient is a client over a transport of its own that uses the environment's proxy and
// the system's roots: see Transport and Client.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	return NewTransport(TransportConfig{AllowPrivate: allowPrivate}).Client(timeout)
}

// proxied is the context key of a request's proxy: set by RoundTrip, read by the transport's
// Proxy and by the dialer (net/http dials with the values of the request's context).
type proxied struct{}

// RoundTrip sends req directly or through its proxy.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	proxy, err := t.proxy(req.URL)
	if err != nil {
		closeBody(req)
		return nil, &Failure{Retry: true, Reason: "the outbound proxy's address is not a URL"}
	}
	if proxy != nil {
		if !t.allowPrivate {
			if err := checkTarget(req.Context(), req.URL.Hostname()); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		req = req.WithContext(context.WithValue(req.Context(), proxied{}, proxy))
	}
	return t.current.Load().RoundTrip(req)
}

// CloseIdleConnections closes the connections kept idle (http.Client.CloseIdleConnections
// calls it).
func (t *Transport) CloseIdleConnections() { t.current.Load().CloseIdleConnections() }

// proxyOf is the proxy RoundTrip chose for req.
func proxyOf(req *http.Request) (*url.URL, error) {
	u, _ := req.Context().Value(proxied{}).(*url.URL)
	return u, nil
}

// viaProxy says whether a request's answer came through a proxy.
func viaProxy(req *http.Request) bool {
	return req != nil && req.Context().Value(proxied{}) != nil
}

// dial connects to addr: the proxy of the request being sent, or a target, checked.
func (t *Transport) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p, ok := ctx.Value(proxied{}).(*url.URL); ok && strings.EqualFold(addr, proxyAddr(p)) {
		return t.toProxy.DialContext(ctx, network, addr)
	}
	return t.direct.DialContext(ctx, network, addr)
}

// proxyAddr is the host:port net/http dials for proxy p.
func proxyAddr(p *url.URL) string {
	port := p.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[p.Scheme]
	}
	return net.JoinHostPort(p.Hostname(), port)
}

// checkTarget refuses, before a request goes through a proxy, a target host that is or
// resolves to an address that is not globally reachable. The proxy resolves the name again:
// what it must enforce itself is in docs/security.md.
func checkTarget(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if !netguard.Public(a) {
			return &Failure{Reason: ReasonTargetNotAllowed}
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if !netguard.Public(a) {
			return &Failure{Reason: ReasonTargetNotAllowed}
		}
	}
	return nil
}

// proxyAnswer is the transport's OnProxyConnectResponse: a proxy that refuses to open a tunnel
// to an https target. 407 and 403 are permanent (the proxy's rules or credentials need the
// operator, and the target's credentials are not at fault); other answers (502 when the proxy
// cannot reach the target, 503) are retried.
func proxyAnswer(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return proxyFailure(resp.StatusCode)
}

// proxyFailure is a proxy's refusal, by its status.
func proxyFailure(code int) *Failure {
	f := &Failure{Reason: "the outbound proxy answered " + statusText(code)}
	switch code {
	case http.StatusProxyAuthRequired:
		f.Reason += ": check the proxy's user and password"
	case http.StatusForbidden:
		f.Reason += ": the proxy does not allow this target"
	default:
		f.Retry = true
	}
	return f
}

// ReasonTargetNotAllowed is the failure of a delivery whose target's address the client
// refused: it names the setting that allows it, so that a delivery record says what to change.
const ReasonTargetNotAllowed = "target address not allowed: a private, loopback or link-local address (" +
	herald.SettingPrivateTargets + "=true on the workers allows it)"

// refusePrivate is a net.Dialer Control: it runs once the socket exists and before it
// connects, with the resolved address in address.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !netguard.Public(ap.Addr()) {
		return &Failure{Reason: ReasonTargetNotAllowed}
	}
	return nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
