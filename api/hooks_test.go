package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/hooktest"
	"github.com/heraldhq/herald/store"
)

const (
	hookSigningSecret = "chat-b-signing-secret-for-tests"
	hookSMSToken      = "sms-auth-token-for-tests"
	hookExternal      = "https://herald.example.com"
)

func hookKeys(t *testing.T, id string) actlink.Keys {
	t.Helper()
	k, err := actlink.ParseKeys(id + ":" + strings.Repeat(id, 40))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// chatReceiver is the chat service's response_url on 127.0.0.1: what was posted to it.
type chatReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newChatReceiver(t *testing.T) *chatReceiver {
	rc := &chatReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, b)
		rc.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *chatReceiver) posted() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.bodies)
}

// hooksEnv is an API taking both services' callbacks, the chat service's response_url at rc.
func hooksEnv(t *testing.T, rc *chatReceiver, limits store.AuthLimits) *env {
	return newEnvWith(t, api.Config{ActionKeys: hookKeys(t, "k1"), ChatBSigningSecret: hookSigningSecret, ChatBURL: rc.URL,
		SMSToken: hookSMSToken, ExternalURL: hookExternal, HookClient: rc.Client(), AuthLimits: limits})
}

// openHostDown stores an open HOST_DOWN alert of a new project and returns both.
func openHostDown(t *testing.T, e *env) (herald.Alert, string) {
	t.Helper()
	pid := e.project(e.org("Acme"), "prod")
	return saveTestAlert(t, e, false, hostDownAlert(pid, herald.StatusOpen, time.Now().Add(-time.Hour))), pid
}

// clickPayload is the form body of a click on button action of a CHAT_B message.
func clickPayload(t *testing.T, token, responseURL string) []byte {
	t.Helper()
	p := map[string]any{"type": "block_actions", "user": map[string]string{"id": "U1", "username": "ana", "name": "ana"},
		"response_url": responseURL,
		"message": map[string]any{"blocks": []any{
			map[string]any{"type": "header", "text": map[string]string{"type": "plain_text", "text": "Alert opened: HOST_DOWN"}},
			map[string]any{"type": "actions", "block_id": "herald_actions", "elements": []any{
				map[string]any{"type": "button", "action_id": "acknowledge1h", "value": token},
				map[string]any{"type": "button", "action_id": "view", "url": hookExternal + "/act/v"},
			}},
		}},
		"actions": []any{map[string]string{"action_id": "acknowledge1h", "block_id": "herald_actions", "value": token}}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(url.Values{"payload": {string(b)}}.Encode())
}

func postHook(t *testing.T, e *env, path string, body []byte, header http.Header) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readResponse(t, resp)
}

func postClick(t *testing.T, e *env, body []byte, secret string, at time.Time) *response {
	t.Helper()
	return postHook(t, e, "/hooks/chat-b/actions", body, hooktest.ChatHeader(secret, at, body))
}

