package email

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// Config is the operator's SMTP server.
type Config struct {
	Addr     string        // host:port of the SMTP server (HERALD_SMTP_ADDR)
	From     string        // envelope and header sender (HERALD_SMTP_FROM)
	Username string        // AUTH PLAIN when set (HERALD_SMTP_USERNAME)
	Password string        // (HERALD_SMTP_PASSWORD) never logged
	TLS      *tls.Config   // for STARTTLS; nil: system roots, ServerName = host of Addr
	Timeout  time.Duration // whole conversation; default 30s
	Hello    string        // EHLO name; default "localhost"
}

// Check says what in c fails every message, before one is sent: a server address that is not
// host:port, a sender that is not an email address. A worker checks it when it starts.
func (c Config) Check() error {
	if c.Addr == "" {
		return errors.New("no SMTP server configured (HERALD_SMTP_ADDR)")
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err == nil && host != "" {
		_, err = net.LookupPort("tcp", port) // a number or a service's name; not "25 "
	}
	if err != nil || host == "" {
		return errors.New("the SMTP server address is not host:port (HERALD_SMTP_ADDR)")
	}
	if c.From == "" {
		return errors.New("no sender address configured (HERALD_SMTP_FROM)")
	}
	if _, err := address(c.From); err != nil {
		return errors.New("the sender address (HERALD_SMTP_FROM) " + err.Error())
	}
	return nil
}

// Notifier sends EMAIL deliveries through the configured server. Now is the clock its notices
// say "since when" and "for how long" against (nil: the system clock).
type Notifier struct {
	Config
	Now channels.Now
}

const (
	defaultTimeout = 30 * time.Second
	defaultHello   = "localhost"
	// maxSubject bounds a subject, past "[Herald] ".
	maxSubject = 250
	// maxLine is RFC 5322's limit on a line, CRLF excluded: a body with a longer line is sent
	// quoted-printable.
	maxLine = 998
)

// Notify sends d to d.To, else to the notification's emailAddress. See the package doc.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	to, err := d.Recipient("emailAddress")
	if err != nil {
		return err
	}
	if d.ID == "" {
		return &channels.Failure{Reason: "delivery has no id"}
	}
	now := n.Now.Time()
	notice, ok := channels.NoticeOf(d, now)
	if !ok {
		return channels.NoEvent()
	}
	html, err := htmlBody(notice, d.Alert)
	if err != nil {
		return &channels.Failure{Reason: "the message could not be written"}
	}
	return n.send(ctx, to, subject(notice), []part{{"text/plain", notice.Text(d.Alert)}, {"text/html", html}}, d.ID, now)
}

// Message sends a plain message that is not about an alert (the dispatcher emails project
// owners when a token is rejected). messageID makes the Message-ID <messageID@herald>, the
// same on every retry; "" means a random one.
func (n Notifier) Message(ctx context.Context, to, subject, body, messageID string) error {
	if to == "" {
		return &channels.Failure{Reason: "no email address"}
	}
	if messageID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails
		messageID = hex.EncodeToString(b[:])
	}
	return n.send(ctx, to, herald.OneLine(subject), []part{{"text/plain", body}}, messageID, n.Now.Time())
}

// subject is the subject of a notice's message: "[Herald] Open: Host down:
// db1.example.com:27017 (replica set rs0), project Orders".
func subject(n channels.Notice) string {
	return "[Herald] " + channels.Truncate(herald.OneLine(n.Subject()), maxSubject, "...")
}

