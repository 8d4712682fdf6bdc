package email_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"maps"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/email"
)

// received is one message as the server got it.
type received struct {
	From string
	To   []string
	Data []byte
	TLS  bool   // the message came over STARTTLS
	User string // who authenticated, if anyone
}

// backend is an SMTP server's backend that records messages. With user set it requires AUTH
// PLAIN with user and pass before MAIL. mailErr, rcptErr and dataErr are its answers to those
// commands when set.
type backend struct {
	user, pass                string
	mailErr, rcptErr, dataErr error

	mu    sync.Mutex
	msgs  []received
	auths int // AUTH attempts
}

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{b: b, c: c}, nil
}

func (b *backend) messages() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.msgs...)
}

func (b *backend) authAttempts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.auths
}

type session struct {
	b    *backend
	c    *smtp.Conn
	user string
	cur  received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		s.b.mu.Lock()
		s.b.auths++
		s.b.mu.Unlock()
		if s.b.user == "" || username != s.b.user || password != s.b.pass {
			return smtp.ErrAuthFailed
		}
		s.user = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.user != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	if s.b.mailErr != nil {
		return s.b.mailErr
	}
	s.cur = received{From: from}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.b.rcptErr != nil {
		return s.b.rcptErr
	}
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.b.dataErr != nil {
		return s.b.dataErr
	}
	_, s.cur.TLS = s.c.TLSConnectionState()
	s.cur.Data, s.cur.User = data, s.user
	s.b.mu.Lock()
	s.b.msgs = append(s.b.msgs, s.cur)
	s.b.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// server is a running SMTP server.
type server struct {
	*backend
	Addr string
	l    *countingListener
}

func (s *server) connections() int { return int(s.l.n.Load()) }

// startServer runs an SMTP server with backend b on host (127.0.0.1 unless given) for t. It
// offers STARTTLS when cert is not nil, and AUTH without TLS when insecureAuth.
func startServer(t *testing.T, host string, b *backend, cert *tls.Certificate, insecureAuth bool) *server {
	t.Helper()
	if host == "" {
		host = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	s := smtp.NewServer(b)
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.AllowInsecureAuth = insecureAuth
	s.ErrorLog = log.New(io.Discard, "", 0)
	if cert != nil {
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	go s.Serve(cl)
	t.Cleanup(func() { s.Close() })
	return &server{backend: b, Addr: l.Addr().String(), l: cl}
}

// selfSigned is a certificate for 127.0.0.1 and localhost, and a pool that trusts it.
func selfSigned(t *testing.T) (*tls.Certificate, *x509.CertPool) {
	ca := channelstest.NewCA(t, "herald test SMTP")
	cert := ca.Server(t).TLS
	return &cert, ca.Pool()
}

const from = "herald@example.com"

// delivery is an email of ev about a to ops@example.com, with the id of a's first notice.
func delivery(ev channels.Event, a herald.Alert) channels.Delivery {
	d := conformance.Delivery("EMAIL", ev, a, "emailAddress", "ops@example.com")
	d.ID = a.ID + "-0-1"
	return d
}

// parse reads a received message; its plain-text body (the text/plain part of a multipart
// one) with LF line ends.
func parse(t *testing.T, data []byte) (mail.Header, string) {
	t.Helper()
	h, parts := parseParts(t, data)
	return h, parts["text/plain"]
}

// parseParts reads a received message: its header and its body by media type, each decoded,
// with LF line ends: one for a single-part message, one per alternative of a multipart one.
func parseParts(t *testing.T, data []byte) (mail.Header, map[string]string) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the message does not parse: %v\n%s", err, data)
	}
	mediaType, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", m.Header.Get("Content-Type"), err)
	}
	out := map[string]string{}
	decode := func(r io.Reader, mediaType, encoding string) {
		if encoding == "quoted-printable" {
			r = quotedprintable.NewReader(r)
		}
		body, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		out[mediaType] = strings.ReplaceAll(string(body), "\r\n", "\n")
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		decode(m.Body, mediaType, m.Header.Get("Content-Transfer-Encoding"))
		return m.Header, out
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart() // raw: decode as a mail client does, by the part's header
		if err == io.EOF {
			return m.Header, out
		}
		if err != nil {
			t.Fatalf("a part does not parse: %v\n%s", err, data)
		}
		pt, pp, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil || pp["charset"] != "utf-8" {
			t.Fatalf("part Content-Type %q: %v", p.Header.Get("Content-Type"), err)
		}
		decode(p, pt, p.Header.Get("Content-Transfer-Encoding"))
	}
}

