package channels

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
)

// fakeProxy is a proxy on 127.0.0.1 that answers every request itself, CONNECT included, with
// status, and counts them.
func fakeProxy(t *testing.T, status int) (*url.URL, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u, &n
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// failure is err's *Failure; it fails t when there is none.
func failure(t *testing.T, err error) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a *Failure", err)
	}
	return f
}

// A proxy set explicitly carries every request, loopback targets included, plain HTTP and
// HTTPS (a CONNECT tunnel) alike: the receiver sees the proxy's request.
func TestProxyCarriesEveryTarget(t *testing.T) {
	proxy := channelstest.StartTinyProxy(t, "", "")
	plain := channelstest.NewReceiver(t, nil)
	ca := channelstest.NewCA(t, "targets' CA")
	secure := channelstest.NewTLSReceiver(t, ca.Server(t).TLS, nil, nil)
	client := NewTransport(TransportConfig{AllowPrivate: true, Proxy: mustURL(t, proxy.URL), TLS: TLS{Roots: ca.Pool()}}).Client(5 * time.Second)

	if err := post(t, client, plain.URL+"/hook"); err != nil {
		t.Fatalf("plain HTTP through the proxy: %v", err)
	}
	if via := plain.Only(t).Header.Get("Via"); !strings.Contains(via, channelstest.ProxyName) {
		t.Errorf("the receiver got a request without the proxy's Via header (%q): not through the proxy", via)
	}
	if err := post(t, client, secure.URL+"/hook"); err != nil {
		t.Fatalf("HTTPS through the proxy: %v", err)
	}
	secure.Only(t)
	if _, port, _ := net.SplitHostPort(secure.Listener.Addr().String()); !strings.Contains(proxy.Log(), "CONNECT 127.0.0.1:"+port) {
		t.Errorf("the proxy opened no tunnel to the HTTPS receiver:\n%s", proxy.Log())
	}
}

