package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/internal/hooktest"
	"github.com/heraldhq/herald/internal/testkit"
)

const (
	e2eSigningSecret = "chat-b-signing-secret-0010"
	e2eSMSToken      = "sms-token-0011"
	e2eExternal      = "https://herald.example.com"
)

// hooksRig is the API and a worker with action keys and the services' callback secrets; the
// services' messages reach svc.
func hooksRig(t *testing.T, svc *channelstest.Receiver, proxy ...string) (*topologyRig, actlink.Keys) {
	t.Helper()
	keys, err := actlink.ParseKeys("k1:" + strings.Repeat("action-key-", 4))
	if err != nil {
		t.Fatal(err)
	}
	r := outboundRig(t, func(c *common) {
		c.services = services{"HERALD_CHAT_B_URL": svc.URL, "HERALD_SMS_URL": svc.URL, "HERALD_SMS_ACCOUNT": "AC1",
			"HERALD_SMS_FROM": "+15550199", "HERALD_SMS_TOKEN": e2eSMSToken}
		c.Hooks.ChatBSigningSecret = e2eSigningSecret
		c.ExternalURL = e2eExternal
		c.Actions.Keys, c.Actions.Base = keys, e2eExternal
		if len(proxy) > 0 {
			c.Outbound.Proxy = proxy[0]
		}
	})
	return r, keys
}

// post sends a callback to the API's path (outside the base path) and returns its status and body.
func (r *topologyRig) post(path string, body []byte, header http.Header) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(r.client.Base, api.BasePath)+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, text := testkit.Do(r.t, http.DefaultClient, req)
	return resp.StatusCode, text
}

// alert is the project's one alert, read through the API.
func (r *topologyRig) alert(project string) map[string]any {
	r.t.Helper()
	return r.results("/groups/"+project+"/alerts", 1)[0]
}

// A CHAT_B message of an open alert, as the service receives it, carries buttons; a click on
// acknowledge 1 h, signed as the service signs it, acknowledges the alert as the clicking user
// (read back through the API), and the service's response_url gets the message saying so.
// Its hostile twins change nothing: a bad signature, an old timestamp, a tampered token, a
// response_url elsewhere; and the good click again is a replay. With HERALD_OUTBOUND_PROXY
// set, the API's update of the message goes through the proxy, as deliveries do.
func TestChatBButtonEndToEnd(t *testing.T) {
	t.Run("direct", func(t *testing.T) { chatBButtonEndToEnd(t, nil) })
	t.Run("through a proxy", func(t *testing.T) { chatBButtonEndToEnd(t, channelstest.StartTinyProxy(t, "", "")) })
}

func chatBButtonEndToEnd(t *testing.T, proxy *channelstest.TinyProxy) {
	svc := chatBReceiver(t)
	var r *topologyRig
	var keys actlink.Keys
	if proxy != nil {
		r, keys = hooksRig(t, svc, proxy.URL)
	} else {
		r, keys = hooksRig(t, svc)
	}
	project := r.openAlert(chatB())

	var msg struct {
		Blocks []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(r.reached("CHAT_B", svc).Body, &msg); err != nil {
		t.Fatal(err)
	}
	var buttons hooktest.ChatBlock
	if len(msg.Blocks) == 0 || json.Unmarshal(msg.Blocks[len(msg.Blocks)-1], &buttons) != nil || buttons.Type != "actions" || len(buttons.Elements) != 3 {
		t.Fatalf("the message has no buttons: %s", svc.Requests()[0].Body)
	}
	ack := buttons.Elements[0]
	if c, err := keys.Verify(ack.Value, time.Now()); err != nil || ack.ActionID != "acknowledge1h" || c.Action != actlink.Acknowledge1h || c.Recipient != "#ops" {
		t.Fatalf("the first button %+v: %+v %v", ack, c, err)
	}
	if v := buttons.Elements[2]; v.ActionID != "view" || !strings.HasPrefix(v.URL, e2eExternal+"/act/") {
		t.Errorf("the view button %+v", v)
	}

	click := func(token, responseURL string) []byte {
		p, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]string{"id": "U1", "username": "ana"},
			"response_url": responseURL, "message": map[string]any{"blocks": msg.Blocks},
			"actions": []any{map[string]string{"action_id": "acknowledge1h", "block_id": "herald_actions", "value": token}}})
		return []byte(url.Values{"payload": {string(p)}}.Encode())
	}
	signed := hooktest.ChatHeader
	responseURL := svc.URL + "/actions/T1/1/abc"
	tampered := []byte(ack.Value)
	tampered[10] = map[bool]byte{true: 'B', false: 'A'}[tampered[10] == 'A']
	for _, c := range []struct {
		name   string
		body   []byte
		header http.Header
		status int
	}{
		{"a bad signature", click(ack.Value, responseURL), signed("not the secret", time.Now(), click(ack.Value, responseURL)), 401},
		{"an old timestamp", click(ack.Value, responseURL), signed(e2eSigningSecret, time.Now().Add(-6*time.Minute), click(ack.Value, responseURL)), 401},
		{"a tampered token", click(string(tampered), responseURL), signed(e2eSigningSecret, time.Now(), click(string(tampered), responseURL)), 403},
		{"a response_url elsewhere", click(ack.Value, "https://evil.example/x"), signed(e2eSigningSecret, time.Now(), click(ack.Value, "https://evil.example/x")), 400},
	} {
		if status, body := r.post("/hooks/chat-b/actions", c.body, c.header); status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, status, body, c.status)
		}
	}
	if a := r.alert(project); a["acknowledgedUntil"] != nil {
		t.Fatalf("a hostile click acknowledged the alert: %v", a)
	}

	good := click(ack.Value, responseURL)
	header := signed(e2eSigningSecret, time.Now(), good)
	proxied := 0
	if proxy != nil {
		proxied = proxy.Requests()
	}
	if status, body := r.post("/hooks/chat-b/actions", good, header); status != 200 {
		t.Fatalf("the click: %d %s", status, body)
	}
	if a := r.alert(project); a["acknowledgingUsername"] != "ana" || a["acknowledgedUntil"] == nil {
		t.Errorf("the alert after the click: %v", a)
	}
	var update channelstest.Request
	r.waitFor("the message's update", 10*time.Second, func() bool {
		for _, req := range svc.Requests() {
			if req.Path == "/actions/T1/1/abc" {
				update = req
				return true
			}
		}
		return false
	})
	if !strings.Contains(string(update.Body), `"replace_original":true`) || !strings.Contains(string(update.Body), "Acknowledged by ana until") {
		t.Errorf("the update %s", update.Body)
	}
	if proxy != nil && proxy.Requests() == proxied {
		t.Errorf("the message's update did not go through the proxy:\n%s", proxy.Log())
	}
	if status, _ := r.post("/hooks/chat-b/actions", good, header); status != 403 {
		t.Errorf("the replayed click: %d, want 403", status)
	}
}

