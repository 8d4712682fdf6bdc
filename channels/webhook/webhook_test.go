package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/webhook"
)

const testSecret = "wh-secret-7f3a9c"

// testClient reaches 127.0.0.1, as tests need.
func testClient() *http.Client { return channels.NewHTTPClient(true, 5*time.Second) }

// wantSignature recomputes X-Vendor-Signature as a receiver would.
func wantSignature(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func webhookDelivery(url, secret string) channels.Delivery {
	return channels.Delivery{
		ID:           "dlv-0001",
		Event:        channels.EventOpen,
		Alert:        channelstest.MetricAlert(),
		Notification: herald.Notification{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": url, "webhookSecret": secret}},
	}
}

func TestWebhookRequest(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	d := webhookDelivery(rc.URL+"/hooks/herald?team=ops&env=prod", testSecret)
	if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), d); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	r := rc.Only(t)

	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	if r.Path != "/hooks/herald" {
		t.Errorf("path %q, want /hooks/herald", r.Path)
	}
	if got := r.Query["team"]; len(got) != 1 || got[0] != "ops" {
		t.Errorf("query team = %v, want [ops]", got)
	}
	if got := r.Query["env"]; len(got) != 1 || got[0] != "prod" {
		t.Errorf("query env = %v, want [prod]", got)
	}
	for name, want := range map[string]string{
		"Content-Type":    "application/json",
		"User-Agent":      "Herald",
		"X-Vendor-Event":  "alert.open",
		"Idempotency-Key": "dlv-0001",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	sig := r.Header.Get("X-Vendor-Signature")
	if want := wantSignature(testSecret, r.Body); sig != want {
		t.Errorf("signature %q does not verify (want %q)", sig, want)
	}
	if sig == wantSignature("another secret", r.Body) {
		t.Error("signature verifies with the wrong secret")
	}

	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
	}
	a := channelstest.MetricAlert()
	for field, want := range map[string]any{
		"id":              a.ID,
		"groupId":         a.GroupID,
		"alertConfigId":   a.AlertConfigID,
		"status":          "OPEN",
		"eventTypeName":   "OUTSIDE_METRIC_THRESHOLD",
		"created":         "2026-11-21T18:40:55Z",
		"updated":         "2026-11-21T18:45:00Z",
		"hostId":          a.HostID,
		"hostnameAndPort": "db1.example.com:27017",
		"replicaSetName":  "rs0",
		"metricName":      "CONNECTIONS",
		"humanReadable":   channels.Summary(a),
	} {
		if body[field] != want {
			t.Errorf("body %s = %#v, want %#v", field, body[field], want)
		}
	}
	if cv, _ := body["currentValue"].(map[string]any); cv["number"] != 512.0 || cv["units"] != "RAW" {
		t.Errorf("body currentValue = %#v", body["currentValue"])
	}
	for _, absent := range []string{"resolved", "acknowledgedUntil", "lastNotified", "webhookUrl", "webhookSecret"} {
		if _, ok := body[absent]; ok {
			t.Errorf("body has %s", absent)
		}
	}
	if strings.Contains(string(r.Body), testSecret) {
		t.Error("body carries the secret")
	}
	// The alert as the API shows it: what herald.Alert marshals to, plus humanReadable.
	a.HumanReadable = channels.Summary(a)
	if want, _ := json.Marshal(a); string(want) != string(r.Body) {
		t.Errorf("body\n%s\nwant\n%s", r.Body, want)
	}
}

func TestWebhookNoSignatureWithoutSecret(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), webhookDelivery(rc.URL+"/h", "")); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if v, ok := rc.Only(t).Header["X-Vendor-Signature"]; ok {
		t.Errorf("X-Vendor-Signature sent without a secret: %q", v)
	}
}

func TestWebhookEventHeader(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	events := []channels.Event{channels.EventOpen, channels.EventUpdate, channels.EventClose, channels.EventAcknowledge, channels.EventCancel}
	for i, ev := range events {
		d := webhookDelivery(rc.URL, "")
		d.ID, d.Event = "dlv-"+string(ev), ev
		if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), d); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		if got := rc.Requests()[i].Header.Get("X-Vendor-Event"); got != string(ev) {
			t.Errorf("X-Vendor-Event = %q, want %q", got, ev)
		}
	}
}