func signClaims(t *testing.T, keys actlink.Keys, a herald.Alert, act actlink.Action) string {
	t.Helper()
	tok, err := keys.Sign(actlink.Claims{Group: a.GroupID, Alert: a.ID, Action: act, Recipient: "#ops", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wantUnacknowledged checks that the alert, read through the API, is not acknowledged.
func wantUnacknowledged(t *testing.T, e *env, a herald.Alert) {
	t.Helper()
	r := e.Owner.do("GET", "/groups/"+a.GroupID+"/alerts/"+a.ID, nil).wantStatus(200)
	if r.Body["acknowledgedUntil"] != nil || r.Body["acknowledgingUsername"] != nil {
		t.Errorf("the alert changed: %s", r.Raw)
	}
}

// A click on a message's button, signed as the chat service signs it, acknowledges the alert
// as the clicking user, through the API's own path (read back through the API, with its
// audit event saying it came from a chat button), and the message is replaced through its
// response_url: who acknowledged until when, and a button to withdraw, signed anew. The same
// request again is a replay: refused, nothing more done.
func TestChatBClickAcknowledges(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{})
	a, pid := openHostDown(t, e)
	body := clickPayload(t, signClaims(t, hookKeys(t, "k1"), a, actlink.Acknowledge1h), rc.URL+"/actions/T1/1/abc")
	at := time.Now()
	header := hooktest.ChatHeader(hookSigningSecret, at, body)
	postHook(t, e, "/hooks/chat-b/actions", body, header).wantStatus(200)

	r := e.Owner.do("GET", "/groups/"+pid+"/alerts/"+a.ID, nil).wantStatus(200)
	until, err := time.Parse(time.RFC3339, r.str("acknowledgedUntil"))
	if r.str("acknowledgingUsername") != "ana" || r.str("acknowledgementComment") != "Acknowledged from a chat button." ||
		err != nil || until.Sub(at) < 59*time.Minute || until.Sub(at) > 61*time.Minute {
		t.Fatalf("alert after the click: %s", r.Raw)
	}
	evs := auditEvents(t, e, store.EventScope{GroupID: pid}, herald.EventAlertAcknowledged)
	if len(evs) != 1 || evs[0].Raw["source"] != "CHAT_BUTTON" || evs[0].Username != "ana" || evs[0].Raw["by"] != "ana" || evs[0].Raw["recipient"] != "#ops" {
		t.Fatalf("audit events %+v", evs)
	}

	var update hooktest.ChatMessage
	for deadline := time.Now().Add(5 * time.Second); len(rc.posted()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the message was not updated")
		}
	}
	if err := json.Unmarshal(rc.posted()[0], &update); err != nil {
		t.Fatal(err)
	}
	if !update.ReplaceOriginal || !strings.HasPrefix(update.Text, "Acknowledged by ana until ") {
		t.Errorf("update %s", rc.posted()[0])
	}
	last := update.Blocks[len(update.Blocks)-1]
	if update.Blocks[0].Type != "header" || last.Type != "actions" || len(last.Elements) != 2 ||
		last.Elements[0].ActionID != "unacknowledge" || last.Elements[1].URL != hookExternal+"/act/v" {
		t.Fatalf("update's blocks %s", rc.posted()[0])
	}
	if c, err := hookKeys(t, "k1").Verify(last.Elements[0].Value, time.Now()); err != nil || c.Action != actlink.Unacknowledge || c.Alert != a.ID || c.Recipient != "#ops" {
		t.Errorf("withdraw button's token: %+v %v", c, err)
	}

	postHook(t, e, "/hooks/chat-b/actions", body, header).wantError(http.StatusForbidden, "REPLAYED_REQUEST")
	if n := len(auditEvents(t, e, store.EventScope{GroupID: pid}, herald.EventAlertAcknowledged)); n != 1 {
		t.Errorf("%d acknowledgements after the replay, want 1", n)
	}
}

// A click to withdraw an acknowledgement nobody made changes nothing and records nothing; the
// message says so.
func TestChatBWithdrawOfNothing(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{})
	a, pid := openHostDown(t, e)
	postClick(t, e, clickPayload(t, signClaims(t, hookKeys(t, "k1"), a, actlink.Unacknowledge), rc.URL+"/u"), hookSigningSecret, time.Now()).wantStatus(200)
	for deadline := time.Now().Add(5 * time.Second); len(rc.posted()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the message was not updated")
		}
	}
	var update hooktest.ChatMessage
	if err := json.Unmarshal(rc.posted()[0], &update); err != nil || update.Text != "This alert is not acknowledged: nothing was changed." {
		t.Errorf("update %s (%v)", rc.posted()[0], err)
	}
	wantUnacknowledged(t, e, a)
	if evs := auditEvents(t, e, store.EventScope{GroupID: pid}, herald.EventAlertUnacknowledged); len(evs) != 0 {
		t.Errorf("events %+v", evs)
	}
}