// Through a proxy, a target that is or resolves to a private address is refused before any
// request is sent, even to the proxy; the proxy's own address, private here, is dialled.
func TestProxyGuardsTheTarget(t *testing.T) {
	proxy, requests := fakeProxy(t, http.StatusForbidden)
	client := NewTransport(TransportConfig{Proxy: proxy}).Client(5 * time.Second)
	for _, target := range []string{"http://127.0.0.1:1/hook", "http://localhost:1/hook", "https://[::1]:1/", "http://169.254.169.254/latest", "https://[::ffff:10.0.0.1]/"} {
		f := failure(t, post(t, client, target))
		if f.Retry || f.Reason != ReasonTargetNotAllowed {
			t.Errorf("%s: got %+v, want a permanent %q", target, f, ReasonTargetNotAllowed)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the proxy got %d requests for private targets", n)
	}

	// A public target goes to the proxy on 127.0.0.1, which refuses it (403): for good, and
	// not as the target's refusal of its credentials.
	for _, target := range []string{"https://192.0.43.10/hook", "http://192.0.43.10/hook"} {
		f := failure(t, post(t, client, target))
		if f.Retry || f.Rejected || !strings.Contains(f.Reason, "403 Forbidden") || !strings.Contains(f.Reason, "proxy") {
			t.Errorf("%s: got %+v, want a permanent failure naming the proxy's 403", target, f)
		}
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the proxy got %d requests, want 2", n)
	}
}

// A proxy that asks for credentials (407) is a permanent failure saying so; one that cannot
// reach the target (502), or is down, or hangs, is retried, within the client's timeout.
func TestProxyFailures(t *testing.T) {
	target := "https://192.0.43.10/hook"
	auth, _ := fakeProxy(t, http.StatusProxyAuthRequired)
	f := failure(t, post(t, NewTransport(TransportConfig{Proxy: auth}).Client(5*time.Second), target))
	if f.Retry || f.Rejected || !strings.Contains(f.Reason, "407 Proxy Authentication Required") {
		t.Errorf("407: got %+v, want a permanent failure naming it", f)
	}
	plain := failure(t, post(t, NewTransport(TransportConfig{Proxy: auth}).Client(5*time.Second), "http://192.0.43.10/hook"))
	if plain.Retry || plain.Rejected || !strings.Contains(plain.Reason, "407") {
		t.Errorf("407 to plain HTTP: got %+v, want a permanent failure naming it", plain)
	}

	badGateway, _ := fakeProxy(t, http.StatusBadGateway)
	f = failure(t, post(t, NewTransport(TransportConfig{Proxy: badGateway}).Client(5*time.Second), target))
	if !f.Retry || !strings.Contains(f.Reason, "502") {
		t.Errorf("502 from the proxy: got %+v, want a retry", f)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := mustURL(t, "http://"+l.Addr().String())
	l.Close()
	f = failure(t, post(t, NewTransport(TransportConfig{Proxy: down}).Client(5*time.Second), target))
	if !f.Retry || !strings.HasPrefix(f.Reason, "the outbound proxy could not be reached") {
		t.Errorf("a proxy that is down: got %+v, want a retry naming the proxy", f)
	}

	hangs, _ := hostileTarget(t, func(c net.Conn) { time.Sleep(5 * time.Second) })
	start := time.Now()
	f = failure(t, post(t, NewTransport(TransportConfig{Proxy: mustURL(t, hangs)}).Client(300*time.Millisecond), target))
	if !f.Retry || f.Reason != "request timed out" {
		t.Errorf("a proxy that hangs: got %+v, want a retry after the timeout", f)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a proxy that hangs held the delivery %s with a 300 ms timeout", d)
	}
}

// Without a proxy of its own the transport takes the environment's, as Go programs do:
// HTTP_PROXY carries a target, NO_PROXY naming it sends it directly.
func TestEnvironmentProxy(t *testing.T) {
	name := channelstest.LoopbackName()
	if name == "" {
		t.Skip("no host name but localhost resolves to 127.0.0.1 here, and Go sends no loopback target to a proxy")
	}
	proxy, requests := fakeProxy(t, http.StatusNoContent)
	rc := channelstest.NewReceiver(t, nil)
	target := strings.Replace(rc.URL, "127.0.0.1", name, 1) + "/hook"
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "http_proxy"} {
		t.Setenv(v, "")
	}
	t.Setenv("HTTP_PROXY", proxy.String())
	if err := post(t, NewHTTPClient(true, 5*time.Second), target); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 1 || len(rc.Requests()) != 0 {
		t.Fatalf("HTTP_PROXY set: the proxy got %d requests, the target %d; want the proxy's 1", requests.Load(), len(rc.Requests()))
	}
	t.Setenv("NO_PROXY", name)
	if err := post(t, NewHTTPClient(true, 5*time.Second), target); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 1 || len(rc.Requests()) != 1 {
		t.Errorf("NO_PROXY=%s: the proxy got %d requests, the target %d; want the target's 1", name, requests.Load(), len(rc.Requests()))
	}
}

// A webhook over HTTPS with a private CA and a client certificate is delivered, over HTTP/2
// since the target offers it. Without the CA the failure is permanent and says why; without
// the certificate the target refuses the connection. SetTLS (a reload) fixes each for the
// next delivery.
func TestPrivateCAAndClientCertificate(t *testing.T) {
	ca, clients := channelstest.NewCA(t, "targets' CA"), channelstest.NewCA(t, "clients' CA")
	var proto atomic.Value
	rc := channelstest.NewTLSReceiver(t, ca.Server(t).TLS, clients.Pool(), func(w http.ResponseWriter, r *http.Request) { proto.Store(r.Proto) })
	cert := clients.Client(t, "herald").TLS

	tr := NewTransport(TransportConfig{AllowPrivate: true})
	f := failure(t, post(t, tr.Client(5*time.Second), rc.URL+"/hook"))
	if f.Retry || !strings.Contains(f.Reason, "TLS certificate not accepted: signed by an unknown authority") {
		t.Errorf("system roots only: got %+v, want a permanent failure naming the unknown authority", f)
	}

	// Over TLS 1.3 the target refuses after the handshake: its alert comes before the closed
	// connection (permanent, saying why), or is lost with it (retried, as a reset).
	tr.SetTLS(TLS{Roots: ca.Pool()})
	f = failure(t, post(t, tr.Client(5*time.Second), rc.URL+"/hook"))
	if !f.Retry && !strings.Contains(f.Reason, "client certificate") || f.Retry && !strings.HasPrefix(f.Reason, "connection ") {
		t.Errorf("no client certificate: got %+v, want a permanent failure naming it, or a connection failure", f)
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("the target got %d requests from a client without a certificate", n)
	}

	tr.SetTLS(TLS{Roots: ca.Pool(), Certificate: &cert})
	if err := post(t, tr.Client(5*time.Second), rc.URL+"/hook"); err != nil {
		t.Fatalf("with the CA and the certificate: %v", err)
	}
	if got := proto.Load(); got != "HTTP/2.0" {
		t.Errorf("the target offers HTTP/2, the request came over %v", got)
	}
}
