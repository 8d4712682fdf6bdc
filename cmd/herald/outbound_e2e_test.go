package main

import (
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/store/storetest"
)

// outboundRig is the API and a worker on a fresh Redis, with adjust's settings.
func outboundRig(t *testing.T, adjust func(*common)) *topologyRig {
	return newTopologyRigWith(t, redisSettings{RedisURL: storetest.URL(storetest.Redis(t))}, adjust)
}

// openAlert makes a project whose one enabled configuration, HOST_DOWN, has notifications,
// and opens its alert. It returns the project.
func (r *topologyRig) openAlert(notifications ...any) string {
	r.t.Helper()
	org := r.do("POST", "/orgs", map[string]any{"name": "acme"}, 201)["id"].(string)
	project := r.do("POST", "/groups", map[string]any{"name": "prod", "orgId": org}, 201)["id"].(string)
	for _, c := range r.results("/groups/"+project+"/alertConfigs", 1) {
		r.do("PATCH", "/groups/"+project+"/alertConfigs/"+c["id"].(string), map[string]any{"enabled": false}, 200)
	}
	r.do("POST", "/groups/"+project+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "notifications": notifications}, 201)
	r.do("POST", "/groups/"+project+"/observations", []any{hostDownItem("db-out-1", true)}, 202)
	return project
}

func webhookTo(url string) map[string]any {
	return map[string]any{"typeName": "WEBHOOK", "webhookUrl": url, "webhookSecret": "hmac-0007", "delayMin": 0, "intervalMin": 60}
}

func chatB() map[string]any {
	return map[string]any{"typeName": "CHAT_B", "apiToken": "xoxb-chat-b-0006", "channelName": "#ops", "delayMin": 0, "intervalMin": 60}
}

// chatBReceiver is a CHAT_B service that takes every message.
func chatBReceiver(t *testing.T) *channelstest.Receiver {
	return channelstest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) { kindAnswers["CHAT_B"](w) })
}

// reached waits for rc's first request and returns it.
func (r *topologyRig) reached(what string, rc *channelstest.Receiver) channelstest.Request {
	r.t.Helper()
	r.waitFor(what+" to get its request", 20*time.Second, func() bool { return len(rc.Requests()) > 0 })
	return rc.Requests()[0]
}

// viaProxy says whether a receiver's request came through the test's proxy.
func viaProxy(req channelstest.Request) bool {
	return strings.Contains(req.Header.Get("Via"), channelstest.ProxyName)
}

// alertThroughProxy starts a rig whose deliveries go through the proxy at proxyURL
// (HERALD_OUTBOUND_PROXY), with the CHAT_B service at chat, and opens an alert told to the
// webhook hook and to CHAT_B. It returns the rig and the alert's project.
func alertThroughProxy(t *testing.T, proxyURL string, hook, chat *channelstest.Receiver) (*topologyRig, string) {
	t.Helper()
	r := outboundRig(t, func(c *common) {
		c.Outbound.Proxy = proxyURL
		c.services = services{"HERALD_CHAT_B_URL": chat.URL}
	})
	return r, r.openAlert(webhookTo(hook.URL+"/hook"), chatB())
}

// wantReachedViaProxy waits for the webhook's and CHAT_B's requests and checks that each came
// through the proxy.
func (r *topologyRig) wantReachedViaProxy(hook, chat *channelstest.Receiver) {
	r.t.Helper()
	for what, rc := range map[string]*channelstest.Receiver{"the webhook": hook, "CHAT_B": chat} {
		if req := r.reached(what, rc); !viaProxy(req) {
			r.t.Errorf("%s got a request without the proxy's Via header: not through the proxy (Via %q)", what, req.Header.Get("Via"))
		}
	}
}

// HERALD_OUTBOUND_PROXY carries every delivery, to loopback targets too: a webhook and a
// CHAT_B message reach their receivers through a real forward proxy (tinyproxy), which names
// itself in their Via header.
func TestDeliveriesThroughTheOutboundProxy(t *testing.T) {
	proxy := channelstest.StartTinyProxy(t, "", "")
	hook, chat := channelstest.NewReceiver(t, nil), chatBReceiver(t)
	r, _ := alertThroughProxy(t, proxy.URL, hook, chat)
	r.wantReachedViaProxy(hook, chat)
}

// Without HERALD_OUTBOUND_PROXY the environment's proxy applies as in any Go program:
// HTTP_PROXY carries the webhook, and NO_PROXY naming the CHAT_B service's host and port sends
// that one directly. Go never sends a loopback target to such a proxy, so the targets are
// named by another name of 127.0.0.1.
func TestDeliveriesThroughTheEnvironmentsProxy(t *testing.T) {
	name := channelstest.LoopbackName()
	if name == "" {
		t.Skip("no host name but localhost resolves to 127.0.0.1 only here")
	}
	proxy := channelstest.StartTinyProxy(t, "", "")
	hook, chat := channelstest.NewReceiver(t, nil), chatBReceiver(t)
	named := func(rc *channelstest.Receiver) string { return strings.Replace(rc.URL, "127.0.0.1", name, 1) }
	_, chatPort, _ := net.SplitHostPort(chat.Listener.Addr().String())
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "http_proxy", "no_proxy"} {
		t.Setenv(v, "")
	}
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", name+":"+chatPort)
	r := outboundRig(t, func(c *common) { c.services = services{"HERALD_CHAT_B_URL": named(chat)} })
	r.openAlert(webhookTo(named(hook)+"/hook"), chatB())
	if req := r.reached("the webhook", hook); !viaProxy(req) {
		t.Errorf("the webhook got a request without the proxy's Via header (Via %q): HTTP_PROXY not used", req.Header.Get("Via"))
	}
	if req := r.reached("CHAT_B", chat); viaProxy(req) {
		t.Error("CHAT_B's request came through the proxy though NO_PROXY names its host and port")
	}
	if strings.Contains(proxy.Log(), name+":"+chatPort) {
		t.Errorf("the proxy was asked for CHAT_B's service:\n%s", proxy.Log())
	}
}

