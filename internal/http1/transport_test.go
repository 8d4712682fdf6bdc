package http1_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/http1"
)

func newTransport() *http1.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http1.Transport{Dial: d.DialContext, MaxIdlePerAddr: 8}
}

// countingServer is an httptest server that counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// post sends a POST of body to url with the given headers through rt, reads the whole answer
// and closes it.
func post(ctx context.Context, rt http.RoundTripper, url, body string, header ...string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestRequestsReuseTheirConnection(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Idempotency-Key")+" "+string(b))
		mu.Unlock()
		w.Header().Set("X-Seen", r.Header.Get("Idempotency-Key"))
		fmt.Fprintf(w, "ok %s", b)
	})
	tr := newTransport()
	for i := range 5 {
		code, body, err := post(context.Background(), tr, srv.URL+"/hook?x=1", fmt.Sprintf(`{"n":%d}`, i), "Idempotency-Key", fmt.Sprint("k", i))
		if err != nil || code != 200 || body != fmt.Sprintf(`ok {"n":%d}`, i) {
			t.Fatalf("request %d: %d %q %v", i, code, body, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 requests one after another took %d connections, want 1", n)
	}
	if got[4] != `POST /hook?x=1 k4 {"n":4}` {
		t.Errorf("server saw %q", got[4])
	}
}

func TestConcurrentRequestsEachHaveAConnection(t *testing.T) {
	release := make(chan struct{})
	var inFlight, most atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
	})
	tr := newTransport()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			if code, _, err := post(context.Background(), tr, srv.URL, "x"); err != nil || code != 200 {
				errs <- fmt.Errorf("%d %v", code, err)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for most.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if most.Load() != 4 || conns.Load() != 4 {
		t.Errorf("4 requests at once: %d in flight at most on %d connections, want 4 and 4", most.Load(), conns.Load())
	}
	// All four are kept, and used again.
	for range 4 {
		if _, _, err := post(context.Background(), tr, srv.URL, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if conns.Load() != 4 {
		t.Errorf("then %d connections, want the 4 kept", conns.Load())
	}
}

// rawServer accepts connections and lets serve talk on each, in its own goroutine.
func rawServer(t *testing.T, serve func(n int, c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(n, c)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// readRequest reads one request from br, with its body.
func readRequest(br *bufio.Reader) (*http.Request, string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(req.Body)
	return req, string(b), err
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// A server that closes a connection right after answering on it (without saying so) is the
// race net/http replays: the next request finds the connection closed. Closed before it is
// taken, it is found by the probe and not used; a request that meets the close anyway is sent
// again only when it carries an Idempotency-Key.
func TestAConnectionClosedByItsServerIsNotUsed(t *testing.T) {
	var requests atomic.Int64
	url := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		requests.Add(1)
		io.WriteString(c, okAnswer)
	})
	tr := newTransport()
	for i := range 3 {
		if code, _, err := post(context.Background(), tr, url, "x"); err != nil || code != 200 {
			t.Fatalf("request %d on a server closing each connection: %d %v", i, code, err)
		}
		time.Sleep(20 * time.Millisecond) // the close reaches the client before the next request
	}
	if requests.Load() != 3 {
		t.Errorf("server answered %d requests, want 3 (each once)", requests.Load())
	}
}

func TestAReusedConnectionClosedUnderARequestReplaysOnlyIdempotentOnes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		replay bool
	}{
		{"with an Idempotency-Key", []string{"Idempotency-Key", "k1"}, true},
		{"without", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			url := droppingSecondServer(t, &requests, nil)
			tr := newTransport()
			if _, _, err := post(context.Background(), tr, url, "first"); err != nil {
				t.Fatal(err)
			}
			code, _, err := post(context.Background(), tr, url, "second", tc.header...)
			if tc.replay {
				if err != nil || code != 200 {
					t.Fatalf("got %d %v, want the request sent again on a new connection", code, err)
				}
				if requests.Load() != 3 {
					t.Errorf("server read %d requests, want 3 (the second twice)", requests.Load())
				}
				return
			}
			if err == nil {
				t.Fatalf("got %d, want the closed connection's error (a POST without a key is not sent twice)", code)
			}
			if requests.Load() != 2 {
				t.Errorf("server read %d requests, want 2", requests.Load())
			}
		})
	}
}

// droppingSecondServer is a server that answers the first request of each connection, and on
// its first connection reads the next request and closes without answering it (after
// onSecond, if any, writes to it): a kept connection its server closed under a request. Every
// request read counts in requests.
func droppingSecondServer(t *testing.T, requests *atomic.Int64, onSecond func(net.Conn)) string {
	return rawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		if _, _, err := readRequest(br); err != nil {
			return
		}
		requests.Add(1)
		io.WriteString(c, okAnswer)
		if n != 0 {
			return
		}
		if _, _, err := readRequest(br); err == nil {
			requests.Add(1)
			if onSecond != nil {
				onSecond(c)
			}
		}
	})
}