// clock is the time the tests' notices are read at.
var clock = time.Date(2026, 11, 21, 18, 55, 0, 0, time.UTC)

func fixedNow() time.Time { return clock }

// text is the plain-text part of the notice of d read at the tests' clock.
func text(t *testing.T, d channels.Delivery) string {
	t.Helper()
	n, ok := channels.NoticeOf(d, clock)
	if !ok {
		t.Fatalf("no notice of %s", d.Event)
	}
	return n.Text(d.Alert) + "\n"
}

// TestPlain: a server without STARTTLS gets the message in clear; every header and the body
// are as the package says, and a second send of one delivery has the same Message-ID.
func TestPlain(t *testing.T) {
	srv := startServer(t, "", &backend{}, nil, false)
	n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from}, Now: fixedNow}
	d := delivery(channels.EventOpen, channelstest.HostAlert())
	for range 2 {
		if err := n.Notify(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	msgs := srv.messages()
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	m := msgs[0]
	if m.From != from || len(m.To) != 1 || m.To[0] != "ops@example.com" {
		t.Errorf("envelope from %q to %q", m.From, m.To)
	}
	if m.TLS || m.User != "" {
		t.Errorf("TLS %v, user %q: want neither", m.TLS, m.User)
	}
	h, body := parse(t, m.Data)
	want := map[string]string{
		"From":           "<herald@example.com>",
		"To":             "<ops@example.com>",
		"Subject":        "[Herald] Open: Host down: db1.example.com:27017 (replica set rs0), project 5f0c1d2e3f4a5b6c7d8e9f00",
		"Message-Id":     "<65a1b2c3d4e5f60718293a4c-0-1@herald>",
		"Mime-Version":   "1.0",
		"Auto-Submitted": "auto-generated",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt != "multipart/alternative" {
		t.Errorf("Content-Type %q, want multipart/alternative", h.Get("Content-Type"))
	}
	if date, err := h.Date(); err != nil || !date.Equal(clock) {
		t.Errorf("Date %q: %v, want the sender's clock", h.Get("Date"), err)
	}
	if want := text(t, d); body != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
	h2, _ := parse(t, msgs[1].Data)
	if h2.Get("Message-Id") != h.Get("Message-Id") {
		t.Errorf("the retry's Message-ID %q differs from %q", h2.Get("Message-Id"), h.Get("Message-Id"))
	}
}

// TestSubjects: the subject names status, event type and target; the delivery's To wins over
// the notification's address.
func TestSubjects(t *testing.T) {
	closed := channelstest.Closed(channelstest.HostAlert(), "2026-11-21T19:00:00Z")
	metric := channelstest.MetricAlert()
	metric.HostnameAndPort = "db2.example.com:27017\r\nBcc: evil@example.com"
	cluster := herald.Alert{ID: "c1", EventTypeName: "CLUSTER_MONGOS_IS_MISSING", Status: herald.StatusOpen, ClusterName: "Cluster0"}
	named := delivery(channels.EventOpen, channelstest.HostAlert())
	named.Project, named.Org = "Orders", "Acme"
	tests := []struct {
		name, subject string
		d             channels.Delivery
	}{
		{"close", "[Herald] Resolved: Host down: db1.example.com:27017 (replica set rs0), project 5f0c1d2e3f4a5b6c7d8e9f00", delivery(channels.EventClose, closed)},
		{"injection", "[Herald] Open: Metric outside its threshold: CONNECTIONS at 512 RAW on db2.example.com:27017 Bcc: evil@example.com (replica set rs0), project 5f0c1d2e3f4a5b6c7d8e9f00", delivery(channels.EventUpdate, metric)},
		{"cluster", "[Herald] Open: No mongos running: cluster Cluster0", delivery(channels.EventOpen, cluster)},
		{"acknowledge", "[Herald] Acknowledged: Host down: db1.example.com:27017 (replica set rs0), project 5f0c1d2e3f4a5b6c7d8e9f00", delivery(channels.EventAcknowledge, channelstest.HostAlert())},
		{"names", "[Herald] Open: Host down: db1.example.com:27017 (replica set rs0), project Orders (organization Acme)", named},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, "", &backend{}, nil, false)
			n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: "Herald <" + from + ">"}, Now: fixedNow}
			tt.d.To = "Alice <alice@example.com>"
			if err := n.Notify(context.Background(), tt.d); err != nil {
				t.Fatal(err)
			}
			msgs := srv.messages()
			if len(msgs) != 1 {
				t.Fatalf("got %d messages, want 1", len(msgs))
			}
			if msgs[0].From != from || msgs[0].To[0] != "alice@example.com" {
				t.Errorf("envelope from %q to %q", msgs[0].From, msgs[0].To)
			}
			h, body := parse(t, msgs[0].Data)
			if got := h.Get("Subject"); got != tt.subject {
				t.Errorf("Subject %q, want %q", got, tt.subject)
			}
			if h.Get("Bcc") != "" {
				t.Errorf("a Bcc header was injected")
			}
			if got := h.Get("To"); got != `"Alice" <alice@example.com>` {
				t.Errorf("To %q", got)
			}
			if got := h.Get("From"); got != `"Herald" <herald@example.com>` {
				t.Errorf("From %q", got)
			}
			// Line ends in the body are LF on the way in, CRLF on the wire.
			if want := strings.ReplaceAll(text(t, tt.d), "\r\n", "\n"); body != want {
				t.Errorf("body:\n%s\nwant:\n%s", body, want)
			}
		})
	}
}