func TestWebhookIntegrationDefaults(t *testing.T) {
	const intSecret, ownSecret = "integration-secret-1", "notification-secret-2"
	cases := []struct {
		name               string
		ownPath, ownSecret string
		wantPath, wantSign string // wantSign: the secret the request must verify with, "" unsigned
	}{
		{"notification leaves both out", "", "", "/integration", intSecret},
		{"notification's own URL and secret win", "/own", ownSecret, "/own", ownSecret},
		{"own URL without secret is not signed with the integration's", "/own", "", "/own", ""},
		{"own secret with the integration's URL", "", ownSecret, "/integration", ownSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, nil)
			d := webhookDelivery("", c.ownSecret)
			if c.ownPath != "" {
				d.Notification.SetField("webhookUrl", rc.URL+c.ownPath)
			}
			d.Integration = &herald.Integration{Type: "WEBHOOK", Fields: map[string]string{"url": rc.URL + "/integration", "secret": intSecret}}
			if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), d); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			r := rc.Only(t)
			if r.Path != c.wantPath {
				t.Errorf("posted to %s, want %s", r.Path, c.wantPath)
			}
			sig, signed := r.Header["X-Vendor-Signature"]
			switch {
			case c.wantSign == "" && signed:
				t.Errorf("signed (%q), want unsigned", sig)
			case c.wantSign != "" && (!signed || sig[0] != wantSignature(c.wantSign, r.Body)):
				t.Errorf("signature %q does not verify with the expected secret", sig)
			}
		})
	}
}

func TestWebhookIdempotencyKeyStableAcrossRetries(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	d := webhookDelivery(rc.URL, testSecret)
	d.ID = "dlv-retry-42"
	for range 3 {
		if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), d); err != nil {
			t.Fatalf("Notify: %v", err)
		}
	}
	other := d
	other.ID = "dlv-retry-43"
	if err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), other); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	reqs := rc.Requests()
	if len(reqs) != 4 {
		t.Fatalf("got %d requests, want 4", len(reqs))
	}
	for i, r := range reqs[:3] {
		if got := r.Header.Get("Idempotency-Key"); got != "dlv-retry-42" {
			t.Errorf("try %d: Idempotency-Key %q, want dlv-retry-42", i+1, got)
		}
		if string(r.Body) != string(reqs[0].Body) {
			t.Errorf("try %d: body differs from the first try", i+1)
		}
	}
	if got := reqs[3].Header.Get("Idempotency-Key"); got != "dlv-retry-43" {
		t.Errorf("another delivery: Idempotency-Key %q, want dlv-retry-43", got)
	}
}

func TestWebhookMissingOrBadURL(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	cases := []struct {
		name string
		d    channels.Delivery
	}{
		{"no URL, no integration", webhookDelivery("", testSecret)},
		{"no URL, integration without one", func() channels.Delivery {
			d := webhookDelivery("", "")
			d.Integration = &herald.Integration{Type: "WEBHOOK", Fields: map[string]string{"secret": testSecret}}
			return d
		}()},
		{"no URL, integration of another kind", func() channels.Delivery {
			d := webhookDelivery("", "")
			d.Integration = &herald.Integration{Type: "CHAT_C", Fields: map[string]string{"chatCWebhookUrl": rc.URL}}
			return d
		}()},
		{"not http", webhookDelivery("ftp://files.example.com/"+testSecret, "")},
		{"not absolute", webhookDelivery("/hooks/"+testSecret, "")},
		{"no id", func() channels.Delivery { d := webhookDelivery(rc.URL, ""); d.ID = ""; return d }()},
		{"no event", func() channels.Delivery { d := webhookDelivery(rc.URL, ""); d.Event = ""; return d }()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), c.d)
			var f *channels.Failure
			if !errors.As(err, &f) {
				t.Fatalf("got %v, want a *channels.Failure", err)
			}
			if f.Retry || f.Rejected || f.Status != 0 || f.Reason == "" {
				t.Errorf("got %+v, want a permanent failure with a reason", f)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Errorf("error %q carries the secret", err)
			}
		})
	}
	if n := len(rc.Requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
}

