package dispatch

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/channels"
)

// Retries wait in the queue of their kind, as the registry declares it, whichever spelling the
// configuration used: a global CHATA notification's retry goes where CHAT_A's do, a queue the
// worker serves.
func TestDeliveryQueueOfEveryKind(t *testing.T) {
	served := DefaultQueues()
	for _, k := range herald.Kinds() {
		for _, name := range []string{k.Name, k.TypeName(true)} {
			if q := DeliveryQueue(name); q != k.Queue || served[q] != k.Priority {
				t.Errorf("DeliveryQueue(%s) = %s (served with priority %d), want %s (%d)", name, q, served[q], k.Queue, k.Priority)
			}
		}
	}
	if DeliveryQueue("CHATA") != DeliveryQueue("CHAT_A") {
		t.Errorf("CHATA retries in %s, CHAT_A in %s", DeliveryQueue("CHATA"), DeliveryQueue("CHAT_A"))
	}
	if q := DeliveryQueue("PIGEON"); served[q] == 0 {
		t.Errorf("a notice of no known kind goes to %s, which no worker serves", q)
	}
}

// The kind of a retry is the person's means, else the notification's, in its configuration's
// spelling (DeliveryQueue reads both).
func TestKindOfRetry(t *testing.T) {
	s := &session{}
	s.snap.Store(&configSet{configs: map[string]herald.AlertRule{"c": {Notifications: []herald.Notification{{TypeName: "CHATA"}, {TypeName: "GROUP"}}}}})
	for _, tc := range []struct {
		n    notice
		want string
	}{
		{notice{ConfigID: "c", Notification: 0}, "deliveries-chat_a"},
		{notice{ConfigID: "c", Notification: 1}, "deliveries-people"},
		{notice{ConfigID: "c", Notification: 1, UserID: "u", Via: "SMS"}, "deliveries-sms"},
		{notice{ConfigID: "gone"}, "deliveries-webhook"},
	} {
		if got := DeliveryQueue(s.kindOf(tc.n)); got != tc.want {
			t.Errorf("%+v: queue %s, want %s", tc.n, got, tc.want)
		}
	}
}

// Whom an ADMIN notification reaches: the configured administrators' addresses, else the
// users holding GLOBAL_OWNER, by email; a retry of one person's delivery reaches that one.
func TestAdminRecipients(t *testing.T) {
	yes, no := true, false
	p := herald.Project{ID: "g1", OrgID: "o1"}
	users := []herald.User{
		{ID: "u-owner", EmailAddress: "owner@example.com", MobileNumber: "+15550001", Roles: []herald.Role{{RoleName: herald.GlobalOwner}}},
		{ID: "u-monitor", EmailAddress: "monitor@example.com", Roles: []herald.Role{{RoleName: herald.GlobalMonitoringAdmin}}},
		{ID: "u-project", EmailAddress: "project@example.com", Roles: []herald.Role{{GroupID: "g1", RoleName: herald.GroupOwner}}},
	}
	ctx := func(n herald.Notification) noticeContext {
		return noticeContext{project: p, rule: &herald.AlertRule{Notifications: []herald.Notification{n}},
			people: func() ([]herald.User, error) { return users, nil }}
	}
	admin := herald.Notification{TypeName: "ADMIN", EmailEnabled: &yes, SMSEnabled: &no}
	to := func(rs []recipient) []string {
		var out []string
		for _, r := range rs {
			if r.kind != "EMAIL" || r.via != "EMAIL" {
				t.Errorf("recipient %+v is not an email", r)
			}
			out = append(out, r.delivery.To)
		}
		return out
	}
	n := notice{DeliveryID: "a-0-1", Event: string(channels.EventOpen), Global: true}

	withAdmins := &Engine{EngineConfig: EngineConfig{Administrators: []string{"ops@example.com", "oncall@example.com"}}}
	rs, err := withAdmins.recipients(n, ctx(admin))
	if err != nil {
		t.Fatal(err)
	}
	if got := to(rs); !reflect.DeepEqual(got, []string{"ops@example.com", "oncall@example.com"}) {
		t.Errorf("with HERALD_ADMIN_EMAIL: %v", got)
	}
	again, _ := withAdmins.recipients(n, ctx(admin))
	if rs[0].delivery.ID != again[0].delivery.ID || rs[0].delivery.ID == rs[1].delivery.ID {
		t.Errorf("administrators' delivery ids %s, %s then %s: stable and distinct expected", rs[0].delivery.ID, rs[1].delivery.ID, again[0].delivery.ID)
	}
	one := n
	one.UserID, one.Via = rs[1].userID, "EMAIL"
	if retry, _ := withAdmins.recipients(one, ctx(admin)); !reflect.DeepEqual(to(retry), []string{"oncall@example.com"}) || retry[0].delivery.ID != rs[1].delivery.ID {
		t.Errorf("a retry of the second administrator's delivery: %+v", retry)
	}

	// None configured: the global owners, by email only though the owner has a mobile number.
	for _, stored := range []herald.Notification{admin, {TypeName: "ADMIN"}} { // the second as stored before validation set the flags
		rs, err := (&Engine{}).recipients(n, ctx(stored))
		if err != nil {
			t.Fatal(err)
		}
		if got := to(rs); !reflect.DeepEqual(got, []string{"owner@example.com"}) {
			t.Errorf("%+v without HERALD_ADMIN_EMAIL: %v, want the global owner", stored, got)
		}
	}
}