// send has one SMTP conversation that delivers one message: its parts are the alternatives of
// one text, plainest first.
func (n Notifier) send(ctx context.Context, to, subject string, parts []part, messageID string, now time.Time) error {
	if err := n.Check(); err != nil {
		return &channels.Failure{Reason: err.Error()}
	}
	host, _, _ := net.SplitHostPort(n.Addr)
	from, _ := address(n.From)
	rcpt, err := address(to)
	if err != nil {
		return &channels.Failure{Reason: "the recipient address " + err.Error()}
	}
	hello := cmp.Or(n.Hello, defaultHello)
	if strings.ContainsAny(hello, "\r\n \t") {
		return &channels.Failure{Reason: "the EHLO name is not a single word"}
	}
	msg := compose(from, rcpt, subject, parts, messageID, now)

	timeout := n.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", n.Addr)
	if err != nil {
		return transportFailure(ctx, "connect", err)
	}
	defer conn.Close()
	// One deadline for the whole conversation, and cancelling ctx ends it at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c, err := smtp.NewClient(conn, host) // reads the greeting
	if err != nil {
		return failure(ctx, "greeting", err)
	}
	defer c.Close()
	if err := c.Hello(hello); err != nil {
		return failure(ctx, "EHLO", err)
	}
	tlsOn := false
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := n.TLS.Clone()
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		if err := c.StartTLS(cfg); err != nil {
			return failure(ctx, "STARTTLS", err)
		}
		tlsOn = true
	}
	if n.Username != "" {
		// net/smtp's PlainAuth refuses the same, but say why rather than fail obscurely.
		if !tlsOn && !isLocalhost(host) {
			return &channels.Failure{Reason: "the SMTP server does not offer STARTTLS: credentials are not sent in clear"}
		}
		if ok, _ := c.Extension("AUTH"); !ok {
			return &channels.Failure{Reason: "the SMTP server does not offer AUTH"}
		}
		if err := c.Auth(smtp.PlainAuth("", n.Username, n.Password, host)); err != nil {
			return authFailure(ctx, err)
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return failure(ctx, "MAIL FROM", err)
	}
	if err := c.Rcpt(rcpt.Address); err != nil {
		return failure(ctx, "RCPT TO", err)
	}
	w, err := c.Data()
	if err != nil {
		return failure(ctx, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil { // dot-stuffed and CRLF-terminated by the writer
		return failure(ctx, "DATA", err)
	}
	if err := w.Close(); err != nil { // the server's answer to the message
		return failure(ctx, "DATA", err)
	}
	_ = c.Quit() // the message is accepted: a failed QUIT does not undo that
	return nil
}

// address parses an address given to send to or from. The error completes "the ... address".
func address(s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("contains a line break")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, errors.New("is not an email address")
	}
	return a, nil
}

// part is one alternative of a message's text: its media type (charset utf-8) and its body.
type part struct{ mediaType, body string }

// compose builds the message: headers, a blank line, the body; a message of several parts is
// multipart/alternative, each part with its own type and encoding. Lines end in LF, except the
// multipart boundaries' CRLF; the DATA writer turns LF into CRLF and leaves CRLF as it is.
func compose(from, to *mail.Address, subject string, parts []part, messageID string, now time.Time) []byte {
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\n") }
	header("From", from.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", herald.OneLine(subject)))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+msgIDPart(messageID)+"@herald>")
	header("MIME-Version", "1.0")
	header("Auto-Submitted", "auto-generated") // RFC 3834: no auto-replies, please
	if len(parts) == 1 {
		body, encoding := encode(parts[0].body)
		header("Content-Type", parts[0].mediaType+"; charset=utf-8")
		header("Content-Transfer-Encoding", encoding)
		b.WriteString("\n")
		b.WriteString(body)
		return b.Bytes()
	}
	mw := multipart.NewWriter(&b)
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\n")
	for _, p := range parts {
		body, encoding := encode(p.body)
		w, _ := mw.CreatePart(textproto.MIMEHeader{ // to a buffer: cannot fail
			"Content-Type":              {p.mediaType + "; charset=utf-8"},
			"Content-Transfer-Encoding": {encoding},
		})
		_, _ = io.WriteString(w, body)
	}
	_ = mw.Close()
	return b.Bytes()
}

// encode is body as it goes in a message, ending in a line end, and its transfer encoding:
// 7bit when it can go as it is, else quoted-printable.
func encode(body string) (string, string) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = strings.ReplaceAll(body, "\r", "\n")
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if plainASCII(body) {
		return body, "7bit"
	}
	var b strings.Builder
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(body)) // to a buffer: cannot fail
	_ = qp.Close()
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, "quoted-printable"
}

// plainASCII reports whether body can go as it is: ASCII without control characters other
// than tab and line feed, and no line longer than SMTP allows.
func plainASCII(body string) bool {
	for line := range strings.SplitSeq(body, "\n") {
		if len(line) > maxLine {
			return false
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c >= 0x7f || (c < 0x20 && c != '\t') {
				return false
			}
		}
	}
	return true
}

// msgIDPart makes id fit the left part of a Message-ID: atext and dots only.
func msgIDPart(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			strings.ContainsRune("!#$%&'*+/=?^_`{|}~.-", r):
			return r
		}
		return '_'
	}, id)
}