// An SMS notice of an open alert ends with its reply code and fits one segment; a reply of 1
// from that number, signed as the gateway signs it, acknowledges the alert (read back through
// the API) and is answered in TwiML. Its twins change nothing: a bad signature (403), a
// number texted nothing and an unknown code (a TwiML reply saying so).
func TestSMSReplyEndToEnd(t *testing.T) {
	svc := channelstest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) { kindAnswers["SMS"](w) })
	r, _ := hooksRig(t, svc)
	project := r.openAlert(map[string]any{"typeName": "SMS", "mobileNumber": "+1 555 0100 200", "delayMin": 0, "intervalMin": 60})

	form, err := url.ParseQuery(string(r.reached("SMS", svc).Body))
	if err != nil {
		t.Fatal(err)
	}
	text := form.Get("Body")
	if !strings.HasSuffix(text, " Reply 1 to ack 1h, 4 for 4h") || sms.Segments(text) != 1 || !strings.Contains(text, "db-out-1") {
		t.Fatalf("the text %q (%d segments)", text, sms.Segments(text))
	}
	r.waitFor("the number's last notice to be kept", 10*time.Second, func() bool {
		_, ok, err := r.st.LastSMS(context.Background(), "+15550100200")
		return ok && err == nil
	})

	reply := func(from, body, sid, token string) (int, string) {
		form := url.Values{"From": {from}, "To": {"+15550199"}, "Body": {body}, "MessageSid": {sid}, "AccountSid": {"AC1"}}
		return r.post("/hooks/sms/inbound", []byte(form.Encode()), hooktest.SMSHeader(token, e2eExternal+"/hooks/sms/inbound", form))
	}
	for _, c := range []struct {
		name, from, body, token string
		status                  int
		says                    string
	}{
		{"a bad signature", "+15550100200", "1", "not the token", 403, "INVALID_SIGNATURE"},
		{"a number texted nothing", "+15550100999", "1", e2eSMSToken, 200, "texted no alert to this number"},
		{"an unknown code", "+15550100200", "9", e2eSMSToken, 200, "Unknown reply"},
	} {
		if status, body := reply(c.from, c.body, "SM-"+c.name, c.token); status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, status, body, c.status, c.says)
		}
	}
	if a := r.alert(project); a["acknowledgedUntil"] != nil {
		t.Fatalf("a hostile reply acknowledged the alert: %v", a)
	}
	status, body := reply("+15550100200", "1", "SM-good", e2eSMSToken)
	if status != 200 || !strings.Contains(body, "<Response><Message>Acknowledged HOST_DOWN until") {
		t.Fatalf("the reply: %d %s", status, body)
	}
	if a := r.alert(project); a["acknowledgingUsername"] != "+15550100200" || a["acknowledgedUntil"] == nil {
		t.Errorf("the alert after the reply: %v", a)
	}
}