// A proxy that wants credentials Herald does not give answers 407: each delivery is a dead
// letter saying so at once, the receivers get nothing, and no credential of theirs is removed.
// With the credentials in HERALD_OUTBOUND_PROXY, the same deliveries go through.
func TestProxyRefusalIsADeadLetter(t *testing.T) {
	proxy := channelstest.StartTinyProxy(t, "herald", "proxy-pw-0009")
	hook, chat := channelstest.NewReceiver(t, nil), chatBReceiver(t)
	r, project := alertThroughProxy(t, proxy.URL, hook, chat)
	var dead []map[string]any
	r.waitFor("two dead letters", 20*time.Second, func() bool {
		dead = r.results("/groups/"+project+"/deadLetters", 0)
		return len(dead) == 2
	})
	for _, d := range dead {
		if e, _ := d["lastError"].(string); !strings.Contains(e, "407 Proxy Authentication Required") {
			t.Errorf("dead letter %v does not say the proxy wants credentials", d)
		}
	}
	for _, a := range r.results("/groups/"+project+"/deliveries", 2) {
		if a["outcome"] != "DEAD_LETTER" {
			t.Errorf("attempt %v: want a DEAD_LETTER at once (not retried, not a refused credential)", a)
		}
	}
	if n := len(hook.Requests()) + len(chat.Requests()); n != 0 {
		t.Errorf("the receivers got %d requests past a proxy that refused them", n)
	}
	kept := false
	for _, c := range r.results("/groups/"+project+"/alertConfigs", 1) {
		for _, n := range c["notifications"].([]any) {
			if n := n.(map[string]any); n["typeName"] == "CHAT_B" {
				token, _ := n["apiToken"].(string)
				kept = strings.HasSuffix(token, "0006")
			}
		}
	}
	if !kept {
		t.Error("CHAT_B's token was removed for the proxy's refusal")
	}

	r, _ = alertThroughProxy(t, proxy.WithCredentials("herald", "proxy-pw-0009"), hook, chat)
	r.wantReachedViaProxy(hook, chat)
}

// A webhook over HTTPS to a target with a private CA that asks for a client certificate is
// delivered with HERALD_OUTBOUND_CA_FILE and HERALD_OUTBOUND_CERT_FILE/KEY_FILE (files the test
// makes). One whose certificate does not verify is a dead letter saying so, and gets nothing.
// Once its CA is added to the file and the process gets SIGHUP, its dead letter replayed is
// delivered: no restart.
func TestWebhookOverHTTPSWithAPrivateCA(t *testing.T) {
	ca, clients, other := channelstest.NewCA(t, "targets' CA"), channelstest.NewCA(t, "clients' CA"), channelstest.NewCA(t, "another CA")
	mtls := channelstest.NewTLSReceiver(t, ca.Server(t).TLS, clients.Pool(), nil)
	untrusted := channelstest.NewTLSReceiver(t, other.Server(t).TLS, nil, nil)
	client := clients.Client(t, "herald")
	caFile := channelstest.WriteFile(t, "ca.pem", ca.PEM)
	r := outboundRig(t, func(c *common) {
		c.AllowPrivate = true
		c.Outbound = outbound{CAFile: caFile, CertFile: channelstest.WriteFile(t, "client.crt", client.CertPEM),
			KeyFile: channelstest.WriteFile(t, "client.key", client.KeyPEM)}
	})
	project := r.openAlert(webhookTo(mtls.URL+"/hook"), webhookTo(untrusted.URL+"/hook"))
	if req := r.reached("the webhook with a client certificate", mtls); !strings.Contains(string(req.Body), "db-out-1") {
		t.Errorf("the webhook got %q", req.Body)
	}
	var dead map[string]any
	r.waitFor("the untrusted webhook's dead letter", 20*time.Second, func() bool {
		for _, d := range r.results("/groups/"+project+"/deadLetters", 0) {
			dead = d
			return true
		}
		return false
	})
	if e, _ := dead["lastError"].(string); !strings.HasSuffix(dead["id"].(string), "-1-1") || !strings.Contains(e, "TLS certificate not accepted: signed by an unknown authority") {
		t.Errorf("dead letter %v: want the second webhook's, saying its certificate was not accepted", dead)
	}
	if n := len(untrusted.Requests()); n != 0 {
		t.Fatalf("the target whose certificate does not verify got %d requests", n)
	}

	if err := os.WriteFile(caFile, append(append([]byte{}, ca.PEM...), other.PEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// The reload runs apart from the signal: replay until a try after it delivers. A replay
	// still under way is no dead letter to replay (404) until it fails again.
	replay := r.client.Base + "/groups/" + project + "/deadLetters/" + dead["id"].(string) + "/replay"
	r.waitFor("the replayed dead letter to be delivered after SIGHUP", 20*time.Second, func() bool {
		if len(untrusted.Requests()) > 0 {
			return true
		}
		resp, err := r.client.HTTP.Post(replay, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotFound {
			t.Fatalf("replay: %s", resp.Status)
		}
		return false
	})
}