// Clicks that are not the service's, or name what they may not: each is refused with its
// status and error code, changes nothing, and posts nothing to any response_url.
func TestChatBClickRefused(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{})
	a, _ := openHostDown(t, e)
	good := signClaims(t, hookKeys(t, "k1"), a, actlink.Acknowledge1h)
	tampered := []byte(good)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == '-'^1 || tampered[len(tampered)/2] == '_'^1 {
		tampered[len(tampered)/2] = 'A'
	}
	inside := rc.URL + "/actions/T1/1/abc"
	now := time.Now()
	for _, c := range []struct {
		name   string
		body   []byte
		secret string
		at     time.Time
		status int
		code   string
	}{
		{"a bad signature", clickPayload(t, good, inside), "another secret", now, 401, "INVALID_SIGNATURE"},
		{"a timestamp 6 minutes old", clickPayload(t, good, inside), hookSigningSecret, now.Add(-6 * time.Minute), 401, "STALE_REQUEST"},
		{"a timestamp 6 minutes ahead", clickPayload(t, good, inside), hookSigningSecret, now.Add(6 * time.Minute), 401, "STALE_REQUEST"},
		{"a tampered token", clickPayload(t, string(tampered), inside), hookSigningSecret, now, 403, "INVALID_ACTION_TOKEN"},
		{"a token of another key", clickPayload(t, signClaims(t, hookKeys(t, "k2"), a, actlink.Acknowledge1h), inside), hookSigningSecret, now, 403, "INVALID_ACTION_TOKEN"},
		{"a response_url elsewhere", clickPayload(t, good, "https://evil.example/actions"), hookSigningSecret, now, 400, "INVALID_CALLBACK"},
		{"a response_url on the metadata address", clickPayload(t, good, "http://169.254.169.254/latest"), hookSigningSecret, now, 400, "INVALID_CALLBACK"},
		{"no payload", []byte("payload=%7Bnot+json"), hookSigningSecret, now, 400, "INVALID_CALLBACK"},
	} {
		t.Run(c.name, func(t *testing.T) {
			postClick(t, e, c.body, c.secret, c.at).wantError(c.status, c.code)
			wantUnacknowledged(t, e, a)
		})
	}
	if got := rc.posted(); len(got) != 0 {
		t.Errorf("%d posts to the response_url", len(got))
	}
	if logs := e.Logs(); strings.Contains(logs, good) || strings.Contains(logs, hookSigningSecret) {
		t.Error("the log holds a token or the signing secret")
	}
}

// Refused callbacks count in the authentication throttle: once an address failed its share,
// even a good click from it is refused with 429 until the window passes.
func TestHookRefusalsAreThrottled(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{Window: time.Minute, PerPair: 3, PerAddress: 3, PerName: 100})
	a, _ := openHostDown(t, e)
	body := clickPayload(t, signClaims(t, hookKeys(t, "k1"), a, actlink.Acknowledge1h), rc.URL+"/x")
	for range 3 {
		postClick(t, e, body, "wrong", time.Now()).wantError(401, "INVALID_SIGNATURE")
	}
	postClick(t, e, body, hookSigningSecret, time.Now()).wantError(429, herald.CodeRateLimited)
	if got, err := e.Store.Alert(context.Background(), a.GroupID, a.ID); err != nil || !got.AcknowledgedUntil.IsZero() {
		t.Errorf("alert %+v %v, want unchanged", got, err) // the API too refuses this address now
	}
	sms := smsForm("+15550100200", "1", "SM-throttled")
	postSMS(t, e, sms, hookSMSToken).wantError(429, herald.CodeRateLimited)
}

// SMS replies that name nothing to act on (a number texted nothing, an unknown code) are
// answered, and counted in the throttle like refusals: a guesser of numbers is stopped.
func TestSMSGuessesAreThrottled(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{Window: time.Minute, PerPair: 3, PerAddress: 100, PerName: 100})
	for i := range 3 {
		wantTwiML(t, postSMS(t, e, smsForm("+1555010030"+strconv.Itoa(i), "1", "SM-guess-"+strconv.Itoa(i)), hookSMSToken), "texted no alert")
	}
	postSMS(t, e, smsForm("+15550100309", "1", "SM-guess-9"), hookSMSToken).wantError(429, herald.CodeRateLimited)
}

// Without their secrets the callbacks are not served: 404 saying which setting is missing.
func TestHooksNeedTheirSecrets(t *testing.T) {
	e := newEnvWith(t, api.Config{})
	postClick(t, e, []byte("payload=%7B%7D"), hookSigningSecret, time.Now()).wantError(404, "HOOK_NOT_CONFIGURED")
	postHook(t, e, "/hooks/sms/inbound", []byte("From=%2B1"), http.Header{}).wantError(404, "HOOK_NOT_CONFIGURED")
	if r := e.Owner.do("GET", "/../../hooks/chat-b/actions", nil); r.Status == 200 {
		t.Errorf("GET of a hook answered 200")
	}
	if !strings.Contains(e.Logs(), "HERALD_CHAT_B_SIGNING_SECRET is not set") || !strings.Contains(e.Logs(), "HERALD_SMS_TOKEN is not set") {
		t.Errorf("the start log does not say why the callbacks are refused:\n%s", e.Logs())
	}
}

