package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// Transport is an http.RoundTripper speaking HTTP/1.1 over connections it keeps per scheme and
// address. The zero value is not usable: Dial must be set.
type Transport struct {
	// Dial opens a TCP connection to addr (host:port); it is where the caller refuses
	// addresses it must not reach.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSConfig is cloned for each https connection (nil: the defaults), with ServerName set
	// to the request's host and HTTP/1.1 the only protocol offered.
	TLSConfig *tls.Config
	// TLSHandshakeTimeout bounds a handshake (0: only the request's context does).
	TLSHandshakeTimeout time.Duration
	// MaxIdlePerAddr is how many idle connections are kept per scheme and address (0: 2).
	MaxIdlePerAddr int
	// MaxIdle is how many idle connections are kept over every address together (0: 256):
	// past it, the one idle the longest is closed. A worker delivering to thousands of
	// targets would otherwise hold a descriptor for each of them until IdleTimeout.
	MaxIdle int
	// IdleTimeout is how long an idle connection is kept (0: 90 s).
	IdleTimeout time.Duration

	mu       sync.Mutex
	idle     map[string][]*conn // by scheme://addr, most recently used last
	idleN    int                // connections in idle
	sweeping bool               // a sweep of idle connections is scheduled
}

// conn is one connection with its buffers. Only one exchange uses it at a time.
type conn struct {
	net.Conn
	raw    net.Conn // under TLS, the TCP connection (for the liveness probe)
	br     *bufio.Reader
	bw     *bufio.Writer
	key    string
	idleAt time.Time
	// left is how many more bytes br may read from the connection: an answer's status line
	// and headers are bounded by MaxHeaderBytes (a target sending headers without end is cut
	// off, as net/http's MaxResponseHeaderBytes does), its body by the caller's reading.
	left int64
}

// Read is br's source: the connection, within left.
func (c *conn) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errHeadersTooLong
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.Conn.Read(p)
	c.left -= int64(n)
	return n, err
}

// MaxHeaderBytes bounds what an answer's status line and headers (and any 1xx answers before
// it) may take: net/http's default for MaxResponseHeaderBytes.
const MaxHeaderBytes = 10 << 20

const unlimited = 1<<63 - 1

var (
	errUnsupportedScheme = errors.New("http1: unsupported protocol scheme")
	errHeadersTooLong    = fmt.Errorf("http1: answer's headers longer than %d bytes", MaxHeaderBytes)
	aLongTimeAgo         = time.Unix(1, 0)
)

// RoundTrip sends req on an idle connection of its address, or a new one, and reads the
// answer. The answer's body must be read to its end and closed for the connection to be
// kept; closing it sooner closes the connection.
//
// A request the server may safely receive twice (one net/http would replay: GET, HEAD,
// OPTIONS or TRACE, or one with an Idempotency-Key header) with a body it can send again is
// sent again, once and on a new connection (another kept one may be as stale), when a reused
// one turns out closed by its server before a byte of an answer came back: the server's idle
// close racing the request, which net/http replays the same way.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.URL == nil || req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("http1: request without a host")
	}
	key, addr, useTLS, err := target(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	for replay := false; ; replay = true {
		c, reused, err := t.conn(ctx, key, addr, useTLS, req.URL.Hostname(), !replay)
		if err != nil {
			closeBody(req)
			return nil, contextErr(ctx, err)
		}
		resp, sentNothing, err := t.exchange(ctx, c, req)
		if err == nil {
			return resp, nil
		}
		if !reused || !sentNothing || !replayable(req) || ctx.Err() != nil {
			return nil, contextErr(ctx, err)
		}
		if req.GetBody != nil { // the body Write sent (and closed), anew; a request without one goes as it is
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, contextErr(ctx, err)
			}
			r := *req
			r.Body = body
			req = &r
		}
	}
}

// exchange writes req on c and reads its answer. sentNothing says that the failure came before
// any byte of an answer (an informational one included): a closed connection found only now.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (_ *http.Response, sentNothing bool, _ error) {
	deadline, _ := ctx.Deadline()
	if err := c.SetDeadline(deadline); err != nil {
		c.Close()
		return nil, true, err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(aLongTimeAgo) })
	fail := func(err error, sentNothing bool) (*http.Response, bool, error) {
		stop()
		c.Close()
		return nil, sentNothing, err
	}
	if err := req.Write(c.bw); err != nil {
		return fail(err, true)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err, true)
	}
	var resp *http.Response
	c.left = MaxHeaderBytes
	for informational := 0; ; informational++ {
		if _, err := c.br.Peek(1); err != nil {
			return fail(err, informational == 0)
		}
		r, err := http.ReadResponse(c.br, req)
		if err != nil {
			return fail(err, false)
		}
		// 1xx answers (but 101, a protocol switch this transport does not make) come before
		// the real one.
		if r.StatusCode >= 100 && r.StatusCode < 200 && r.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		resp = r
		break
	}
	c.left = unlimited
	keep := !resp.Close && !req.Close
	if resp.Body == http.NoBody || resp.Body == nil {
		resp.Body = http.NoBody
		t.release(c, stop() && keep)
		return resp, false, nil
	}
	resp.Body = &body{rc: resp.Body, c: c, t: t, keep: keep, stop: stop}
	return resp, false, nil
}

