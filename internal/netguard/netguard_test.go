package netguard

import (
	"net/netip"
	"testing"
)

// Public, as a table: the IANA special-purpose ranges, the IPv6 forms that lead to an IPv4
// address, and public addresses on either side of each private range.
func TestPublic(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1":        false,
		"127.8.9.10":       false,
		"::1":              false,
		"10.0.0.1":         false,
		"10.255.255.255":   false,
		"172.16.0.1":       false,
		"172.31.255.254":   false,
		"192.168.1.20":     false,
		"169.254.169.254":  false,
		"fe80::1":          false,
		"fe80::1%eth0":     false,
		"fc00::1":          false,
		"fd12:3456::1":     false,
		"0.0.0.0":          false,
		"0.1.2.3":          false,
		"::":               false,
		"224.0.0.251":      false,
		"239.1.2.3":        false,
		"ff02::1":          false,
		"255.255.255.255":  false,
		"::ffff:127.0.0.1": false,
		"::ffff:10.1.1.1":  false,
		// The IANA special-purpose ranges.
		"100.64.0.1":      false, // shared address space
		"100.100.100.200": false, // a cloud metadata address
		"100.127.255.254": false,
		"198.18.0.1":      false, // benchmarking
		"198.19.255.254":  false,
		"192.0.0.8":       false, // IETF protocol assignments
		"192.0.2.1":       false, // documentation
		"198.51.100.7":    false,
		"203.0.113.9":     false,
		"192.88.99.1":     false,
		"240.0.0.1":       false, // reserved
		"250.1.2.3":       false,
		"fec0::1":         false, // site-local
		"2001:db8::1":     false, // documentation
		"100::1":          false, // discard-only
		"::10.0.0.1":      false, // IPv4-compatible
		"64:ff9b:1::1":    false, // local-use NAT64
		// IPv6 forms that embed an IPv4 address lead to it.
		"64:ff9b::a9fe:a9fe":        false, // NAT64 of 169.254.169.254
		"64:ff9b::7f00:1":           false, // NAT64 of 127.0.0.1
		"64:ff9b::808:808":          true,  // NAT64 of 8.8.8.8
		"2002:7f00:1::1":            false, // 6to4 of 127.0.0.1
		"2002:a9fe:a9fe::1":         false, // 6to4 of 169.254.169.254
		"2002:808:808::1":           true,  // 6to4 of 8.8.8.8
		"2001:0:808:808::80ff:fefe": false, // Teredo, client 127.0.1.1 (inverted)
		"2001:0:a00:1::f7f7:f7f7":   false, // Teredo, server 10.0.0.1
		"2001:0:808:808::f7f7:f7f7": true,  // Teredo, server 8.8.8.8, client 8.8.8.8
		"::ffff:100.64.0.1":         false,
		// Public addresses stay reachable.
		"8.8.8.8":         true,
		"172.32.0.1":      true,
		"172.15.255.255":  true,
		"100.63.255.255":  true,
		"100.128.0.0":     true,
		"198.20.0.1":      true,
		"93.184.216.34":   true,
		"2001:4860::8888": true,
		"::ffff:8.8.8.8":  true,
	}
	for s, want := range cases {
		if got := Public(netip.MustParseAddr(s)); got != want {
			t.Errorf("Public(%s) = %v, want %v", s, got, want)
		}
	}
	if Public(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}
