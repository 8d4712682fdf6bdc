package channels

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileTarget accepts connections on 127.0.0.1 and lets answer reply to each request it
// reads, on a goroutine of the connection's own; it counts the requests read.
func hostileTarget(t *testing.T, answer func(c net.Conn)) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var requests atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					requests.Add(1)
					answer(c)
				}
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/hook", &requests
}

// A target that answers badly costs a delivery a retryable failure, within the client's
// timeout, whatever it sends: a delivery is retried, never lost and never held. And the
// connection it spoiled is not used again: the next delivery to a well-behaved answer on the
// same address succeeds.
func TestHostileTargetsFailRetryably(t *testing.T) {
	const failed, timedOut = "connection failed", "request timed out"
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
		reason string // the *Failure's: a bad answer is found at once, a silent one by the timeout
	}{
		{"closes without answering", func(c net.Conn) { c.Close() }, failed},
		{"answers garbage", func(c net.Conn) { io.WriteString(c, "SMTP? 220 hello\r\n\r\n") }, failed},
		{"closes halfway through the headers", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Len")
			c.Close()
		}, failed},
		{"sends headers without end", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			line := "X-Pad: " + strings.Repeat("p", 4000) + "\r\n"
			for range 4000 { // 16 MB, past the transport's 10 MiB bound
				if _, err := io.WriteString(c, line); err != nil {
					return
				}
			}
		}, failed}, // cut off at the transport's bound, not left to the timeout
		{"never answers", func(c net.Conn) { time.Sleep(5 * time.Second) }, timedOut},
		{"5xx with a body that never ends", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 1000000\r\n\r\npart")
			time.Sleep(5 * time.Second)
		}, "target answered 503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := hostileTarget(t, tc.answer)
			client := NewHTTPClient(true, 500*time.Millisecond)
			start := time.Now()
			err := post(t, client, url)
			var f *Failure
			if !errors.As(err, &f) || !f.Retry || f.Reason != tc.reason {
				t.Fatalf("got %v, want a retryable *Failure, %q", err, tc.reason)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the failure took %s with a 500 ms timeout", d)
			}
			if requests.Load() != 1 {
				t.Errorf("the target read %d requests, want 1 (a POST is not sent twice)", requests.Load())
			}
		})
	}
}

// After a target closed a kept connection while it was idle, the next delivery goes out on a
// new one and succeeds: the closed connection is found before the request is written.
func TestAConnectionClosedWhileIdleIsNotUsed(t *testing.T) {
	url, requests := hostileTarget(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
		c.Close() // keep-alive said, and then closed: the idle close a server makes at its timeout
	})
	client := NewHTTPClient(true, 2*time.Second)
	for i := range 3 {
		if err := post(t, client, url); err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		time.Sleep(20 * time.Millisecond) // the close reaches this side before the next delivery
	}
	if requests.Load() != 3 {
		t.Errorf("the target read %d requests, want 3", requests.Load())
	}
}