// A fan-out whose people cannot be read is an error, not an empty list of recipients.
func TestRecipientsPeopleError(t *testing.T) {
	yes := true
	nc := noticeContext{rule: &herald.AlertRule{Notifications: []herald.Notification{{TypeName: "GROUP", EmailEnabled: &yes}}},
		people: func() ([]herald.User, error) { return nil, errors.New("redis: i/o timeout") }}
	if _, err := (&Engine{}).recipients(notice{}, nc); err == nil {
		t.Error("no error when the project's users could not be read")
	}
}

// DeliveryQueues, where dead letters are looked for, are exactly the delivery queues a worker
// serves by default.
func TestDeliveryQueuesAreServed(t *testing.T) {
	served := DefaultQueues()
	delete(served, QueueEngine)
	got := DeliveryQueues()
	if len(got) != len(served) {
		t.Errorf("DeliveryQueues %v, served by default %v", got, served)
	}
	for _, q := range got {
		if served[q] == 0 {
			t.Errorf("%s is not served by default", q)
		}
	}
}

// Notices read by people carry action links made for their recipient: the user's username
// for a fan-out, the kind's Actor field (the notification's, else its integration's) for one
// target, the kind's name where it has no Actor; machines' notices and an engine with no
// keys carry none; a resolution offers only view.
func TestRecipientsCarryActionLinks(t *testing.T) {
	keys, err := actlink.ParseKeys("k1:" + strings.Repeat("s", 40))
	if err != nil {
		t.Fatal(err)
	}
	linker, err := actlink.NewLinker(keys, "https://herald.example.com")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	e := &Engine{EngineConfig: EngineConfig{Linker: linker, Clock: &settableClock{now: now}}}
	alert := herald.Alert{ID: "6a1b2c3d4e5f60718293a4b5", GroupID: "5f0c6b1e2a3b4c5d6e7f8091", Status: herald.StatusOpen}
	users := []herald.User{{ID: "u1", Username: "ana", EmailAddress: "ana@example.com", Roles: []herald.Role{{GroupID: alert.GroupID, RoleName: herald.GroupOwner}}}}
	ctx := func(n herald.Notification, integ map[string]*herald.Integration) noticeContext {
		return noticeContext{alert: alert, project: herald.Project{ID: alert.GroupID, Name: "prod"}, org: "Acme",
			rule: &herald.AlertRule{Notifications: []herald.Notification{n}}, integ: integ,
			people: func() ([]herald.User, error) { return users, nil }}
	}
	recipientOf := func(d channels.Delivery, want []actlink.Action) string {
		t.Helper()
		if d.Project != "prod" || d.Org != "Acme" {
			t.Errorf("names: project %q org %q", d.Project, d.Org)
		}
		got := map[actlink.Action]string{actlink.View: d.Links.View, actlink.Acknowledge1h: d.Links.Acknowledge1h,
			actlink.Acknowledge4h: d.Links.Acknowledge4h, actlink.Unacknowledge: d.Links.Unacknowledge}
		var who string
		for act, link := range got {
			if !slices.Contains(want, act) {
				if link != "" {
					t.Errorf("offers %s", act)
				}
				continue
			}
			c, err := keys.Verify(strings.TrimPrefix(link, "https://herald.example.com/act/"), now)
			if err != nil || c.Action != act || c.Alert != alert.ID || c.Group != alert.GroupID {
				t.Fatalf("%s link: %+v %v", act, c, err)
			}
			who = c.Recipient
		}
		return who
	}
	open := []actlink.Action{actlink.View, actlink.Acknowledge1h, actlink.Acknowledge4h}
	n := notice{DeliveryID: "d1", Event: string(channels.EventOpen)}
	for _, tc := range []struct {
		nt    herald.Notification
		integ map[string]*herald.Integration
		want  string
	}{
		{herald.Notification{TypeName: "GROUP", EmailEnabled: &yes}, nil, "ana"},
		{herald.Notification{TypeName: "EMAIL", Fields: map[string]string{"emailAddress": "ops@example.com"}}, nil, "ops@example.com"},
		{herald.Notification{TypeName: "CHAT_B", Fields: map[string]string{"apiToken": "xoxb-1"}},
			map[string]*herald.Integration{"CHAT_B": {Type: "CHAT_B", Fields: map[string]string{"apiToken": "xoxb-1", "channelName": "#ops"}}}, "#ops"},
		{herald.Notification{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://hooks.example.com/s3cret"}}, nil, "WEBHOOK"},
	} {
		rs, err := e.recipients(n, ctx(tc.nt, tc.integ))
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v %v", tc.nt.TypeName, rs, err)
		}
		if who := recipientOf(rs[0].delivery, open); who != tc.want {
			t.Errorf("%s: links made for %q, want %q", tc.nt.TypeName, who, tc.want)
		}
	}
	paging := herald.Notification{TypeName: "PAGING", Fields: map[string]string{"serviceKey": "k"}}
	if rs, _ := e.recipients(n, ctx(paging, nil)); len(rs) != 1 || !rs[0].delivery.Links.Empty() {
		t.Errorf("a machine's notice carries links: %+v", rs)
	}
	closing := notice{DeliveryID: "d2", Event: string(channels.EventClose)}
	email := herald.Notification{TypeName: "EMAIL", Fields: map[string]string{"emailAddress": "ops@example.com"}}
	if rs, _ := e.recipients(closing, ctx(email, nil)); len(rs) == 1 {
		recipientOf(rs[0].delivery, []actlink.Action{actlink.View})
	}
	if rs, _ := (&Engine{}).recipients(n, ctx(email, nil)); len(rs) != 1 || !rs[0].delivery.Links.Empty() {
		t.Errorf("no keys, yet links: %+v", rs)
	}
}
