// Package netguard says which network addresses Herald connects to for a URL a user gave
// (a webhook, a chat URL) when the operator has not allowed private targets: only globally
// reachable ones. The senders' dialer and the API's warnings share these rules, so both agree
// on what the workers refuse. It depends on nothing but the standard library.
package netguard

import "net/netip"

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

// Public reports whether a is globally reachable: not loopback, private, link-local, shared,
// benchmarking, documentation, reserved or multicast, nor an IPv6 form embedding such an IPv4
// address. Only such addresses are dialled for a user-given URL unless the operator allows
// private targets.
func Public(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("")
	if a.Is6() {
		if inner := embeddedIPv4(a); inner != nil {
			for _, v4 := range inner {
				if !Public(v4) {
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
