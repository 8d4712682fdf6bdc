package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
)

// The services of scenario 9 on 127.0.0.1: the SMTP server the tests use (no limit), an SMS
// gateway speaking the gateway's Messages API (channels/sms) and a chat service speaking
// chat.postMessage (channels/chatb). The gateway takes one message a second per number and
// the chat service one a second per channel; beyond that each answers 429 with Retry-After,
// as the real ones do. Every request and every 429 is counted per target.
const (
	smsRate, chatRate = "1/s", "1/s"
	servicePace       = time.Second
	// serviceTolerance is how early a request may come after the last one and still be taken
	// (GCRA's tolerance): a sender keeping to the rate still arrives a little unevenly.
	serviceTolerance = 250 * time.Millisecond
	smsAccount       = "ACbench"
)

// gcra is a service's limit on one target, the generic cell rate algorithm: a request is
// taken when it comes no earlier than tolerance before its theoretical arrival time (tat),
// which each request taken moves on by every. Over any span, at most one request every
// `every` is taken, and one more.
type gcra struct {
	every, tolerance time.Duration
	tat              time.Time
}

// take says whether a request at now is taken, and if not, how long until one would be.
func (g *gcra) take(now time.Time) (ok bool, wait time.Duration) {
	if earliest := g.tat.Add(-g.tolerance); now.Before(earliest) {
		return false, earliest.Sub(now)
	}
	g.tat = later(g.tat, now).Add(g.every)
	return true, 0
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// retryAfter is wait as a Retry-After header says it: whole seconds, at least one.
func retryAfter(wait time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(wait.Seconds()))))
}

// peopleTarget is one target of the storm for people: an owner's address or number, or the
// chat channel; what it received, and how its requests were answered.
type peopleTarget struct {
	kind, name string // EMAIL, SMS or CHAT_B; the address, number or channel
	owner      owner  // the owner of an address or number
	messages   []peopleMessage
	requests   int // requests made to the service (for email: messages)
	limited    int // of them, answered 429
	pace       *gcra

	named       map[string]int // alerts by how many of the messages account for them (peopleAccount.read)
	lostDigests int            // links in the messages to a digest whose record is not in the store
}

// peopleMessage is one message a target received.
type peopleMessage struct {
	at      time.Time
	body    string
	alerts  map[string]bool // the alerts it accounts for (peopleAccount.read)
	digests []string        // the digests it links to
}

// peopleServices are the three services and what each target received.
type peopleServices struct {
	smtp            *channelstest.SMTPServer
	smsURL, chatURL string
	stops           []func()

	mu       sync.Mutex
	received map[string]*peopleTarget // by kind and name
}

// startPeopleServices starts the SMTP server, the SMS gateway and the chat service.
func startPeopleServices() (*peopleServices, error) {
	s := &peopleServices{received: map[string]*peopleTarget{}}
	tb := &serverTB{}
	if err := tb.run(func() { s.smtp = channelstest.NewSMTPServer(tb) }); err != nil {
		return nil, fmt.Errorf("SMTP server: %w", err)
	}
	s.stops = append(s.stops, tb.cleanup)
	// Every message is kept (the hook refuses none): it is noted here as it arrives.
	s.smtp.RefuseWith(func(m channelstest.Mail) error {
		at := time.Now()
		for _, to := range m.To {
			s.note("EMAIL", strings.Trim(to, "<>"), at, string(m.Data), false)
		}
		return nil
	})
	base, stop, err := serveLoopback(http.HandlerFunc(s.sms))
	if err != nil {
		s.stop()
		return nil, err
	}
	s.smsURL, s.stops = base, append(s.stops, stop)
	base, stop, err = serveLoopback(http.HandlerFunc(s.chat))
	if err != nil {
		s.stop()
		return nil, err
	}
	s.chatURL, s.stops = base, append(s.stops, stop)
	return s, nil
}

func (s *peopleServices) stop() {
	for _, stop := range s.stops {
		stop()
	}
}

