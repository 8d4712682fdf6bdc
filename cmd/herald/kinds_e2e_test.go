package main

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store/storetest"
)

// kindCase is how the end-to-end test configures one kind and where it expects it: an HTTP
// receiver (path: the request it must get) or, for mail, the address it must reach.
type kindCase struct {
	fields   func(url string) map[string]any    // the notification's fields besides typeName
	settings func(url string) map[string]string // the sender's settings, pointing it at url
	path     func(url string) string            // the request's path at its receiver; "" for mail
	mailTo   string
}

// serviceAt is the settings of a kind whose service's address is env.
func serviceAt(env ...string) func(url string) map[string]string {
	return func(url string) map[string]string {
		out := map[string]string{}
		for _, e := range env {
			out[e] = url
		}
		return out
	}
}

// kindCases are the cases of every kind of the registry; url is the kind's own receiver.
var kindCases = map[string]kindCase{
	"EMAIL": {fields: func(string) map[string]any { return map[string]any{"emailAddress": "kind-email@example.com"} }, mailTo: "kind-email@example.com"},
	"SMS": {fields: func(string) map[string]any { return map[string]any{"mobileNumber": "+15550100"} },
		settings: func(url string) map[string]string {
			return map[string]string{"HERALD_SMS_URL": url, "HERALD_SMS_ACCOUNT": "AC1", "HERALD_SMS_FROM": "+15550199", "HERALD_SMS_TOKEN": "sms-token-0008"}
		},
		path: func(string) string { return "/2010-04-01/Accounts/AC1/Messages.json" }},
	"USER":  {fields: func(string) map[string]any { return map[string]any{"username": "named-user@example.com"} }, mailTo: "named-user@example.com"},
	"GROUP": {fields: func(string) map[string]any { return map[string]any{"role": "GROUP_OWNER"} }, mailTo: "group-owner@example.com"},
	"ORG":   {fields: func(string) map[string]any { return map[string]any{"role": "ORG_OWNER"} }, mailTo: "org-owner@example.com"},
	"ADMIN": {fields: func(string) map[string]any { return map[string]any{} }, mailTo: "admin@example.com"},
	"PAGING": {fields: func(string) map[string]any { return map[string]any{"serviceKey": "paging-service-key-0001"} },
		settings: serviceAt("HERALD_PAGING_URL"), path: func(string) string { return "/v2/enqueue" }},
	"ALERTING_A": {fields: func(string) map[string]any { return map[string]any{"alertingAApiKey": "alerting-a-key-0002"} },
		settings: serviceAt("HERALD_ALERTING_A_URL", "HERALD_ALERTING_A_EU_URL"), path: func(string) string { return "/v2/alerts" }},
	"ALERTING_B": {fields: func(string) map[string]any {
		return map[string]any{"alertingBApiKey": "alerting-b-key-0003", "alertingBRoutingKey": "ops"}
	}, settings: serviceAt("HERALD_ALERTING_B_URL"), path: func(string) string { return "/integrations/generic/20131114/alert/alerting-b-key-0003/ops" }},
	"METRICS_A": {fields: func(string) map[string]any { return map[string]any{"metricsAApiKey": "metrics-a-key-0004"} },
		settings: serviceAt("HERALD_METRICS_A_URL"), path: func(string) string { return "/api/v1/events" }},
	"CHAT_A": {fields: func(string) map[string]any {
		return map[string]any{"notificationToken": "chat-a-token-0005", "roomName": "ops"}
	},
		settings: serviceAt("HERALD_CHAT_A_URL"), path: func(string) string { return "/v2/room/ops/notification" }},
	"CHAT_B": {fields: func(string) map[string]any {
		return map[string]any{"apiToken": "xoxb-chat-b-0006", "channelName": "#ops"}
	},
		settings: serviceAt("HERALD_CHAT_B_URL"), path: func(string) string { return "/api/chat.postMessage" }},
	"CHAT_C": {fields: func(url string) map[string]any { return map[string]any{"chatCWebhookUrl": url + "/chat-c/hook"} },
		path: func(string) string { return "/chat-c/hook" }},
	"WEBHOOK": {fields: func(url string) map[string]any {
		return map[string]any{"webhookUrl": url + "/hook", "webhookSecret": "hmac-0007"}
	},
		path: func(string) string { return "/hook" }},
}

