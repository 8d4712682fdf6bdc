package dispatch_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/chatb"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// A target answering 429 with Retry-After is tried again no sooner: a short one waits in the
// worker, a long one becomes a retry task scheduled after it.
func TestRetryAfterIsHonoured(t *testing.T) {
	for _, wait := range []time.Duration{time.Second, 3 * time.Second} {
		t.Run(wait.String(), func(t *testing.T) {
			r := newRig(t, 200*time.Millisecond)
			r.recv.respond = func(n int, w http.ResponseWriter) {
				if n == 1 {
					w.Header().Set("Retry-After", strings.TrimSuffix(wait.String(), "s"))
					w.WriteHeader(http.StatusTooManyRequests)
				}
			}
			r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
			r.observe(hostDown("h1", true))
			got := r.recv.waitCount(t, 2, wait+10*time.Second)
			if gap := got[1].At.Sub(got[0].At); gap < wait {
				t.Errorf("tried again after %s, before the Retry-After of %s", gap, wait)
			}
			if got[0].Idempotency != got[1].Idempotency {
				t.Errorf("a retry is the same delivery: %q then %q", got[0].Idempotency, got[1].Idempotency)
			}
		})
	}
}

// A target that never recovers: the delivery ends archived (the dead letter asynqmon shows),
// its attempts say so through the API, and replaying it from the archive delivers it once the
// target is back.
func TestDeadLetterReplays(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) { c.DeliveryRetries = 1 })
	healthy := r.recv.failing(503)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")

	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	queue := dispatch.DeliveryQueue("WEBHOOK")
	archived := r.waitArchived(queue, 1, 30*time.Second)
	tries := len(r.recv.deliveries())
	attempts := r.do("GET", "/groups/"+r.project+"/alerts/"+a["id"].(string)+"/deliveries", nil, 200)
	res := attempts["results"].([]any)
	if len(res) != tries || attempts["totalCount"].(float64) != float64(tries) {
		t.Errorf("%d attempts recorded, the receiver got %d", len(res), tries)
	}
	if newest := res[0].(map[string]any); newest["outcome"] != store.OutcomeDeadLetter || newest["statusCode"] != 503.0 || newest["typeName"] != "WEBHOOK" {
		t.Errorf("the last attempt is not recorded as the dead letter: %v", newest)
	}

	healthy.Store(true)
	if err := ins.RunTask(queue, archived[0].ID); err != nil {
		t.Fatal(err)
	}
	r.recv.waitCount(t, tries+1, 10*time.Second)
	if !eventually(5*time.Second, func() bool {
		return r.do("GET", "/groups/"+r.project+"/alerts/"+a["id"].(string), nil, 200)["lastNotified"] != nil
	}) {
		t.Error("the replayed delivery did not set lastNotified")
	}
}

// A chat service that refuses the token (HTTP 401, or its own 200 invalid_auth) gets one
// request, not a retry storm; the token is removed from the configuration, an event says so,
// and the project's owner is emailed.
func TestRefusedTokenIsRemoved(t *testing.T) {
	for name, refuse := range map[string]http.HandlerFunc{
		"401": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
		"invalid_auth": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
		},
	} {
		t.Run(name, func(t *testing.T) { testRefusedToken(t, refuse, 0) })
	}
}

// The owners' email about a removed token is not lost to a mail server that defers it: it is
// tried again until the server takes it (here after two 451s).
func TestRefusedTokenOwnersToldDespiteMailOutage(t *testing.T) {
	testRefusedToken(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, 2)
}

