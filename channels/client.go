package channels

import (
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/http1"
)

// NewHTTPClient is the client every HTTP sender uses: connection reuse, the given timeout
// (for the whole exchange), redirects not followed (Classify makes a 3xx a permanent failure:
// a POST turned into a GET elsewhere is not a delivery) and no proxy (the address check must
// see the real target). Unless allowPrivate, its dialer refuses every address that is not
// globally reachable (publicAddr: loopback, private, link-local, shared, benchmarking,
// documentation, reserved, multicast, and IPv6 forms embedding such an IPv4 address). The
// check runs on the address actually dialled, after name resolution and before any packet is
// sent, so a DNS name that points at 127.0.0.1 is refused too; the refusal is a
// *Failure{Retry: false, Reason: ReasonTargetNotAllowed} that Classify passes through.
//
// Exchange sends a request of such a client through its transport (see do): change no field
// of a client once made.
func NewHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http1.Transport{
		Dial: dialer.DialContext,
		// A dispatcher sends many notices to one service at once (64 in flight): keep those
		// connections rather than dialling anew for most of them.
		MaxIdlePerAddr: 128,
		// And no more than 256 over every target: a worker delivering to thousands of
		// targets does not hold a descriptor for each until its idle timeout.
		MaxIdle:             256,
		IdleTimeout:         90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: directTransport{transport},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// directTransport is the transport of a client of NewHTTPClient: its type tells Exchange that
// the client adds nothing to a request that its transport would not (see do).
type directTransport struct{ *http1.Transport }

// ReasonTargetNotAllowed is the failure of a delivery whose target's address the client
// refused: it names the setting that allows it, so that a delivery record says what to change.
const ReasonTargetNotAllowed = "target address not allowed: a private, loopback or link-local address (" +
	herald.SettingPrivateTargets + "=true on the workers allows it)"

// PublicAddr says whether a is an address a client that refuses private targets connects to.
func PublicAddr(a netip.Addr) bool { return publicAddr(a) }

// refusePrivate is a net.Dialer Control: it runs once the socket exists and before it
// connects, with the resolved address in address.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !publicAddr(ap.Addr()) {
		return &Failure{Reason: ReasonTargetNotAllowed}
	}
	return nil
}

// deniedPrefixes are the IANA special-purpose ranges (RFC 6890 and its updates) that are not
// globally reachable, or that no webhook lives in, plus multicast and the IPv6 forms that only
// carry another address (checked through embeddedIPv4 first).
var deniedPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // this network
		"10.0.0.0/8",      // private
		"100.64.0.0/10",   // shared address space (carrier NAT; cloud metadata lives here)
		"127.0.0.0/8",     // loopback
		"169.254.0.0/16",  // link-local (cloud metadata)
		"172.16.0.0/12",   // private
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.31.196.0/24", // AS112
		"192.52.193.0/24", // AMT
		"192.88.99.0/24",  // deprecated 6to4 relay anycast
		"192.168.0.0/16",  // private
		"192.175.48.0/24", // direct delegation AS112
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"224.0.0.0/4",     // multicast
		"240.0.0.0/4",     // reserved, and the limited broadcast address
		"::/96",           // unspecified, loopback and the deprecated IPv4-compatible form
		"::ffff:0:0/96",   // IPv4-mapped (reached only through embeddedIPv4)
		"64:ff9b::/96",    // NAT64 (reached only through embeddedIPv4)
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments (Teredo reached through embeddedIPv4)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4 (reached only through embeddedIPv4)
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing
		"fc00::/7",        // unique local
		"fe80::/10",       // link-local
		"fec0::/10",       // deprecated site-local
		"ff00::/8",        // multicast
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
	teredo = netip.MustParsePrefix("2001::/32")
)

// embeddedIPv4 is the IPv4 addresses an IPv6 address leads to: the mapped address, the NAT64
// target, the 6to4 site, or Teredo's server and (inverted) client. Reaching such an address
// reaches them, so each must be public itself.
func embeddedIPv4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	switch {
	case a.Is4In6():
		return []netip.Addr{a.Unmap()}
	case nat64.Contains(a):
		return []netip.Addr{v4(b[12:16])}
	case sixTo4.Contains(a):
		return []netip.Addr{v4(b[2:6])}
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{v4(b[4:8]), netip.AddrFrom4(client)}
	}
	return nil
}

// publicAddr reports whether a may be dialled for a user-given URL.
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("")
	if a.Is6() {
		if inner := embeddedIPv4(a); inner != nil {
			for _, v4 := range inner {
				if !publicAddr(v4) {
					return false
				}
			}
			return true
		}
	}
	for _, p := range deniedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
