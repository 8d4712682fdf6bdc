package dispatch

import (
	"errors"
	"reflect"
	"testing"

	"github.com/heraldhq/herald"
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