func smsForm(from, body, sid string) url.Values {
	return url.Values{"From": {from}, "To": {"+15557654321"}, "Body": {body}, "MessageSid": {sid}, "AccountSid": {"AC1"}}
}

func postSMS(t *testing.T, e *env, form url.Values, token string) *response {
	t.Helper()
	return postHook(t, e, "/hooks/sms/inbound", []byte(form.Encode()), hooktest.SMSHeader(token, hookExternal+"/hooks/sms/inbound", form))
}

// wantTwiML checks a TwiML answer whose message contains want.
func wantTwiML(t *testing.T, r *response, want string) {
	t.Helper()
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/xml") ||
		!strings.Contains(string(r.Raw), "<Response><Message>") || !strings.Contains(string(r.Raw), want) {
		t.Fatalf("answer %d %s %s, want TwiML saying %q", r.Status, r.Header.Get("Content-Type"), r.Raw, want)
	}
}

// A reply of 1 to the last notice texted to a number, signed as the gateway signs it,
// acknowledges that alert for an hour as the project's user of that number; 0 withdraws it.
// A number texted nothing, an unknown code, a closed alert: a TwiML reply saying so, nothing
// changed. A bad signature or a replayed message is refused.
func TestSMSReply(t *testing.T) {
	rc := newChatReceiver(t)
	e := hooksEnv(t, rc, store.AuthLimits{})
	a, pid := openHostDown(t, e)
	e.Owner.do("POST", "/users", userBody("ana", role(herald.GroupOwner, "groupId", pid))).wantStatus(201) // mobile +1 555 0100 200
	ctx := context.Background()
	if err := e.Store.RememberSMS(ctx, "+15550100200", store.SMSNotice{GroupID: pid, AlertID: a.ID, Sent: time.Now()}, time.Hour); err != nil {
		t.Fatal(err)
	}

	postSMS(t, e, smsForm("+15550100200", "1", "SM1"), "another token").wantError(403, "INVALID_SIGNATURE")
	wantUnacknowledged(t, e, a)
	wantTwiML(t, postSMS(t, e, smsForm("+15550100299", "1", "SM2"), hookSMSToken), "texted no alert to this number")
	wantTwiML(t, postSMS(t, e, smsForm("+15550100200", "7", "SM3"), hookSMSToken), "Unknown reply")
	wantTwiML(t, postSMS(t, e, smsForm("+15550100200", "0", "SM4"), hookSMSToken), "is not acknowledged: nothing was changed")
	wantUnacknowledged(t, e, a)

	at := time.Now()
	wantTwiML(t, postSMS(t, e, smsForm("+15550100200", " 1 ", "SM5"), hookSMSToken), "Acknowledged HOST_DOWN until")
	r := e.Owner.do("GET", "/groups/"+pid+"/alerts/"+a.ID, nil).wantStatus(200)
	until, err := time.Parse(time.RFC3339, r.str("acknowledgedUntil"))
	if r.str("acknowledgingUsername") != "ana" || err != nil || until.Sub(at) < 59*time.Minute || until.Sub(at) > 61*time.Minute {
		t.Fatalf("alert after the reply: %s", r.Raw)
	}
	evs := auditEvents(t, e, store.EventScope{GroupID: pid}, herald.EventAlertAcknowledged)
	if len(evs) != 1 || evs[0].Raw["source"] != "SMS_REPLY" || evs[0].Raw["recipient"] != "+15550100200" {
		t.Fatalf("audit events %+v", evs)
	}
	postSMS(t, e, smsForm("+15550100200", "1", "SM5"), hookSMSToken).wantError(403, "REPLAYED_REQUEST")

	wantTwiML(t, postSMS(t, e, smsForm("+15550100200", "0", "SM6"), hookSMSToken), "withdrawn by ana")
	wantUnacknowledged(t, e, a)

	closed := a
	closed.Status, closed.Resolved = herald.StatusClosed, herald.At(time.Now())
	saveTestAlert(t, e, false, closed)
	wantTwiML(t, postSMS(t, e, smsForm("+15550100200", "4", "SM7"), hookSMSToken), "is CLOSED: nothing was changed")
	wantUnacknowledged(t, e, a)
}
