package channels_test

import (
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/chata"
	"github.com/heraldhq/herald/channels/chatb"
	"github.com/heraldhq/herald/channels/chatc"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/sms"
)

const digestLink = "https://herald.example.com/act/AQJrMQJfDGseKjtMXW5_gJFqGyw9Tl9gcYKTpLUFg7H12AYMKzE1NTUwMTAwMjAwfKHlC2X6UtkWVK1Lh7ksQg"

// stormDigest tells of 38 hosts down and 3 replica sets without a primary opened in project
// prod, and one host down resolved.
func stormDigest(t *testing.T) *channels.Digest {
	t.Helper()
	g := &channels.Digest{Link: digestLink}
	for i := range 41 {
		a := channelstest.HostAlert()
		a.HostnameAndPort = "db" + strconv.Itoa(i) + ".example.com:27017"
		if i >= 38 {
			a.EventTypeName, a.HostnameAndPort, a.ReplicaSetName = "NO_PRIMARY", "", "rs"+strconv.Itoa(i)
		}
		g.Opened = append(g.Opened, a)
	}
	g.Closed = []herald.Alert{channelstest.Closed(channelstest.HostAlert(), "2026-11-21T18:59:00Z")}
	return g
}

// A digest's words: counted by event type in words, the alerts named up to a bound and the
// rest counted, the link to its page; never one alert's summary.
func TestDigestWords(t *testing.T) {
	d := channels.Delivery{ID: "6a1b2c3d4e5f60718293a4b5", Event: channels.EventOpen, Alert: channelstest.HostAlert(), Project: "prod", Digest: stormDigest(t)}
	n, ok := channels.NoticeOf(d, time.Now())
	if !ok {
		t.Fatal("no notice")
	}
	if want := "41 alerts opened and 1 resolved in project prod: Host down ×39, No primary ×3"; n.Subject() != want {
		t.Errorf("subject %q, want %q (the resolution counted with its kind)", n.Subject(), want)
	}
	details := n.Details(d.Alert)
	if lines := strings.Split(details, "\n"); len(lines) != channels.DigestListed+1 || lines[0] != "Opened: Host down: db0.example.com:27017 (replica set rs0)" ||
		lines[len(lines)-1] != "and 22 more" {
		t.Errorf("details:\n%s\nwant %d alerts named, then the rest counted", details, channels.DigestListed)
	}
	if strings.Contains(n.Text(d.Alert), "Alert ID") || !strings.Contains(n.Text(d.Alert), digestLink) {
		t.Errorf("text:\n%s\nwant the digest's link and no one alert's summary", n.Text(d.Alert))
	}
	closed := channels.Digest{Closed: stormDigest(t).Opened[:12]}
	if h := closed.Headline("prod"); h != "12 alerts resolved in project prod" {
		t.Errorf("resolutions: %q", h)
	}
	if items := (channels.Digest{Opened: stormDigest(t).Opened[:2]}).Items(5); len(items) != 2 {
		t.Errorf("two alerts, five allowed: %q", items)
	}
}

// Each kind people read sends a digest in its own form: its counts, the link to its page, no
// alert's own summary; a text message in one segment.
func TestDigestEachPeopleKind(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return channelstest.At("2026-11-21T19:00:00Z").Time }
	base := channels.Delivery{ID: "6a1b2c3d4e5f60718293a4b5", Event: channels.EventOpen, Alert: channelstest.HostAlert(), Project: "prod", Digest: stormDigest(t)}
	with := func(typeName string, fields ...string) channels.Delivery {
		d := base
		d.Notification = herald.Notification{TypeName: typeName, Fields: map[string]string{}}
		for i := 0; i < len(fields); i += 2 {
			d.Notification.Fields[fields[i]] = fields[i+1]
		}
		return d
	}
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/Messages.json"):
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"sid":"SM1"}`))
		case strings.HasSuffix(r.URL.Path, "/chat.postMessage"):
			_, _ = w.Write([]byte(`{"ok":true}`))
		default:
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("1"))
		}
	})
	client := conformance.Client()
	senders := []struct {
		name string
		n    channels.Notifier
		d    channels.Delivery
	}{
		{"CHAT_A", chata.Notifier{Client: client, BaseURL: rc.URL, Now: now}, with("CHAT_A", "notificationToken", "tok", "roomName", "ops")},
		{"CHAT_B", chatb.Notifier{Client: client, BaseURL: rc.URL, Now: now}, with("CHAT_B", "apiToken", "xoxb-1", "channelName", "#ops")},
		{"CHAT_C", chatc.Notifier{Client: client, Now: now}, with("CHAT_C", "chatCWebhookUrl", rc.URL+"/webhook")},
		{"SMS", sms.Notifier{Client: client, BaseURL: rc.URL, AccountSID: "AC1", AuthToken: "t", From: "+15557654321", Now: now}, with("SMS", "mobileNumber", "+15550100200")},
	}
	for i, s := range senders {
		if err := s.n.Notify(ctx, s.d); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		body := string(rc.Requests()[i].Body)
		if s.name == "SMS" {
			form, _ := url.ParseQuery(body)
			text := form.Get("Body")
			if sms.Segments(text) != 1 || !strings.Contains(text, "41 alerts opened") || !strings.HasSuffix(text, " "+digestLink) {
				t.Errorf("SMS %q: want the counts and the link, in one segment", text)
			}
			continue
		}
		for _, want := range []string{"41 alerts opened and 1 resolved in project prod", "Host down ×39", "and 22 more", digestLink} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: %s\nwant %q in it", s.name, body, want)
			}
		}
		if strings.Contains(body, ", project prod") {
			t.Errorf("%s names the project twice: %s", s.name, body)
		}
		if strings.Contains(body, "Alert ID") {
			t.Errorf("%s: a digest carries one alert's summary: %s", s.name, body)
		}
	}
	srv := channelstest.NewSMTPServer(t)
	if err := (email.Notifier{Config: email.Config{Addr: srv.Addr, From: "herald@example.com"}, Now: now}).Notify(ctx, with("EMAIL", "emailAddress", "ana@example.com")); err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(strings.NewReader(string(srv.Mails()[0].Data)))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	raw, _ := io.ReadAll(quotedprintable.NewReader(m.Body))
	if !strings.HasPrefix(subject, "[Herald] 41 alerts opened and 1 resolved in project prod: Host down ×39") ||
		!strings.Contains(m.Header.Get("Message-Id"), base.ID) || !strings.Contains(string(raw), "and 22 more") || !strings.Contains(string(raw), digestLink) {
		t.Errorf("email: subject %q, Message-ID %q, body:\n%s", subject, m.Header.Get("Message-Id"), raw)
	}
}