// A GET (no body, so nothing to get again) is replayed as a POST with a key is.
func TestAReusedConnectionClosedUnderAGetReplaysIt(t *testing.T) {
	var requests atomic.Int64
	url := droppingSecondServer(t, &requests, nil)
	tr := newTransport()
	get := func() (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i := range 2 {
		if code, err := get(); err != nil || code != 200 {
			t.Fatalf("GET %d: %d %v, want 200 (the second sent again on a new connection)", i, code, err)
		}
	}
	if requests.Load() != 3 {
		t.Errorf("server read %d requests, want 3", requests.Load())
	}
}

// The replay goes on a new connection, not on another kept one that may be as stale: here both
// kept connections read the next request and close without answering.
func TestAReplayDialsANewConnection(t *testing.T) {
	var requests, opened atomic.Int64
	bothOpen := make(chan struct{})
	url := rawServer(t, func(n int, c net.Conn) {
		if opened.Add(1) == 2 {
			close(bothOpen)
		}
		br := bufio.NewReader(c)
		if _, _, err := readRequest(br); err != nil {
			return
		}
		requests.Add(1)
		if n < 2 {
			select { // the first two answer once both are open, so that both are kept
			case <-bothOpen:
			case <-time.After(5 * time.Second):
			}
		}
		io.WriteString(c, okAnswer)
		if n < 2 {
			if _, _, err := readRequest(br); err == nil {
				requests.Add(1)
			}
			return
		}
		for { // a new connection serves every request
			if _, _, err := readRequest(br); err != nil {
				return
			}
			requests.Add(1)
			io.WriteString(c, okAnswer)
		}
	})
	tr := newTransport()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, _, err := post(context.Background(), tr, url, "first"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	code, _, err := post(context.Background(), tr, url, "again", "Idempotency-Key", "k1")
	if err != nil || code != 200 {
		t.Fatalf("got %d %v, want 200 from the replay on a new connection", code, err)
	}
	if n := opened.Load(); n != 3 {
		t.Errorf("%d connections opened, want 3 (two kept, one new for the replay)", n)
	}
}

// A connection closed after an informational answer is not a request that was never
// answered: not sent again, even with an Idempotency-Key.
func TestNoReplayAfterAnInformationalAnswer(t *testing.T) {
	var requests atomic.Int64
	url := droppingSecondServer(t, &requests, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
	})
	tr := newTransport()
	if _, _, err := post(context.Background(), tr, url, "first"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := post(context.Background(), tr, url, "second", "Idempotency-Key", "k1"); err == nil {
		t.Fatal("got an answer, want the closed connection's error")
	}
	if requests.Load() != 2 {
		t.Errorf("server read %d requests, want 2 (the second not sent again)", requests.Load())
	}
}

func TestAConnectionIsKeptOnlyWhenBothSidesAllow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		header  []string
		readAll bool
		want    int64
	}{
		{"server says close", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Connection", "close") }, nil, true, 3},
		{"request says close", func(http.ResponseWriter, *http.Request) {}, []string{"Connection", "close"}, true, 3},
		{"body left unread", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("x", 100_000)) }, nil, false, 3},
		{"chunked body read to its end", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			io.WriteString(w, "b")
		}, nil, true, 1},
		{"empty answer", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, nil, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, conns := countingServer(t, tc.handler)
			tr := newTransport()
			for range 3 {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
				for i := 0; i+1 < len(tc.header); i += 2 {
					req.Header.Set(tc.header[i], tc.header[i+1])
				}
				req.Close = req.Header.Get("Connection") == "close"
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if tc.readAll {
					io.Copy(io.Discard, resp.Body)
				} else {
					resp.Body.Read(make([]byte, 10))
				}
				resp.Body.Close()
			}
			if n := conns.Load(); n != tc.want {
				t.Errorf("3 requests took %d connections, want %d", n, tc.want)
			}
		})
	}
}

func TestInformationalAnswersAreSkipped(t *testing.T) {
	url := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"+okAnswer)
		}
	})
	code, body, err := post(context.Background(), newTransport(), url, "x")
	if err != nil || code != 200 || body != "ok" {
		t.Fatalf("got %d %q %v, want the final 200 ok", code, body, err)
	}
}