// TestSTARTTLSAndAuth: STARTTLS when offered, with the configured roots; AUTH PLAIN over it;
// wrong credentials are a permanent failure that is not Rejected and says nothing of the
// password.
func TestSTARTTLSAndAuth(t *testing.T) {
	cert, roots := selfSigned(t)
	srv := startServer(t, "", &backend{user: "mailer", pass: "s3cret-pass"}, cert, false)
	cfg := email.Config{Addr: srv.Addr, From: from, Username: "mailer", Password: "s3cret-pass",
		TLS: &tls.Config{RootCAs: roots}, Hello: "herald.example.com"}
	d := delivery(channels.EventOpen, channelstest.HostAlert())

	if err := (email.Notifier{Config: cfg}).Notify(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].User != "mailer" {
		t.Fatalf("messages %+v: want one, over TLS, from mailer", msgs)
	}

	bad := cfg
	bad.Password = "wrong-pass"
	err := (email.Notifier{Config: bad}).Notify(context.Background(), d)
	f := conformance.FailureOf(t, err)
	if f.Retry || f.Rejected || f.Status != 535 {
		t.Errorf("wrong credentials: %+v, want permanent 535, not Rejected", f)
	}
	if strings.Contains(err.Error(), "wrong-pass") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error names the password: %v", err)
	}
	if len(srv.messages()) != 1 {
		t.Errorf("a message went through with wrong credentials")
	}
}