// body is an answer's body: its connection goes back to the idle ones once it was read to its
// end and closed, and is closed otherwise.
type body struct {
	rc   io.ReadCloser
	c    *conn
	t    *Transport
	keep bool // the answer and request allow the connection to be kept
	eof  bool
	stop func() bool // stops the context's watch over the connection
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *body) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close()
	// stop reports false when the context's end already reached the connection (its deadline
	// set in the past, or about to be): not a connection to keep.
	stopped := b.stop()
	b.t.release(b.c, stopped && b.keep && b.eof && err == nil)
	return err
}

// conn is an idle connection to key (when mayReuse), or a new one to addr, under TLS for host
// when useTLS. reused says which.
func (t *Transport) conn(ctx context.Context, key, addr string, useTLS bool, host string, mayReuse bool) (_ *conn, reused bool, _ error) {
	for mayReuse {
		c := t.takeIdle(key)
		if c == nil {
			break
		}
		if !alive(c) { // closed by its server while idle: found before the request is sent
			c.Close()
			continue
		}
		return c, true, nil
	}
	raw, err := t.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	nc := raw
	if useTLS {
		cfg := &tls.Config{}
		if t.TLSConfig != nil {
			cfg = t.TLSConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(raw, cfg)
		hctx := ctx
		if t.TLSHandshakeTimeout > 0 {
			var cancel context.CancelFunc
			hctx, cancel = context.WithTimeout(ctx, t.TLSHandshakeTimeout)
			defer cancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, false, err
		}
		nc = tc
	}
	c := &conn{Conn: nc, raw: raw, bw: bufio.NewWriter(nc), key: key}
	c.br = bufio.NewReader(c)
	return c, false, nil
}

func (t *Transport) takeIdle(key string) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[key]
	if len(cs) == 0 {
		return nil
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	t.idle[key] = cs[:len(cs)-1]
	t.idleN--
	return c
}

// release keeps c as idle, or closes it.
func (t *Transport) release(c *conn, keep bool) {
	if !keep || c.br.Buffered() > 0 { // bytes past the answer: the connection is out of step
		c.Close()
		return
	}
	c.idleAt = time.Now()
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	if len(t.idle[c.key]) >= t.maxIdlePerAddr() {
		t.mu.Unlock()
		c.Close()
		return
	}
	var evicted *conn
	if t.idleN >= t.maxIdle() {
		evicted = t.takeOldestLocked()
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	t.idleN++
	if !t.sweeping {
		t.sweeping = true
		time.AfterFunc(t.idleTimeout(), t.sweep)
	}
	t.mu.Unlock()
	if evicted != nil {
		evicted.Close()
	}
}

// takeOldestLocked takes out of idle the connection idle the longest: the first of one of its
// lists (each is in the order its connections were released). t.mu is held.
func (t *Transport) takeOldestLocked() *conn {
	var oldest string
	for key, cs := range t.idle {
		if len(cs) > 0 && (oldest == "" || cs[0].idleAt.Before(t.idle[oldest][0].idleAt)) {
			oldest = key
		}
	}
	if oldest == "" {
		return nil
	}
	cs := t.idle[oldest]
	c := cs[0]
	n := copy(cs, cs[1:])
	cs[n] = nil
	if n == 0 {
		delete(t.idle, oldest)
	} else {
		t.idle[oldest] = cs[:n]
	}
	t.idleN--
	return c
}

// sweep closes the connections idle for longer than IdleTimeout, and comes again while any
// are kept.
func (t *Transport) sweep() {
	var stale []*conn
	t.mu.Lock()
	now := time.Now()
	for key, cs := range t.idle {
		kept := cs[:0]
		for _, c := range cs {
			if now.Sub(c.idleAt) >= t.idleTimeout() {
				stale = append(stale, c)
			} else {
				kept = append(kept, c)
			}
		}
		clear(cs[len(kept):])
		t.idleN -= len(cs) - len(kept)
		if len(kept) == 0 {
			delete(t.idle, key)
		} else {
			t.idle[key] = kept
		}
	}
	t.sweeping = len(t.idle) > 0
	if t.sweeping {
		time.AfterFunc(t.idleTimeout()/2, t.sweep)
	}
	t.mu.Unlock()
	for _, c := range stale {
		c.Close()
	}
}

// CloseIdleConnections closes the connections kept idle (http.Client.CloseIdleConnections
// calls it).
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.idleN = nil, 0
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.Close()
		}
	}
}

func (t *Transport) maxIdlePerAddr() int {
	if t.MaxIdlePerAddr > 0 {
		return t.MaxIdlePerAddr
	}
	return 2
}

func (t *Transport) maxIdle() int {
	if t.MaxIdle > 0 {
		return t.MaxIdle
	}
	return 256
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return 90 * time.Second
}

// target is the key of req's connections (scheme://host:port), the address to dial and whether
// the connection is under TLS.
func target(req *http.Request) (key, addr string, useTLS bool, err error) {
	port := req.URL.Port()
	switch req.URL.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return "", "", false, fmt.Errorf("%w %q", errUnsupportedScheme, req.URL.Scheme)
	}
	addr = net.JoinHostPort(req.URL.Hostname(), port)
	return req.URL.Scheme + "://" + addr, addr, req.URL.Scheme == "https", nil
}

// replayable says whether req may be sent again after a reused connection failed before any
// answer: net/http's rule (Request.isReplayable).
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// contextErr is err, or the context's own error when the context ended it (the cancellation
// shows as a passed deadline on the connection). The connection's deadline is the context's,
// and its timeout can be seen before the context's own timer has marked the context done: a
// timeout at or past the context's deadline is that deadline.
func contextErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if d, ok := ctx.Deadline(); cerr == nil && ok && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(d) {
		cerr = context.DeadlineExceeded
	}
	if cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