// testRefusedToken has the chat service answer with refuse, and the mail server defer the
// first mailRefusals messages.
func testRefusedToken(t *testing.T, refuse http.HandlerFunc, mailRefusals int) {
	chat := channelstest.NewReceiver(t, refuse)
	mail := channelstest.NewSMTPServer(t)
	var deferred atomic.Int32
	mail.RefuseWith(func(channelstest.Mail) error {
		if int(deferred.Add(1)) <= mailRefusals {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
		}
		return nil
	})
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) {
		c.Notifiers["CHAT_B"] = chatb.Notifier{Client: channels.NewHTTPClient(true, 5*time.Second), BaseURL: chat.URL}
		c.Mailer = email.Notifier{Config: email.Config{Addr: mail.Addr, From: "herald@example.com"}}
	})
	r.do("POST", "/users", map[string]any{"username": "owner@example.com", "password": "s3cret-pass", "emailAddress": "owner@example.com",
		"firstName": "Olga", "lastName": "Owner", "roles": []any{map[string]any{"groupId": r.project, "roleName": "GROUP_OWNER"}}}, 201)
	const token = "xoxb-0000-refused-token-1234"
	cfg := r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "CHAT_B", "apiToken": token, "channelName": "#ops", "delayMin": 0, "intervalMin": 5}}})
	r.observe(hostDown("h1", true))

	var evs []herald.Event
	if !eventually(10*time.Second, func() bool {
		evs, _, _ = r.Store.Events(context.Background(), store.EventScope{GroupID: r.project},
			store.EventFilter{EventType: herald.EventCredentialRejected}, store.Page{Limit: 10})
		return len(evs) == 1
	}) {
		t.Fatalf("no %s event", herald.EventCredentialRejected)
	}
	if evs[0].AlertConfigID != cfg || evs[0].Raw["field"] != "apiToken" || evs[0].Raw["removedFrom"] != "notification" {
		t.Errorf("event %+v", evs[0])
	}
	read := r.do("GET", "/groups/"+r.project+"/alertConfigs/"+cfg, nil, 200)
	if n := read["notifications"].([]any)[0].(map[string]any); n["apiToken"] != nil {
		t.Errorf("the refused token is still configured: %v", n)
	}
	if !eventually(5*time.Second+time.Duration(mailRefusals)*4*time.Second, func() bool { return len(mail.Mails()) == 1 }) {
		t.Fatalf("the owner got %d mails (%d deferred): %s", len(mail.Mails()), deferred.Load(), r.failedTasks())
	}
	if n := int(deferred.Load()); n != mailRefusals+1 {
		t.Errorf("the mail server was asked %d times, want %d (%d deferred, then taken)", n, mailRefusals+1, mailRefusals)
	}
	m := mail.Mails()[0]
	if len(m.To) != 1 || m.To[0] != "owner@example.com" || !strings.Contains(string(m.Data), "CHAT_B") || strings.Contains(string(m.Data), token) {
		t.Errorf("mail to %v: %s", m.To, m.Data)
	}
	time.Sleep(2 * 5 * 200 * time.Millisecond) // two repeat intervals: a storm would show
	if n := len(chat.Requests()); n != 1 {
		t.Errorf("the chat service got %d requests for a refused token, want 1", n)
	}
	// The refused notice waits as a dead letter, to be replayed once a new token is set; so do
	// the repeats that found no token to send with (each one a dead letter, none a request).
	var dead []any
	refused := func() (n int) {
		for _, d := range dead {
			if strings.HasSuffix(d.(map[string]any)["id"].(string), "-0-1") {
				n++
			}
		}
		return n
	}
	if !eventually(5*time.Second, func() bool {
		dead = r.do("GET", "/groups/"+r.project+"/deadLetters", nil, 200)["results"].([]any)
		return refused() == 1
	}) {
		t.Errorf("%d dead letters for the refused notice, want 1 (of %d): %s", refused(), len(dead), r.failedTasks())
	}
}

// A GROUP notification reaches the project's owners by email.
func TestGroupNotificationEmailsOwners(t *testing.T) {
	r, mail := newMailRig(t, nil)
	for _, u := range []struct{ name, role string }{{"owner@example.com", "GROUP_OWNER"}, {"reader@example.com", "GROUP_READ_ONLY"}} {
		r.do("POST", "/users", map[string]any{"username": u.name, "password": "s3cret-pass", "emailAddress": u.name,
			"firstName": "A", "lastName": "B", "roles": []any{map[string]any{"groupId": r.project, "roleName": u.role}}}, 201)
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "role": "GROUP_OWNER", "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.observe(hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { return len(mail.Mails()) >= 1 }) {
		t.Fatal("no mail")
	}
	time.Sleep(300 * time.Millisecond) // a second recipient would show up by now
	ms := mail.Mails()
	if len(ms) != 1 || ms[0].To[0] != "owner@example.com" {
		t.Fatalf("mails %v, want one to the owner only", ms)
	}
	if body := string(ms[0].Data); !strings.Contains(body, "Subject: [Herald] Open: Host down") {
		t.Errorf("mail %s", body)
	}
}

// An ADMIN notification of a global configuration, with no administrators' addresses
// configured, reaches the users holding GLOBAL_OWNER by email, and no one else.
func TestAdminNotificationEmailsGlobalOwners(t *testing.T) {
	r, mail := newMailRig(t, nil)
	for _, u := range []struct {
		name string
		role map[string]any
	}{
		{"root@example.com", map[string]any{"roleName": "GLOBAL_OWNER"}},
		{"monitor@example.com", map[string]any{"roleName": "GLOBAL_MONITORING_ADMIN"}},
		{"owner@example.com", map[string]any{"groupId": r.project, "roleName": "GROUP_OWNER"}},
	} {
		r.do("POST", "/users", map[string]any{"username": u.name, "password": "s3cret-pass", "emailAddress": u.name,
			"firstName": "A", "lastName": "B", "roles": []any{u.role}}, 201)
	}
	cfg := r.do("POST", "/globalAlertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "groupIds": []string{r.project},
		"notifications": []any{map[string]any{"typeName": "ADMIN", "delayMin": 0, "intervalMin": 60}}}, 201)
	if n := cfg["notifications"].([]any)[0].(map[string]any); n["emailEnabled"] != true || n["smsEnabled"] != false {
		t.Errorf("an ADMIN notification reads %v: by email, not SMS", n)
	}
	r.observe(hostDown("h1", true))
	if !eventually(10*time.Second, func() bool { return len(mail.Mails()) >= 1 }) {
		t.Fatalf("no mail: %s", r.failedTasks())
	}
	time.Sleep(300 * time.Millisecond) // a second recipient would show up by now
	if ms := mail.Mails(); len(ms) != 1 || len(ms[0].To) != 1 || ms[0].To[0] != "root@example.com" {
		t.Fatalf("mails %v, want one to the global owner", ms)
	}
}
