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

// The dialer's check (the Control that runs before the socket connects), called directly: a
// refused address is a permanent Failure naming the setting; netguard's tests hold the table
// of addresses.
func TestDialerCheck(t *testing.T) {
	for s, want := range map[string]bool{"127.0.0.1": false, "::1": false, "169.254.169.254": false, "8.8.8.8": true, "2001:4860::8888": true} {
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
