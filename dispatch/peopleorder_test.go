package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// twoOwners adds two owners of the rig's project with email addresses and a GROUP
// configuration that emails them, and makes the engine's next read of the project's people
// fail once: the opening's notice then goes whole to a retry task.
func (r *rig) twoOwners() {
	r.t.Helper()
	ctx := context.Background()
	for _, name := range []string{"one", "two"} {
		now := time.Now()
		u := herald.User{ID: herald.NewID(now), Username: name, EmailAddress: name + "@example.com", FirstName: "A", LastName: "B",
			Roles: []herald.Role{{GroupID: r.project, RoleName: herald.GroupOwner}}, Created: herald.At(now)}
		if err := r.Store.CreateUser(ctx, u, herald.NewEvent(herald.EventUserCreated, herald.Principal{}, herald.Scope{}, now), nil); err != nil {
			r.t.Fatal(err)
		}
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.waitEngineIdle(10 * time.Second)
	r.faults.fail(1, func(name string, args []any) bool {
		k, _ := argAt(args, 1).(string)
		return name == "zrange" && strings.Contains(k, "{users}") && strings.Contains(k, r.project)
	})
}

// mailsTo is the events ("alert.open", "alert.close") mailed to address, in order.
func mailsTo(mail *channelstest.SMTPServer, address string) []string {
	var out []string
	for _, m := range mail.Mails() {
		if len(m.To) != 1 || m.To[0] != address {
			continue
		}
		switch body := string(m.Data); {
		case strings.Contains(body, "CLOSED"):
			out = append(out, "close")
		default:
			out = append(out, "open")
		}
	}
	return out
}

// An opening whose fan-out failed to read the project's people, its alert closed before its
// retry ran: nobody is mailed the resolution of an alert they were never mailed.
func TestFailedPeopleReadSendsNoResolutionAlone(t *testing.T) {
	r, mail := newMailRig(t, nil)
	r.twoOwners()
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	people := dispatch.DeliveryQueue("GROUP")
	if err := ins.PauseQueue(people); err != nil {
		t.Fatal(err)
	}
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	if !eventually(10*time.Second, func() bool { return r.faults.injected() == 1 }) {
		t.Fatal("the people were never read")
	}
	r.observe(hostDown("h1", false))
	r.onlyAlert("CLOSED")
	if err := ins.UnpauseQueue(people); err != nil {
		t.Fatal(err)
	}
	if !eventually(15*time.Second, func() bool {
		as := r.attemptsOf(id)
		return hasAttempt(as, store.OutcomeSuperseded, herald.SupersededClosed) &&
			hasAttempt(as, store.OutcomeSuperseded, herald.SupersededNeverOpened)
	}) {
		t.Fatalf("the opening and the resolutions were not recorded superseded: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	r.waitEngineIdle(10 * time.Second)
	if ms := mail.Mails(); len(ms) != 0 {
		t.Errorf("%d mails sent for an alert whose opening reached nobody, the first to %v", len(ms), ms[0].To)
	}
}

// A retry of a GROUP opening mails each person in turn; the alert closes while the first is
// being mailed (a slow mail server): the second person is not mailed the opening after the
// resolution, and nobody gets a resolution before or without the opening.
func TestGroupRetryNeverFollowsTheResolution(t *testing.T) {
	r, mail := newMailRig(t, nil)
	r.twoOwners()
	slow, held := make(chan struct{}), make(chan struct{}, 1)
	mail.RefuseWith(func(m channelstest.Mail) error {
		if strings.Contains(string(m.Data), "OPEN") && !strings.Contains(string(m.Data), "CLOSED") {
			select {
			case held <- struct{}{}:
			default:
			}
			<-slow
		}
		return nil
	})
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	if !eventually(10*time.Second, func() bool { return r.faults.injected() == 1 }) {
		t.Fatal("the people were never read")
	}
	// The retry task is mailing the first person now (held at the slow server).
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatalf("the opening's retry did not start mailing: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	if !r.retryRunning() || len(r.attemptsOf(id)) != 0 {
		t.Fatalf("the mail held is not the retry's first: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	r.observe(hostDown("h1", false))
	r.onlyAlert("CLOSED")
	time.Sleep(500 * time.Millisecond) // the resolution's tries run meanwhile
	close(slow)
	if !eventually(15*time.Second, func() bool {
		as := r.attemptsOf(id)
		return hasAttempt(as, store.OutcomeDelivered, "") && hasAttempt(as, store.OutcomeSuperseded, herald.SupersededNeverOpened)
	}) {
		t.Fatalf("not recorded: %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	// The first person's resolution waited behind the opening's retry, and goes after it.
	if !eventually(15*time.Second, func() bool { return len(mailsTo(mail, "one@example.com")) == 2 }) {
		t.Errorf("the first person got %v, want the opening and then the resolution", mailsTo(mail, "one@example.com"))
	}
	got := map[string][]string{"one": mailsTo(mail, "one@example.com"), "two": mailsTo(mail, "two@example.com")}
	for who, events := range got {
		if len(events) > 0 && (events[0] != "open" || events[len(events)-1] != "close") {
			t.Errorf("%s got %v", who, events)
		}
	}
	if len(got["one"])+len(got["two"]) == 0 {
		t.Error("nobody was mailed: the test did not test anything")
	}
}

// retryRunning says whether a delivery task of the people's queue is running.
func (r *rig) retryRunning() bool {
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	active, err := ins.ListActiveTasks(dispatch.DeliveryQueue("GROUP"))
	return err == nil && len(active) > 0
}