// TestUntrustedCertificate: a STARTTLS certificate the client does not trust is a permanent
// failure, and no credentials are sent.
func TestUntrustedCertificate(t *testing.T) {
	cert, _ := selfSigned(t)
	srv := startServer(t, "", &backend{user: "mailer", pass: "pw"}, cert, false)
	n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from, Username: "mailer", Password: "pw"}}
	f := conformance.FailureOf(t, n.Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert())))
	if f.Retry || f.Rejected || !strings.Contains(f.Reason, "certificate") {
		t.Errorf("%+v, want a permanent certificate failure", f)
	}
	if srv.authAttempts() != 0 || len(srv.messages()) != 0 {
		t.Errorf("auth attempts %d, messages %d: want none", srv.authAttempts(), len(srv.messages()))
	}
}

// TestAuthWithoutTLS: without STARTTLS the password goes only to localhost (as net/smtp
// allows); to another host the send fails permanently before AUTH.
func TestAuthWithoutTLS(t *testing.T) {
	d := delivery(channels.EventOpen, channelstest.HostAlert())
	t.Run("localhost", func(t *testing.T) {
		srv := startServer(t, "", &backend{user: "mailer", pass: "pw"}, nil, true)
		n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from, Username: "mailer", Password: "pw"}}
		if err := n.Notify(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if msgs := srv.messages(); len(msgs) != 1 || msgs[0].User != "mailer" {
			t.Errorf("messages %+v, want one from mailer", msgs)
		}
	})
	t.Run("remote", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Skip("no 127.0.0.2 here:", err)
		}
		l.Close()
		srv := startServer(t, "127.0.0.2", &backend{user: "mailer", pass: "pw"}, nil, true)
		n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from, Username: "mailer", Password: "pw"}}
		f := conformance.FailureOf(t, n.Notify(context.Background(), d))
		if f.Retry || f.Rejected || !strings.Contains(f.Reason, "STARTTLS") {
			t.Errorf("%+v, want a permanent failure naming STARTTLS", f)
		}
		if srv.authAttempts() != 0 || len(srv.messages()) != 0 {
			t.Errorf("auth attempts %d, messages %d: want none", srv.authAttempts(), len(srv.messages()))
		}
	})
}

// TestReplies: 4xx replies are retried, 5xx are permanent, with the code as Status.
func TestReplies(t *testing.T) {
	smtpErr := func(code int) error {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "test answer"}
	}
	tests := []struct {
		name   string
		b      *backend
		status int
		retry  bool
	}{
		{"rcpt 451", &backend{rcptErr: smtpErr(451)}, 451, true},
		{"rcpt 550", &backend{rcptErr: smtpErr(550)}, 550, false},
		{"mail 421", &backend{mailErr: smtpErr(421)}, 421, true},
		{"data 554", &backend{dataErr: smtpErr(554)}, 554, false},
		{"data 452", &backend{dataErr: smtpErr(452)}, 452, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, "", tt.b, nil, false)
			n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from}}
			f := conformance.FailureOf(t, n.Notify(context.Background(), delivery(channels.EventOpen, channelstest.HostAlert())))
			if f.Status != tt.status || f.Retry != tt.retry || f.Rejected {
				t.Errorf("%+v, want status %d retry %v", f, tt.status, tt.retry)
			}
			if !strings.Contains(f.Reason, "test answer") {
				t.Errorf("Reason %q does not carry the server's text", f.Reason)
			}
		})
	}
}

