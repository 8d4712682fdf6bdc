//go:build linux

package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Events of a notice, as the suite counts them.
const (
	evOpen   = "open"
	evUpdate = "update"
	evClose  = "close"
)

// notice is one delivery a receiver accepted: a webhook answered 200, or an email whose DATA
// the SMTP server took.
type notice struct {
	via     string // "webhook" or "email"
	key     string // the Idempotency-Key, or the delivery id in an email's Message-ID
	event   string // evOpen, evUpdate, evClose
	alertID string
	group   string // the project (webhooks only)
	host    string // hostnameAndPort of the alert
	status  string // the alert's status as the notice tells it
	to      string // the email's recipient
	at      time.Time
	cut     bool // the request came whole but its answer was cut off (its sender killed)
	// digest is a digest mail's id (its Message-ID): it tells of several alerts, each counted
	// as a notice of its own whose told names the digest (toldInDigests).
	digest string
	told   string
}

// answer is how the webhook receiver answers at a moment: a status after a delay; hang holds
// the request until the client gives up (or the answer changes).
type answer struct {
	status int
	delay  time.Duration
	hang   bool
}

var answerOK = answer{status: http.StatusOK}

// hookReceiver is a real HTTP server on 127.0.0.1 that webhooks are sent to. It records every
// request it answered 200 as a delivered notice, counts the others by status, and remembers
// requests whose client went away before the answer (cut: the sender died or timed out).
type hookReceiver struct {
	url string

	mu        sync.Mutex
	answer    answer
	delivered []notice
	refused   map[int]int
	cut       []notice // requests whose client went away, at when it did
	inFlight  int
	ports     map[int][]string // client port -> projects of the requests being answered now on it
	port      int              // the receiver's own
}

func startHooks(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{answer: answerOK, refused: map[int]int{}, ports: map[int][]string{}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook"
	h.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return h
}

// setAnswer changes how requests are answered from now on.
func (h *hookReceiver) setAnswer(a answer) {
	h.mu.Lock()
	h.answer = a
	h.mu.Unlock()
}

func (h *hookReceiver) currentAnswer() answer {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answer
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	n := parseWebhook(r.Header, raw)
	port := 0
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		port = int(ap.Port())
	}
	h.mu.Lock()
	h.inFlight++
	h.ports[port] = append(h.ports[port], n.group)
	a := h.answer
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		if h.ports[port] = h.ports[port][1:]; len(h.ports[port]) == 0 {
			delete(h.ports, port)
		}
		h.mu.Unlock()
	}()
	if a.hang {
		// Held until the client gives up, or until the receiver answers otherwise again.
		for a.hang {
			select {
			case <-r.Context().Done():
				h.cutOff(n)
				return
			case <-time.After(100 * time.Millisecond):
			}
			a = h.currentAnswer()
		}
	}
	if a.delay > 0 {
		select {
		case <-r.Context().Done():
			h.cutOff(n)
			return
		case <-time.After(a.delay):
		}
	}
	if a.status != http.StatusOK {
		h.mu.Lock()
		h.refused[a.status]++
		h.mu.Unlock()
		w.WriteHeader(a.status)
		return
	}
	n.at = time.Now()
	h.mu.Lock()
	h.delivered = append(h.delivered, n)
	h.mu.Unlock()
}

func (h *hookReceiver) cutOff(n notice) {
	n.at, n.cut = time.Now(), true
	h.mu.Lock()
	h.cut = append(h.cut, n)
	h.mu.Unlock()
}

// parseWebhook reads what a webhook request tells: the body is the alert as the API shows it.
func parseWebhook(hdr http.Header, body []byte) notice {
	var a struct {
		ID, GroupID, Status, HostnameAndPort string
	}
	_ = json.Unmarshal(body, &a)
	return notice{via: "webhook", key: hdr.Get("Idempotency-Key"), event: strings.TrimPrefix(hdr.Get("X-Vendor-Event"), "alert."),
		alertID: a.ID, group: a.GroupID, host: a.HostnameAndPort, status: a.Status}
}

// notices is what was delivered so far.
func (h *hookReceiver) notices() []notice {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]notice(nil), h.delivered...)
}

// cutRequests are the requests whose client went away before the answer.
func (h *hookReceiver) cutRequests() []notice {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]notice(nil), h.cut...)
}

// busy is how many requests are being answered now.
func (h *hookReceiver) busy() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight
}

// senders are the projects of the requests being answered now, by the pid of the process that
// sent them, among pids.
func (h *hookReceiver) senders(pids []int) map[int][]string {
	h.mu.Lock()
	ports := maps.Clone(h.ports)
	h.mu.Unlock()
	return socketOwners(h.port, ports, pids)
}

