package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/channelstest/conformance"
	"github.com/heraldhq/herald/channels/webhook"
)

const testSecret = "wh-secret-7f3a9c"

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
	r := conformance.SendOne(t, webhook.Notifier{Client: conformance.Client()}, rc, d)

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
	if v, ok := conformance.SendOne(t, webhook.Notifier{Client: conformance.Client()}, rc, webhookDelivery(rc.URL+"/h", "")).Header["X-Vendor-Signature"]; ok {
		t.Errorf("X-Vendor-Signature sent without a secret: %q", v)
	}
}

func TestWebhookEventHeader(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	events := []channels.Event{channels.EventOpen, channels.EventUpdate, channels.EventClose, channels.EventAcknowledge, channels.EventCancel}
	for i, ev := range events {
		d := webhookDelivery(rc.URL, "")
		d.ID, d.Event = "dlv-"+string(ev), ev
		if err := (webhook.Notifier{Client: conformance.Client()}).Notify(context.Background(), d); err != nil {
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
			r := conformance.SendOne(t, webhook.Notifier{Client: conformance.Client()}, rc, d)
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
		if err := (webhook.Notifier{Client: conformance.Client()}).Notify(context.Background(), d); err != nil {
			t.Fatalf("Notify: %v", err)
		}
	}
	other := d
	other.ID = "dlv-retry-43"
	if err := (webhook.Notifier{Client: conformance.Client()}).Notify(context.Background(), other); err != nil {
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

// BenchmarkNotify is deliveries, many at once, to a receiver on 127.0.0.1 that answers at
// once, over kept-alive connections: the cost a storm pays per notification on the sender's side
// (go test ./channels/webhook -bench Notify -benchmem).
func BenchmarkNotify(b *testing.B) {
	srv := newBenchReceiver(b)
	n := webhook.Notifier{Client: conformance.Client()}
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

// The webhook's URL is the notification's (else its integration's, of its kind only), and
// one that is not an absolute http(s) URL is not sent to.
func TestConformance(t *testing.T) {
	badURL := func(name, url string) conformance.Change {
		return conformance.Change{Name: name, Change: func(d *channels.Delivery) { d.Notification.SetField("webhookUrl", url) }}
	}
	otherKinds := conformance.Change{Name: "a URL only another kind's integration has", Change: func(d *channels.Delivery) {
		d.Integration = &herald.Integration{Type: "CHAT_C", Fields: map[string]string{"url": d.Notification.Field("webhookUrl")}}
		d.Notification.SetField("webhookUrl", "")
	}}
	noID := conformance.Change{Name: "no id", Change: func(d *channels.Delivery) { d.ID = "" }}
	conformance.Run(t, conformance.Case{Kind: webhook.Kind,
		Fields: func(url string) map[string]string {
			return map[string]string{"webhookUrl": url + "/hooks/T0-secret-path", "webhookSecret": testSecret}
		},
		Unsendable: []conformance.Change{badURL("URL not http", "ftp://files.example.com/hooks/T0-secret-path"),
			badURL("URL not absolute", "/hooks/T0-secret-path"), otherKinds, noID, conformance.NoEvent}})
}

// A delivery with links adds a `links` object holding the offered ones alone, as the body's
// last member; the rest of the body is byte for byte what it is without links.
func TestWebhookBodyCarriesItsLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links herald.ActionLinks
		want  map[string]any
	}{
		{"open", herald.ActionLinks{View: "https://herald.example.com/act/v1.view?a=1&b=<2>", Acknowledge1h: "https://herald.example.com/act/v1.ack1h",
			Acknowledge4h: "https://herald.example.com/act/v1.ack4h"}, map[string]any{"view": "https://herald.example.com/act/v1.view?a=1&b=<2>",
			"acknowledge1h": "https://herald.example.com/act/v1.ack1h", "acknowledge4h": "https://herald.example.com/act/v1.ack4h"}},
		{"acknowledged", herald.ActionLinks{View: "https://h/v", Unacknowledge: "https://h/u"}, map[string]any{"view": "https://h/v", "unacknowledge": "https://h/u"}},
		{"resolved", herald.ActionLinks{View: "https://h/v"}, map[string]any{"view": "https://h/v"}},
		{"no action keys", herald.ActionLinks{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := channelstest.NewReceiver(t, nil)
			d := webhookDelivery(rc.URL+"/hook", testSecret)
			d.Links = tc.links
			r := conformance.SendOne(t, webhook.Notifier{Client: conformance.Client()}, rc, d)
			if sig := r.Header.Get("X-Vendor-Signature"); sig != wantSignature(testSecret, r.Body) {
				t.Errorf("signature %q does not verify", sig)
			}
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
			}
			got, has := body["links"]
			if tc.want == nil {
				if has {
					t.Errorf("body has links %v, want none", got)
				}
				return
			}
			if !reflect.DeepEqual(got, any(tc.want)) {
				t.Errorf("links %v, want %v", got, tc.want)
			}
			a := d.Alert
			a.HumanReadable = channels.Summary(a)
			without, _ := json.Marshal(a)
			if !bytes.HasPrefix(r.Body, without[:len(without)-1]) || !bytes.HasPrefix(r.Body[len(without)-1:], []byte(`,"links":{`)) {
				t.Errorf("body\n%s\ndoes not start as the body without links\n%s", r.Body, without)
			}
		})
	}
}