// TestNoConnection: what cannot be sent fails permanently without connecting.
func TestNoConnection(t *testing.T) {
	srv := startServer(t, "", &backend{}, nil, false)
	ok := email.Config{Addr: srv.Addr, From: from}
	noAddr, noFrom, badAddr := ok, ok, ok
	noAddr.Addr, noFrom.From, badAddr.Addr = "", "", "127.0.0.1"
	withTo := func(to string) channels.Delivery {
		d := delivery(channels.EventOpen, channelstest.HostAlert())
		d.To = to
		return d
	}
	noRecipient := withTo("")
	noRecipient.Notification.SetField("emailAddress", "")
	tests := []struct {
		name string
		cfg  email.Config
		d    channels.Delivery
	}{
		{"no recipient", ok, noRecipient},
		{"no Addr", noAddr, withTo("")},
		{"Addr without port", badAddr, withTo("")},
		{"no From", noFrom, withTo("")},
		{"CRLF in To", ok, withTo("ops@example.com\r\nBcc: evil@example.com")},
		{"LF in To", ok, withTo("ops@example.com\nRCPT TO:<evil@example.com>")},
		{"not an address", ok, withTo("not an address")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := conformance.FailureOf(t, email.Notifier{Config: tt.cfg}.Notify(context.Background(), tt.d))
			if f.Retry || f.Rejected {
				t.Errorf("%+v, want permanent", f)
			}
		})
	}
	if c := srv.connections(); c != 0 {
		t.Errorf("%d connections, want none", c)
	}
	f := conformance.FailureOf(t, email.Notifier{Config: ok}.Message(context.Background(), "a@example.com\r\nBcc: b@example.com", "s", "b", "m1"))
	if f.Retry || srv.connections() != 0 {
		t.Errorf("Message with CRLF in to: %+v, %d connections", f, srv.connections())
	}
}

// TestConnectionFailures: no server, a server that never answers and a cancelled context are
// all retried.
func TestConnectionFailures(t *testing.T) {
	d := delivery(channels.EventOpen, channelstest.HostAlert())
	t.Run("refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		f := conformance.FailureOf(t, email.Notifier{Config: email.Config{Addr: addr, From: from}}.Notify(context.Background(), d))
		if !f.Retry || f.Status != 0 {
			t.Errorf("%+v, want Retry", f)
		}
	})
	silent := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			conns []net.Conn // held open, never answered
		)
		t.Cleanup(func() {
			l.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
		})
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
		return l.Addr().String()
	}
	t.Run("timeout", func(t *testing.T) {
		n := email.Notifier{Config: email.Config{Addr: silent(t), From: from, Timeout: 100 * time.Millisecond}}
		f := conformance.FailureOf(t, n.Notify(context.Background(), d))
		if !f.Retry || !strings.Contains(f.Reason, "timed out") {
			t.Errorf("%+v, want a retryable timeout", f)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := email.Notifier{Config: email.Config{Addr: silent(t), From: from}}
		done := make(chan error)
		go func() { done <- n.Notify(ctx, d) }()
		cancel()
		f := conformance.FailureOf(t, <-done)
		if !f.Retry {
			t.Errorf("%+v, want Retry", f)
		}
	})
}

// TestMessage: a message that is not about an alert, with a subject that tries to add a header,
// a body whose lines start with dots (stuffed on the wire, unstuffed on arrival) and non-ASCII
// text (sent quoted-printable).
func TestMessage(t *testing.T) {
	srv := startServer(t, "", &backend{}, nil, false)
	n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from}}
	body := "Your token was rejected.\n.\n..leading dots\nGrüße\n"
	err := n.Message(context.Background(), "owner@example.com", "Token rejected\r\nBcc: evil@example.com", body, "token-5f0c-1")
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || msgs[0].To[0] != "owner@example.com" {
		t.Fatalf("messages %+v", msgs)
	}
	h, got := parse(t, msgs[0].Data)
	if got != body {
		t.Errorf("body %q, want %q", got, body)
	}
	if h.Get("Bcc") != "" {
		t.Error("a Bcc header was injected")
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != "Token rejected Bcc: evil@example.com" {
		t.Errorf("Subject %q (%v)", subject, err)
	}
	if got := h.Get("Message-Id"); got != "<token-5f0c-1@herald>" {
		t.Errorf("Message-ID %q", got)
	}
	if got := h.Get("Content-Transfer-Encoding"); got != "quoted-printable" {
		t.Errorf("Content-Transfer-Encoding %q", got)
	}
}

