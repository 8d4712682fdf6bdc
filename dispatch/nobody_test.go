package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// A notice that fans out to people and reaches nobody (no one holding the role it names has
// an address for its means) does not vanish: it ends a dead letter, its attempt recorded
// DEAD_LETTER through the API with the reason, counted as a failed attempt of its kind, and
// listed with the project's dead letters (replayable once someone has an address).
func TestFanOutReachingNobodyIsADeadLetter(t *testing.T) {
	for _, c := range []struct {
		name         string
		notification map[string]any
		why          string
	}{
		{"no holder of the role", map[string]any{"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false},
			"no member of the project holding GROUP_OWNER has an email address"},
		{"no mobile number", map[string]any{"typeName": "GROUP", "emailEnabled": false, "smsEnabled": true},
			"no member of the project has a mobile number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			r, mail := newMailRig(t, func(cfg *dispatch.EngineConfig) { cfg.Observer = rec })
			// A member with an email address and no mobile number, holding another role.
			r.do("POST", "/users", map[string]any{"username": "reader@example.com", "password": "s3cret-pass", "emailAddress": "reader@example.com",
				"firstName": "A", "lastName": "B", "roles": []any{map[string]any{"groupId": r.project, "roleName": "GROUP_READ_ONLY"}}}, 201)
			c.notification["delayMin"], c.notification["intervalMin"] = 0, 60
			r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{c.notification}})
			r.observe(hostDown("h1", true))
			id := r.onlyAlert("OPEN")["id"].(string)
			var as []map[string]any
			if !eventually(10*time.Second, func() bool {
				as = r.attemptsOf(id)
				return hasAttempt(as, store.OutcomeDeadLetter, c.why)
			}) {
				t.Fatalf("the notice that reached nobody is not recorded a dead letter (%q): attempts %v\n%s", c.why, as, r.failedTasks())
			}
			if a := as[0]; a["typeName"] != "GROUP" || a["deliveryId"] != id+"-0-1" {
				t.Errorf("attempt %v: want the GROUP notice %s-0-1", a, id)
			}
			if !rec.attempted("GROUP", store.OutcomeFailed) {
				t.Errorf("the observer was not told of a failed GROUP attempt: %v", rec.attempts)
			}
			var dead []any
			if !eventually(10*time.Second, func() bool {
				dead = r.do("GET", "/groups/"+r.project+"/deadLetters", nil, 200)["results"].([]any)
				return len(dead) == 1
			}) {
				t.Fatalf("dead letters %v, want the notice's: %s", dead, r.failedTasks())
			}
			if d := dead[0].(map[string]any); d["id"] != id+"-0-1" || !strings.Contains(d["lastError"].(string), c.why) {
				t.Errorf("dead letter %v", d)
			}
			if n := len(mail.Mails()); n != 0 {
				t.Errorf("%d mails sent, to nobody expected", n)
			}
		})
	}
}

// A retry of one person's delivery that finds the person no longer among those the
// notification reaches (they left the project after the first try failed) is recorded as a
// dead letter with why, not dropped without a trace.
func TestRetryOfAPersonGoneIsADeadLetter(t *testing.T) {
	rec := &recorder{}
	r, mail := newMailRig(t, func(cfg *dispatch.EngineConfig) { cfg.Observer = rec })
	r.do("POST", "/users", map[string]any{"username": "owner@example.com", "password": "s3cret-pass", "emailAddress": "owner@example.com",
		"firstName": "A", "lastName": "B", "roles": []any{map[string]any{"groupId": r.project, "roleName": "GROUP_OWNER"}}}, 201)
	ctx := context.Background()
	members := "herald:{users}:users:group:" + r.project
	if n, err := r.Store.Redis().Exists(ctx, members).Result(); err != nil || n != 1 {
		t.Fatalf("the project's members are not at %s: %v", members, err)
	}
	// The first try is deferred; by then the owner has left the project.
	mail.RefuseWith(func(channelstest.Mail) error {
		if err := r.Store.Redis().Del(ctx, members).Err(); err != nil {
			t.Error(err)
		}
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	})
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	var as []map[string]any
	if !eventually(15*time.Second, func() bool {
		as = r.attemptsOf(id)
		return hasAttempt(as, store.OutcomeDeadLetter, "")
	}) {
		t.Fatalf("the retry of the person gone is not recorded: attempts %v\n%s", as, r.failedTasks())
	}
	a := as[0]
	if a["outcome"] != store.OutcomeDeadLetter || a["via"] != "EMAIL" || !strings.Contains(a["reason"].(string), "no longer") {
		t.Errorf("last attempt %v: want a dead letter saying the person is no longer reached", a)
	}
	if !rec.attempted("EMAIL", store.OutcomeFailed) {
		t.Errorf("the observer was not told of a failed EMAIL attempt: %v", rec.attempts)
	}
}
