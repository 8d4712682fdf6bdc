package channels

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
)

// v6Receiver is a receiver on [::1]; the test is skipped where IPv6 loopback is missing.
func v6Receiver(t *testing.T) *channelstest.Receiver {
	t.Helper()
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	return channelstest.NewReceiverOn(t, l, nil)
}

// post is what a sender does: a POST of a small JSON body, ended with Send.
func post(t *testing.T, client *http.Client, target string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, target, strings.NewReader(`{"id":"x"}`))
	if err != nil {
		t.Fatalf("request for %s: %v", target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return Send(client, req)
}

func TestNewHTTPClientRefusesPrivateTargets(t *testing.T) {
	v4 := channelstest.NewReceiver(t, nil)
	v6 := v6Receiver(t)
	_, port, _ := net.SplitHostPort(v4.Listener.Addr().String())
	_, port6, _ := net.SplitHostPort(v6.Listener.Addr().String())
	targets := []string{
		v4.URL + "/hooks",                         // http://127.0.0.1:PORT
		"http://[::1]:" + port6 + "/hooks",        // IPv6 loopback
		"http://localhost:" + port + "/hooks",     // a name that resolves to loopback
		"http://169.254.169.254/latest",           // cloud metadata: link-local
		"http://[::ffff:127.0.0.1]:" + port + "/", // IPv4-mapped loopback
		"http://0.0.0.0:" + port + "/",            // unspecified
	}
	client := NewHTTPClient(false, 5*time.Second)
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			start := time.Now()
			err := post(t, client, target)
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %s: the refusal must come before connecting", elapsed)
			}
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("got %v, want a *Failure", err)
			}
			if f.Retry || f.Rejected || f.Status != 0 || f.Reason != ReasonTargetNotAllowed {
				t.Errorf("got %+v, want a permanent \"target address not allowed\"", f)
			}
			if strings.Contains(err.Error(), target) {
				t.Errorf("error %q names the URL", err)
			}

			// The same through the client itself and Classify.
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := Classify(resp, err); !errors.As(got, &f) || f.Retry || f.Reason != ReasonTargetNotAllowed {
				t.Errorf("Classify(client.Do) = %v, want the refusal passed through", got)
			}
		})
	}
	if n := len(v4.Requests()) + len(v6.Requests()); n != 0 {
		t.Errorf("loopback receivers got %d requests", n)
	}
}

func TestNewHTTPClientAllowPrivate(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	client := NewHTTPClient(true, 5*time.Second)
	if err := post(t, client, rc.URL+"/hooks"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	if client.Timeout != 5*time.Second {
		t.Errorf("timeout %s, want 5s", client.Timeout)
	}
}

// TestDialerCheck is a table at the dialer's check itself (the Control that runs before the
// socket connects), called directly: no connection is attempted for any address.
func TestDialerCheck(t *testing.T) {
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
		a := netip.MustParseAddr(s)
		err := refusePrivate("tcp", netip.AddrPortFrom(a, 443).String(), nil)
		if got := err == nil; got != want {
			t.Errorf("dialling %s allowed = %v, want %v (%v)", s, got, want, err)
		}
		if err != nil {
			if f, ok := err.(*Failure); !ok || f.Retry || f.Reason != ReasonTargetNotAllowed {
				t.Errorf("dialling %s refused with %#v, want a permanent Failure", s, err)
			}
		}
	}
}

// A refused target's failure names the setting that allows it, so that a delivery record says
// what to change.
func TestRefusedTargetNamesTheSetting(t *testing.T) {
	if !strings.Contains(ReasonTargetNotAllowed, "HERALD_ALLOW_PRIVATE_TARGETS") {
		t.Errorf("%q does not name HERALD_ALLOW_PRIVATE_TARGETS", ReasonTargetNotAllowed)
	}
}