// A target that sends headers without end is cut off at MaxHeaderBytes rather than read into
// memory.
func TestEndlessHeadersAreCutOff(t *testing.T) {
	url := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Pad: " + strings.Repeat("p", 1000) + "\r\n"
		for range 2 * http1.MaxHeaderBytes / len(line) {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	_, _, err := post(context.Background(), newTransport(), url, "x")
	if err == nil || !strings.Contains(err.Error(), "headers longer than") {
		t.Fatalf("got %v, want the headers refused as too long", err)
	}
}

func TestTheContextEndsARequestAtAnyPoint(t *testing.T) {
	hang := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.WriteHeader(200)
			io.WriteString(w, "part")
			w.(http.Flusher).Flush()
		}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	// Cleanups run last first: the handlers are let go before the server's Close waits for
	// them (a handler that never read its request's body does not see the client's close).
	t.Cleanup(func() { close(hang) })
	tr := newTransport()
	t.Run("deadline before the answer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, _, err := post(ctx, tr, srv.URL, "x")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %s", d)
		}
	})
	t.Run("cancelled before the answer", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, _, err := post(ctx, tr, srv.URL, "x")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	t.Run("deadline while reading the body", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, body, err := post(ctx, tr, srv.URL+"/body", "x")
		if err == nil || body != "part" {
			t.Errorf("got %q %v, want the part sent and then a timeout", body, err)
		}
	})
}

func TestIdleConnectionsAreClosedAfterIdleTimeout(t *testing.T) {
	var closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr := newTransport()
	tr.IdleTimeout = 50 * time.Millisecond
	if _, _, err := post(context.Background(), tr, srv.URL, "x"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if closed.Load() != 1 {
		t.Fatal("the idle connection was not closed within 5 s of a 50 ms idle timeout")
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %v", r.Proto, r.TLS != nil)
	}))
	srv.EnableHTTP2 = true // offered: the transport must still speak HTTP/1.1
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	t.Run("a trusted certificate", func(t *testing.T) {
		tr := newTransport()
		roots := x509.NewCertPool()
		roots.AddCert(srv.Certificate())
		tr.TLSConfig = &tls.Config{RootCAs: roots}
		for range 3 {
			code, body, err := post(context.Background(), tr, srv.URL, "x")
			if err != nil || code != 200 || body != "HTTP/1.1 true" {
				t.Fatalf("got %d %q %v", code, body, err)
			}
		}
		if conns.Load() != 1 {
			t.Errorf("3 requests took %d connections, want 1", conns.Load())
		}
	})
	t.Run("an unknown authority", func(t *testing.T) {
		_, _, err := post(context.Background(), newTransport(), srv.URL, "x")
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			t.Fatalf("got %v, want a certificate verification error", err)
		}
	})
}

func TestUnsupportedScheme(t *testing.T) {
	_, _, err := post(context.Background(), newTransport(), "ftp://127.0.0.1/x", "x")
	if err == nil || !strings.Contains(err.Error(), "unsupported protocol scheme") {
		t.Fatalf("got %v", err)
	}
}

// BenchmarkPost posts a webhook-sized body (900 bytes) to a net/http server on loopback, 64
// senders at once, through this transport and through net/http's as NewHTTPClient had it
// configured: on two cores the time an operation is about the CPU a request, client and
// server together.
func BenchmarkPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	body := strings.Repeat("x", 900)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"http1", &http1.Transport{Dial: (&net.Dialer{}).DialContext, MaxIdlePerAddr: 128}},
		{"net-http", &http.Transport{DialContext: (&net.Dialer{}).DialContext, MaxIdleConnsPerHost: 128}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetParallelism(32) // 64 senders on two cores
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if code, _, err := post(context.Background(), tc.rt, srv.URL, body); err != nil || code != http.StatusNoContent {
						b.Fatalf("%d %v", code, err)
					}
				}
			})
		})
	}
}

// Past MaxIdle idle connections over every address, the one idle the longest is closed, and
// the others are still used again.
func TestIdleConnectionsAreBoundedOverEveryAddress(t *testing.T) {
	type target struct {
		srv          *httptest.Server
		opened, shut *atomic.Int64
	}
	targets := make([]target, 3)
	for i := range targets {
		var opened, shut atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				opened.Add(1)
			case http.StateClosed:
				shut.Add(1)
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		targets[i] = target{srv, &opened, &shut}
	}
	tr := newTransport()
	tr.MaxIdle = 2
	for _, tg := range targets {
		if _, _, err := post(context.Background(), tr, tg.srv.URL, "x"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // each released after the one before
	}
	deadline := time.Now().Add(5 * time.Second)
	for targets[0].shut.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if targets[0].shut.Load() != 1 {
		t.Fatal("the connection idle the longest was not closed when a third was kept with MaxIdle 2")
	}
	for i, tg := range targets[1:] {
		if _, _, err := post(context.Background(), tr, tg.srv.URL, "x"); err != nil {
			t.Fatal(err)
		}
		if n := tg.opened.Load(); n != 1 || tg.shut.Load() != 0 {
			t.Errorf("target %d: %d connections opened, %d closed; want its kept one used again", i+1, n, tg.shut.Load())
		}
	}
}
