package channels

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// v6Receiver is a receiver on [::1]; the test is skipped where IPv6 loopback is missing.
func v6Receiver(t *testing.T) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	rc := &receiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{Method: r.Method, Path: r.URL.Path})
		rc.mu.Unlock()
	}))
	rc.Listener.Close()
	rc.Listener = l
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func TestNewHTTPClientRefusesPrivateTargets(t *testing.T) {
	v4 := newReceiver(t, nil)
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
			err := (Webhook{Client: client}).Notify(context.Background(), webhookDelivery(target, testSecret))
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %s: the refusal must come before connecting", elapsed)
			}
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("got %v, want a *Failure", err)
			}
			if f.Retry || f.Rejected || f.Status != 0 || f.Reason != "target address not allowed" {
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
			if got := Classify(resp, err); !errors.As(got, &f) || f.Retry || f.Reason != "target address not allowed" {
				t.Errorf("Classify(client.Do) = %v, want the refusal passed through", got)
			}
		})
	}
	if n := len(v4.requests()) + len(v6.requests()); n != 0 {
		t.Errorf("loopback receivers got %d requests", n)
	}
}

func TestNewHTTPClientAllowPrivate(t *testing.T) {
	rc := newReceiver(t, nil)
	client := NewHTTPClient(true, 5*time.Second)
	if err := (Webhook{Client: client}).Notify(context.Background(), webhookDelivery(rc.URL+"/hooks", "")); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
	if client.Timeout != 5*time.Second {
		t.Errorf("timeout %s, want 5s", client.Timeout)
	}
}

func TestPublicAddr(t *testing.T) {
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
		"8.8.8.8":          true,
		"172.32.0.1":       true,
		"172.15.255.255":   true,
		"93.184.216.34":    true,
		"2001:4860::8888":  true,
		"::ffff:8.8.8.8":   true,
	}
	for s, want := range cases {
		if got := publicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}