// note records a request to kind's target name at at, and says how long it must wait (0:
// taken). A limited target takes one request every servicePace (gcra).
func (s *peopleServices) note(kind, name string, at time.Time, body string, limited bool) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.received[kind+" "+name]
	if t == nil {
		t = &peopleTarget{kind: kind, name: name}
		if limited {
			t.pace = &gcra{every: servicePace, tolerance: serviceTolerance}
		}
		s.received[kind+" "+name] = t
	}
	t.requests++
	if t.pace != nil {
		if ok, wait := t.pace.take(at); !ok {
			t.limited++
			return wait
		}
	}
	t.messages = append(t.messages, peopleMessage{at: at, body: body})
	return 0
}

// sms is the gateway's Messages resource: POST /2010-04-01/Accounts/{sid}/Messages.json with
// To, From and Body in a form; 201 for a message queued.
func (s *peopleServices) sms(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+smsAccount+"/Messages.json" {
		http.Error(w, `{"code":20404,"message":"not found","status":404}`, http.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("To") == "" {
		http.Error(w, `{"code":21604,"message":"A 'To' phone number is required.","status":400}`, http.StatusBadRequest)
		return
	}
	if wait := s.note("SMS", r.PostForm.Get("To"), at, r.PostForm.Get("Body"), true); wait > 0 {
		w.Header().Set("Retry-After", retryAfter(wait))
		http.Error(w, `{"code":20429,"message":"Too Many Requests","status":429}`, http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, `{"sid":"SMbench","status":"queued"}`)
}

// chat is chat.postMessage: POST /api/chat.postMessage with a JSON body naming the channel;
// 200 with {"ok":true} for a message posted, 429 with {"ok":false,"error":"ratelimited"}.
func (s *peopleServices) chat(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	var msg struct {
		Channel string `json:"channel"`
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/api/chat.postMessage":
		w.WriteHeader(http.StatusNotFound)
		return
	case err != nil || json.Unmarshal(body, &msg) != nil || msg.Channel == "":
		_, _ = io.WriteString(w, `{"ok":false,"error":"channel_not_found"}`)
		return
	}
	if wait := s.note("CHAT_B", msg.Channel, at, string(body), true); wait > 0 {
		w.Header().Set("Retry-After", retryAfter(wait))
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		return
	}
	_, _ = io.WriteString(w, `{"ok":true,"channel":"C0BENCH","ts":"1.000001"}`)
}

// targets are the storm's targets (each owner's address, then each owner's number, then the
// channel), with what each received. A message to anyone else is logged.
func (s *peopleServices) targets(owners []owner) []*peopleTarget {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*peopleTarget
	want := map[string]bool{}
	add := func(kind, name string, o owner) {
		want[kind+" "+name] = true
		t := &peopleTarget{kind: kind, name: name, owner: o}
		if got := s.received[kind+" "+name]; got != nil {
			t.requests, t.limited, t.messages = got.requests, got.limited, slices.Clone(got.messages)
		}
		out = append(out, t)
	}
	for _, o := range owners {
		add("EMAIL", o.email, o)
	}
	for _, o := range owners {
		add("SMS", o.mobile, o)
	}
	add("CHAT_B", peopleChannel, owner{})
	for k, t := range s.received {
		if !want[k] {
			log.Printf("people: %d messages to %s, which is none of the storm's targets", len(t.messages), k)
		}
	}
	return out
}

// serverTB lets the bench start the SMTP server the tests use (channelstest.NewSMTPServer),
// which asks its testing.TB only to mark a helper, to fail, and to clean up.
type serverTB struct {
	testing.TB // nil: only the methods below are called
	cleanups   []func()
}

// serverTBFailed is what Fatal panics with, for run to recover.
type serverTBFailed struct{ msg string }

func (t *serverTB) Helper()           {}
func (t *serverTB) Cleanup(f func())  { t.cleanups = append(t.cleanups, f) }
func (t *serverTB) Fatal(args ...any) { panic(serverTBFailed{fmt.Sprint(args...)}) }

// run calls start, returning what it failed with.
func (t *serverTB) run(start func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(serverTBFailed)
			if !ok {
				panic(p)
			}
			err = fmt.Errorf("%s", f.msg)
		}
	}()
	start()
	return nil
}

// cleanup runs the cleanups, the last registered first.
func (t *serverTB) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
