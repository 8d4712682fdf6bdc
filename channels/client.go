package channels

import (
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// NewHTTPClient is the client every HTTP sender uses: connection reuse, the given timeout
// (for the whole exchange), redirects not followed (Classify makes a 3xx a permanent failure:
// a POST turned into a GET elsewhere is not a delivery) and no proxy (the address check must
// see the real target). Unless allowPrivate, its dialer refuses to connect to loopback,
// link-local (169.254/16, fe80::/10), private (10/8, 172.16/12, 192.168/16, fc00::/7),
// unspecified (0/8, ::) and multicast/broadcast addresses. The check runs on the address
// actually dialled, after name resolution and before any packet is sent, so a DNS name that
// points at 127.0.0.1 is refused too; the refusal is a *Failure{Retry: false, Reason: "target
// address not allowed"} that Classify passes through.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:             nil,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		// A dispatcher sends many notices to one service at once (64 in flight): keep those
		// connections rather than dialling anew for most of them.
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// refusePrivate is a net.Dialer Control: it runs once the socket exists and before it
// connects, with the resolved address in address.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !publicAddr(ap.Addr()) {
		return &Failure{Reason: "target address not allowed"}
	}
	return nil
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	broadcast   = netip.MustParseAddr("255.255.255.255")
)

// publicAddr reports whether a may be dialled for a user-given URL.
func publicAddr(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	switch {
	case !a.IsValid(),
		a.IsLoopback(),
		a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(),
		a.IsPrivate(),
		a.IsUnspecified(), thisNetwork.Contains(a),
		a.IsMulticast(), a == broadcast:
		return false
	}
	return true
}