// socketOwners maps what is under way on connections to the server on 127.0.0.1:port (ports:
// client port -> what) to the pid, among pids, of the process holding each client socket. A
// request names no worker, so the receiver asks the kernel: the inode of each client socket
// (/proc/net/tcp), and the process holding a descriptor on it (/proc/<pid>/fd).
func socketOwners(port int, ports map[int][]string, pids []int) map[int][]string {
	inodes := map[string][]string{} // socket inode -> what is under way on it
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode;
		// addresses in hex, IPv4 in the kernel's (little-endian) byte order.
		fs := strings.Fields(sc.Text())
		if len(fs) <= 9 || fs[2] != fmt.Sprintf("0100007F:%04X", port) {
			continue
		}
		var local int
		if _, err := fmt.Sscanf(fs[1], "0100007F:%X", &local); err == nil && len(ports[local]) > 0 {
			inodes[fs[9]] = append(inodes[fs[9]], ports[local]...)
		}
	}
	out := map[int][]string{}
	for _, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				out[pid] = append(out[pid], inodes[strings.TrimSuffix(inode, "]")]...)
			}
		}
	}
	return out
}

// refusals is how many requests were answered with an error status.
func (h *hookReceiver) refusals() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.refused {
		n += c
	}
	return n
}

// smtpReceiver is a real SMTP server (go-smtp) on 127.0.0.1, no TLS, no AUTH, that records
// every message as a delivered notice.
type smtpReceiver struct {
	addr     string
	port     int
	delay    time.Duration // how long the server takes to accept a message, as a real one does
	mu       sync.Mutex
	got      []notice
	inFlight map[int][]string // client port -> Message-IDs of the messages being accepted on it
}

func startSMTP(t *testing.T) *smtpReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpReceiver{addr: l.Addr().String(), port: l.Addr().(*net.TCPAddr).Port, delay: 20 * time.Millisecond, inFlight: map[int][]string{}}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// setDelay changes how long the server takes to accept a message.
func (s *smtpReceiver) setDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

func (s *smtpReceiver) notices() []notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notice(nil), s.got...)
}

// sending are the Message-IDs of the messages being accepted now, by the pid of the process
// that sends them, among pids.
func (s *smtpReceiver) sending(pids []int) map[int][]string {
	s.mu.Lock()
	ports := maps.Clone(s.inFlight)
	s.mu.Unlock()
	return socketOwners(s.port, ports, pids)
}

// NewSession is go-smtp's backend hook.
func (s *smtpReceiver) NewSession(c *smtp.Conn) (smtp.Session, error) {
	port := 0
	if a, ok := c.Conn().RemoteAddr().(*net.TCPAddr); ok {
		port = a.Port
	}
	return &smtpSession{srv: s, port: port}, nil
}

type smtpSession struct {
	srv  *smtpReceiver
	port int
	to   string
}

func (ss *smtpSession) Mail(string, *smtp.MailOptions) error { return nil }
func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = to
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, m.Body)
	n := parseEmail(ss.to, m.Header)
	ss.srv.mu.Lock()
	delay := ss.srv.delay
	ss.srv.inFlight[ss.port] = append(ss.srv.inFlight[ss.port], n.key)
	ss.srv.mu.Unlock()
	// Accepted once the delay is over, whether or not the sender is still there to hear it (a
	// real server has queued the message by then): a sender killed meanwhile sends it again.
	time.Sleep(delay)
	n.at = time.Now()
	ss.srv.mu.Lock()
	ss.srv.got = append(ss.srv.got, n)
	if ss.srv.inFlight[ss.port] = ss.srv.inFlight[ss.port][1:]; len(ss.srv.inFlight[ss.port]) == 0 {
		delete(ss.srv.inFlight, ss.port)
	}
	ss.srv.mu.Unlock()
	return nil
}

func (ss *smtpSession) Reset()        { ss.to = "" }
func (ss *smtpSession) Logout() error { return nil }

// parseEmail reads what an alert email tells. Its Message-ID is <delivery id@herald>, the id
// <alert>-<notification>-<seq|close>-<user>-EMAIL; its subject
// "[Herald] <Status>: <event type in words>: <host> (replica set ...), project ...". A
// digest's Message-ID is <digest id@herald>, an id without dashes; its subject counts alerts.
func parseEmail(to string, h mail.Header) notice {
	n := notice{via: "email", to: to}
	n.key = strings.TrimSuffix(strings.TrimPrefix(h.Get("Message-Id"), "<"), "@herald>")
	if isDigestID(n.key) {
		n.digest = n.key
	}
	parts := strings.Split(n.key, "-")
	if len(parts) >= 3 {
		n.alertID = parts[0]
		switch parts[2] {
		case "close":
			n.event = evClose
		case "1":
			n.event = evOpen
		default:
			n.event = evUpdate
		}
	}
	subject := strings.TrimPrefix(h.Get("Subject"), "[Herald] ")
	status, rest, _ := strings.Cut(subject, ": ")
	n.status = strings.ToUpper(status)
	if status == "Resolved" {
		n.status = "CLOSED"
	}
	if _, target, ok := strings.Cut(rest, ": "); ok {
		n.host, _, _ = strings.Cut(target, " (")
		n.host, _, _ = strings.Cut(n.host, ", project ")
	}
	if n.digest != "" && n.host != "" { // a digest of one notice is that notice, under the digest's id
		n.event = evOpen
		if n.status == "CLOSED" {
			n.event = evClose
		}
	} else if n.digest != "" {
		n.status = ""
	}
	return n
}