// kindAnswers are what each service answers a request it accepts.
var kindAnswers = map[string]func(http.ResponseWriter){
	"SMS": func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated) },
	"PAGING": func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"success","message":"Event processed","dedup_key":"x"}`))
	},
	"ALERTING_A": func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"result":"Request will be processed","took":0.1,"requestId":"r-1"}`))
	},
	"ALERTING_B": func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"result":"success","entity_id":"x"}`)) },
	"METRICS_A": func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"ok","event":{"id":1}}`))
	},
	"CHAT_A":  func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) },
	"CHAT_B":  func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"ok":true,"channel":"C1","ts":"1.2"}`)) },
	"CHAT_C":  func(w http.ResponseWriter) { _, _ = w.Write([]byte("1")) },
	"WEBHOOK": func(w http.ResponseWriter) {},
}

// outage makes each target fail for a while from its first request: longer than the quick
// retries a worker makes at once, so what reaches the target afterwards is a retry task's.
type outage struct {
	length time.Duration // 0: no outage
	mu     sync.Mutex
	first  map[string]time.Time
	served map[string]int // requests answered with success, by target
}

// down reports whether target fails a request now, starting its outage on its first request.
func (o *outage) down(target string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.first[target].IsZero() {
		o.first[target] = time.Now()
	}
	if time.Since(o.first[target]) < o.length {
		return true
	}
	o.served[target]++
	return false
}

// succeeded is how many requests target answered with success.
func (o *outage) succeeded(target string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.served[target]
}

// Every kind the API accepts, in a project configuration and in a global one, reaches its real
// receiver: the senders cmd/herald wires, pointed at receivers on 127.0.0.1 and a real SMTP
// server, with a real asynq worker serving the default queues. First try, and after an outage
// (500, or SMTP 451) that outlasts the quick retries, so that the delivery arrives from a retry
// task of its kind's queue.
func TestEveryKindReachesItsReceiver(t *testing.T) {
	for _, global := range []bool{false, true} {
		for _, down := range []time.Duration{0, 3500 * time.Millisecond} {
			name := map[bool]string{false: "project", true: "global"}[global] + map[bool]string{true: "/first try", false: "/retry after a 500"}[down == 0]
			t.Run(name, func(t *testing.T) {
				testKindsEndToEnd(t, global, &outage{length: down, first: map[string]time.Time{}, served: map[string]int{}})
			})
		}
	}
}

func testKindsEndToEnd(t *testing.T, global bool, out *outage) {
	var kinds []herald.Kind
	for _, k := range herald.Kinds() {
		if (global && k.Global) || (!global && k.Project) {
			if _, ok := kindCases[k.Name]; !ok {
				t.Errorf("no end-to-end case for kind %s", k.Name)
				continue
			}
			kinds = append(kinds, k)
		}
	}
	mail := channelstest.NewSMTPServer(t)
	mail.RefuseWith(func(m channelstest.Mail) error {
		if out.down(strings.Join(m.To, ",")) {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
		}
		return nil
	})
	receivers := map[string]*channelstest.Receiver{}
	for kind, answer := range kindAnswers {
		receivers[kind] = channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			if out.down(kind) {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			answer(w)
		})
	}
	rc := newTopologyRigWith(t, redisSettings{RedisURL: storetest.URL(storetest.Redis(t))}, func(c *common) {
		c.Minute = time.Second // repeats a minute (a second) apart: none within the test
		c.Administrators = []string{"admin@example.com"}
		c.services = services{"HERALD_SMTP_ADDR": mail.Addr, "HERALD_SMTP_FROM": "herald@example.com"}
		for kind, kc := range kindCases {
			if kc.settings != nil {
				maps.Copy(c.services, kc.settings(receiverURL(receivers[kind])))
			}
		}
	})

	org := rc.do("POST", "/orgs", map[string]any{"name": "acme"}, 201)["id"].(string)
	project := rc.do("POST", "/groups", map[string]any{"name": "prod", "orgId": org}, 201)["id"].(string)
	for _, c := range rc.results("/groups/"+project+"/alertConfigs", 1) {
		rc.do("PATCH", "/groups/"+project+"/alertConfigs/"+c["id"].(string), map[string]any{"enabled": false}, 200)
	}
	for _, u := range []struct {
		name string
		role map[string]any
	}{
		{"group-owner@example.com", map[string]any{"groupId": project, "roleName": "GROUP_OWNER"}},
		{"org-owner@example.com", map[string]any{"orgId": org, "roleName": "ORG_OWNER"}},
		{"named-user@example.com", map[string]any{"orgId": org, "roleName": "ORG_READ_ONLY"}},
	} {
		rc.do("POST", "/users", map[string]any{"username": u.name, "password": "s3cret-pass", "emailAddress": u.name,
			"firstName": "A", "lastName": "B", "roles": []any{u.role}}, 201)
	}

	var notifications []any
	for _, k := range kinds {
		n := kindCases[k.Name].fields(receiverURL(receivers[k.Name]))
		if global {
			delete(n, "role") // global configurations name no roles: GROUP reaches every member
		}
		n["typeName"], n["delayMin"], n["intervalMin"] = k.TypeName(global), 0, 60
		notifications = append(notifications, n)
	}
	config := map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "notifications": notifications}
	if global {
		config["groupIds"] = []string{project}
		rc.do("POST", "/globalAlertConfigs", config, 201)
	} else {
		rc.do("POST", "/groups/"+project+"/alertConfigs", config, 201)
	}
	rc.do("POST", "/groups/"+project+"/observations", []any{hostDownItem("db-kinds-1", true)}, 202)

	reached := func(k herald.Kind) bool {
		kc := kindCases[k.Name]
		if kc.mailTo != "" {
			for _, m := range mail.Mails() {
				if len(m.To) == 1 && m.To[0] == kc.mailTo && strings.Contains(string(m.Data), "Subject: [Herald] Open: Host down: db-kinds-1") {
					return true
				}
			}
			return false
		}
		reqs := receivers[k.Name].Requests()
		if len(reqs) == 0 {
			return false
		}
		last := reqs[len(reqs)-1]
		return out.succeeded(k.Name) > 0 && last.Method == http.MethodPost && last.Path == kc.path("") &&
			strings.Contains(string(last.Body)+last.Query.Encode(), "db-kinds-1")
	}
	deadline := time.Now().Add(25 * time.Second)
	for _, k := range kinds {
		for !reached(k) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !reached(k) {
			t.Errorf("%s (%s) did not reach its receiver: %d requests, mails %d", k.Name, k.TypeName(global), len(receiverRequests(receivers[k.Name])), len(mail.Mails()))
		}
	}
	if out.length == 0 {
		for _, k := range kinds {
			if r := receivers[k.Name]; r != nil && len(r.Requests()) != 1 {
				t.Errorf("%s: %d requests on a first try that succeeded", k.Name, len(r.Requests()))
			}
		}
		return
	}
	// What reached the targets after the outage came through each kind's queue: a person's
	// delivery through its means' (EMAIL's).
	ins := asynq.NewInspectorFromRedisClient(rc.st.Redis())
	want := map[string]int{}
	for _, k := range kinds {
		if k.People != nil {
			want[dispatch.DeliveryQueue("EMAIL")]++
		} else {
			want[dispatch.DeliveryQueue(k.Name)]++
		}
	}
	for q, n := range want {
		info, err := ins.GetQueueInfo(q)
		if err != nil || info.Processed < n {
			t.Errorf("queue %s processed %v retry tasks, want at least %d (%v)", q, info, n, err)
		}
	}
}

// receiverURL is a receiver's address, or "" for a kind without one (mail).
func receiverURL(r *channelstest.Receiver) string {
	if r == nil {
		return ""
	}
	return r.URL
}

func receiverRequests(r *channelstest.Receiver) []channelstest.Request {
	if r == nil {
		return nil
	}
	return r.Requests()
}