func TestWebhookClassification(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	type want struct {
		ok                 bool
		retry, rejected    bool
		minAfter, maxAfter time.Duration
	}
	cases := []struct {
		status     int
		retryAfter string
		want       want
	}{
		{200, "", want{ok: true}},
		{201, "", want{ok: true}},
		{204, "", want{ok: true}},
		{500, "", want{retry: true}},
		{502, "", want{retry: true}},
		{503, "", want{retry: true}},
		{503, "3", want{retry: true, minAfter: 3 * time.Second, maxAfter: 3 * time.Second}},
		{408, "", want{retry: true}},
		{429, "", want{retry: true}},
		{429, "7", want{retry: true, minAfter: 7 * time.Second, maxAfter: 7 * time.Second}},
		{429, date, want{retry: true, minAfter: 25 * time.Second, maxAfter: 31 * time.Second}},
		{429, "soon", want{retry: true}},
		{401, "", want{rejected: true}},
		{403, "", want{rejected: true}},
		{400, "", want{}},
		{404, "", want{}},
		{410, "", want{}},
		{302, "", want{}}, // redirects are not followed
	}
	redirected := channelstest.NewReceiver(t, nil)
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		status, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hooks/tok-"+testSecret+"/"))
		if ra := r.URL.Query().Get("ra"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		if status == 302 {
			w.Header().Set("Location", redirected.URL+"/moved")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":"echoing ` + testSecret + `"}`))
	})
	for _, c := range cases {
		name := http.StatusText(c.status)
		if c.retryAfter != "" {
			name += " Retry-After " + c.retryAfter
		}
		t.Run(name, func(t *testing.T) {
			target := rc.URL + "/hooks/tok-" + testSecret + "/" + strconv.Itoa(c.status)
			if c.retryAfter != "" {
				target += "?ra=" + url.QueryEscape(c.retryAfter)
			}
			err := (webhook.Notifier{Client: testClient()}).Notify(context.Background(), webhookDelivery(target, testSecret))
			if c.want.ok {
				if err != nil {
					t.Fatalf("got %v, want delivered", err)
				}
				return
			}
			var f *channels.Failure
			if !errors.As(err, &f) {
				t.Fatalf("got %v, want a *channels.Failure", err)
			}
			if f.Status != c.status || f.Retry != c.want.retry || f.Rejected != c.want.rejected {
				t.Errorf("got %+v, want status %d retry %v rejected %v", f, c.status, c.want.retry, c.want.rejected)
			}
			if f.RetryAfter < c.want.minAfter || f.RetryAfter > c.want.maxAfter {
				t.Errorf("RetryAfter %s, want in [%s, %s]", f.RetryAfter, c.want.minAfter, c.want.maxAfter)
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), rc.URL) {
				t.Errorf("error %q carries the secret or the URL", err)
			}
		})
	}
	if n := len(redirected.Requests()); n != 0 {
		t.Errorf("redirect was followed: %d requests at its target", n)
	}
}

func TestWebhookConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	err = (webhook.Notifier{Client: testClient()}).Notify(context.Background(), webhookDelivery("http://"+addr+"/hooks/"+testSecret, testSecret))
	var f *channels.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a *channels.Failure", err)
	}
	if !f.Retry || f.Rejected || f.Status != 0 {
		t.Errorf("got %+v, want a retryable failure without a status", f)
	}
	if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), addr) {
		t.Errorf("error %q carries the secret or the address", err)
	}
}

// blockingReceiver never answers until the test ends.
func blockingReceiver(t *testing.T) *channelstest.Receiver {
	done := make(chan struct{})
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(done) }) // runs before the server's Close
	return rc
}

func TestWebhookTimeout(t *testing.T) {
	rc := blockingReceiver(t)
	start := time.Now()
	err := (webhook.Notifier{Client: channels.NewHTTPClient(true, 200*time.Millisecond)}).Notify(context.Background(), webhookDelivery(rc.URL, testSecret))
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s with a 200ms timeout", elapsed)
	}
	var f *channels.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a *channels.Failure", err)
	}
	if !f.Retry || f.Status != 0 {
		t.Errorf("got %+v, want a retryable failure without a status", f)
	}
}

func TestWebhookContextDeadline(t *testing.T) {
	rc := blockingReceiver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := (webhook.Notifier{Client: testClient()}).Notify(ctx, webhookDelivery(rc.URL, testSecret))
	var f *channels.Failure
	if !errors.As(err, &f) || !f.Retry {
		t.Fatalf("got %v, want a retryable *channels.Failure", err)
	}
}

func TestWebhookDefaultClientRefusesPrivate(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	err := webhook.Notifier{}.Notify(context.Background(), webhookDelivery(rc.URL, testSecret))
	var f *channels.Failure
	if !errors.As(err, &f) || f.Retry || f.Reason != channels.ReasonTargetNotAllowed {
		t.Fatalf("got %v, want the address refused", err)
	}
	if n := len(rc.Requests()); n != 0 {
		t.Errorf("receiver got %d requests", n)
	}
}

// BenchmarkNotify is deliveries, many at once, to a receiver on 127.0.0.1 that answers at
// once, over kept-alive connections: the cost a storm pays per notification on the sender's side
// (go test ./channels/webhook -bench Notify -benchmem).
func BenchmarkNotify(b *testing.B) {
	srv := newBenchReceiver(b)
	n := webhook.Notifier{Client: testClient()}
	d := webhookDelivery(srv, testSecret)
	b.ReportAllocs()
	b.SetParallelism(16) // 32 in flight on 2 cores, as a worker's deliverers in a storm
	start := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := n.Notify(context.Background(), d); err != nil {
				b.Error(err)
				return
			}
		}
	})
	// CPU is what a storm pays: the process's (sender and receiver, with the receiver's part
	// small), per delivery; ns/op also counts time waiting.
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// newBenchReceiver answers 200 on 127.0.0.1 until the benchmark ends, reading each request by
// hand (its header lines, then Content-Length bytes) rather than with net/http's server, so
// that what the benchmark counts (allocations, CPU) is the sender's, not the receiver's.
func newBenchReceiver(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answer200(c)
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// answer200 answers each request read from c with an empty 200, until c fails or closes.
func answer200(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		length := 0
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 { // the blank line ending the header
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if _, err := r.Discard(length); err != nil {
			return
		}
		if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
			return
		}
	}
}