// A notice is multipart/alternative over a real SMTP conversation: a plain part with the words
// and each offered link labelled, and an HTML part with the same words and the links as
// buttons, inline styles only, nothing to fetch or run. An alert's fields cannot add markup or
// a link of their own, and nothing secret the delivery holds goes into the mail.
func TestNoticeHasPlainAndHTMLPartsWithItsLinks(t *testing.T) {
	const secret = "integration-secret-5e1f"
	words := map[string][]string{ // in the plain part, as people read them
		"open":         {"Alert opened: Host down: <a href=", "Project: Orders (organization Acme)", "Open since 18:40 UTC, 14 min"},
		"acknowledged": {"Alert acknowledged: Host down: ", "Acknowledged until 1 Jan 2999 00:00 UTC by alice@example.com"},
		"resolved":     {"Alert resolved: Host down: ", "Resolved, lasted 21 min, 18:40 UTC to 19:02 UTC"},
	}
	for _, tc := range conformance.LinkCases() {
		t.Run(tc.Name, func(t *testing.T) {
			srv := channelstest.NewSMTPServer(t)
			n := email.Notifier{Config: email.Config{Addr: srv.Addr, From: from}, Now: fixedNow}
			tc.Alert.HostnameAndPort = `<a href="https://evil.example/">db1</a><script>alert(1)</script><img src="https://evil.example/p.png">`
			d := delivery(tc.Event, tc.Alert)
			d.Links, d.Project, d.Org = tc.Links, "Orders", "Acme"
			d.Integration = &herald.Integration{Type: "EMAIL", Fields: map[string]string{"secret": secret}}
			d.Notification.SetField("apiKey", secret)
			if err := n.Notify(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			mails := srv.Mails()
			if len(mails) != 1 {
				t.Fatalf("the server got %d mails, want 1", len(mails))
			}
			if bytes.Contains(mails[0].Data, []byte(secret)) {
				t.Errorf("the mail holds a secret of the delivery:\n%s", mails[0].Data)
			}
			h, parts := parseParts(t, mails[0].Data)
			if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt != "multipart/alternative" || len(parts) != 2 {
				t.Fatalf("Content-Type %q with parts %v, want multipart/alternative of text/plain and text/html", h.Get("Content-Type"), slices.Collect(maps.Keys(parts)))
			}
			plain, html := parts["text/plain"], parts["text/html"]
			for _, w := range words[tc.Name] {
				if !strings.Contains(plain, w) {
					t.Errorf("the plain part does not say %q:\n%s", w, plain)
				}
			}
			offered := map[string]string{"Acknowledge for 1 hour": tc.Links.Acknowledge1h, "Acknowledge for 4 hours": tc.Links.Acknowledge4h,
				"Withdraw the acknowledgement": tc.Links.Unacknowledge, "View the alert": tc.Links.View}
			for label, url := range offered {
				button := `href="` + strings.ReplaceAll(url, "&", "&amp;") + `"`
				if url == "" {
					if strings.Contains(plain, label) || strings.Contains(html, label) {
						t.Errorf("the mail offers %q, which the delivery does not", label)
					}
					continue
				}
				if !strings.Contains(plain, "\n"+label+": "+url+"\n") {
					t.Errorf("the plain part has no line %q:\n%s", label+": "+url, plain)
				}
				if !strings.Contains(html, button) || !strings.Contains(html, ">"+label+"</a>") {
					t.Errorf("the HTML part has no button %q to %s:\n%s", label, url, html)
				}
			}
			if got := strings.Count(html, "<a "); got != len(channels.Links(tc.Links)) {
				t.Errorf("the HTML part has %d links, want %d (the offered ones)", got, len(channels.Links(tc.Links)))
			}
			for _, bad := range []string{"<script", "<img", `src="`, "<link", "<style", `href="https://evil`, "url("} {
				if strings.Contains(strings.ToLower(html), bad) {
					t.Errorf("the HTML part holds %q:\n%s", bad, html)
				}
			}
			if !strings.Contains(html, "Orders (organization Acme)") {
				t.Errorf("the HTML part does not name the project:\n%s", html)
			}
		})
	}
}
