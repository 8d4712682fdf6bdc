package channelstest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// Mail is one message an SMTP server received.
type Mail struct {
	From string
	To   []string
	Data []byte
}

// SMTPServer is a real SMTP server on 127.0.0.1 (no TLS, no AUTH) that keeps what it receives.
type SMTPServer struct {
	Addr string
	mu   sync.Mutex
	got  []Mail
	// refuse, when set, answers a message's end of DATA instead of keeping it, when it returns
	// an error (a *smtp.SMTPError: 451 to defer it, say).
	refuse func(Mail) error
}

// RefuseWith makes the server answer each message with refuse's error, when it returns one,
// instead of keeping it.
func (s *SMTPServer) RefuseWith(refuse func(Mail) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = refuse
}

// NewSMTPServer starts an SMTP server for t.
func NewSMTPServer(t testing.TB) *SMTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SMTPServer{Addr: l.Addr().String()}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Mails is what the server received so far.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.got...)
}

// NewSession is go-smtp's backend hook.
func (s *SMTPServer) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{srv: s}, nil }

type smtpSession struct {
	srv *SMTPServer
	cur Mail
}

func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error { ss.cur.From = from; return nil }
func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.cur.To = append(ss.cur.To, to)
	return nil
}
func (ss *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.cur.Data = b
	ss.srv.mu.Lock()
	refuse := ss.srv.refuse
	ss.srv.mu.Unlock()
	if refuse != nil {
		if err := refuse(ss.cur); err != nil {
			ss.cur = Mail{}
			return err
		}
	}
	ss.srv.mu.Lock()
	ss.srv.got = append(ss.srv.got, ss.cur)
	ss.srv.mu.Unlock()
	ss.cur = Mail{}
	return nil
}
func (ss *smtpSession) Reset()        { ss.cur = Mail{} }
func (ss *smtpSession) Logout() error { return nil }