// isLocalhost is net/smtp's: the names to which PlainAuth sends credentials without TLS.
func isLocalhost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// failure classifies what went wrong at stage of the conversation: an SMTP reply by its code
// (4xx retried, 5xx permanent), anything else as a connection failure.
func failure(ctx context.Context, stage string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		f := replyFailure(stage, te)
		if msg := serverText(te.Msg); msg != "" {
			f.Reason += " " + msg
		}
		return f
	}
	return transportFailure(ctx, stage, err)
}

// authFailure is failure for AUTH, without the server's text: the credentials are the
// operator's, so a refusal is permanent but not Rejected.
func authFailure(ctx context.Context, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return replyFailure("AUTH", te)
	}
	var ne net.Error
	if errors.As(err, &ne) || ctx.Err() != nil {
		return transportFailure(ctx, "AUTH", err)
	}
	return &channels.Failure{Reason: "SMTP AUTH could not be done"}
}

func replyFailure(stage string, te *textproto.Error) *channels.Failure {
	f := &channels.Failure{Status: te.Code, Reason: fmt.Sprintf("SMTP server refused %s: %d", stage, te.Code)}
	switch {
	case te.Code >= 500 && te.Code < 600:
	case te.Code >= 400 && te.Code < 500:
		f.Reason = fmt.Sprintf("SMTP server deferred %s: %d", stage, te.Code)
		f.Retry = true
	default:
		f.Reason = fmt.Sprintf("SMTP server answered %s with an unexpected %d", stage, te.Code)
		f.Retry = true
	}
	return f
}

// transportFailure classifies an error that is not an SMTP reply as channels.Classify does a
// request without an answer (timeouts and connection errors retried, a TLS certificate not
// accepted permanent), preferring the context's own error when it ended the conversation.
func transportFailure(ctx context.Context, stage string, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	var f *channels.Failure
	if !errors.As(channels.Classify(nil, err), &f) {
		f = &channels.Failure{Retry: true, Reason: "connection failed"}
	}
	g := *f
	g.Reason = "SMTP " + stage + ": " + f.Reason
	return &g
}

// serverText is the server's reply text, on one line and short, in parentheses.
func serverText(msg string) string {
	msg = channels.Truncate(herald.OneLine(msg), 200, "...")
	if msg == "" {
		return ""
	}
	return "(" + msg + ")"
}

// Kind is EMAIL: a message to the notification's emailAddress, and the means by which GROUP,
// ORG, USER and ADMIN notifications email people. It is sent once the operator names a mail
// server (HERALD_SMTP_ADDR).
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "EMAIL", Project: true, Global: true, Links: true, Actor: "emailAddress", Queue: "deliveries-email", Priority: 3,
		Fields: []herald.KindField{{Name: "emailAddress", Required: true, Check: herald.CheckEmailAddress}}},
	Settings: []channels.Setting{
		{Flag: "smtp-addr", Env: herald.SettingMail, Help: "mail server host:port for EMAIL (and GROUP/ORG/USER by email); unset: no mail"},
		{Flag: "smtp-from", Env: "HERALD_SMTP_FROM", Default: "herald@localhost", Help: "sender address of mail"},
		{Flag: "smtp-username", Env: "HERALD_SMTP_USERNAME", Exact: true, Help: "mail server login (the password: HERALD_SMTP_PASSWORD, environment only)"},
		{Env: "HERALD_SMTP_PASSWORD", Secret: true},
	},
	Check: func(s channels.Settings) error {
		c := config(s)
		if c.Addr == "" { // no mail
			return nil
		}
		if err := c.Check(); err != nil {
			return fmt.Errorf("%w: HERALD_SMTP_ADDR=%q, HERALD_SMTP_FROM=%q", err, c.Addr, c.From)
		}
		return nil
	},
	New: func(s channels.Settings, _ *http.Client) channels.Notifier {
		if s[herald.SettingMail] == "" {
			return nil
		}
		return Notifier{Config: config(s)}
	},
}

func config(s channels.Settings) Config {
	return Config{Addr: s[herald.SettingMail], From: s["HERALD_SMTP_FROM"], Username: s["HERALD_SMTP_USERNAME"], Password: s["HERALD_SMTP_PASSWORD"]}
}
