package dispatch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// settableClock is a clock a test moves.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *settableClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// An owners' notice waits for its removal's event (no failed try), emails every owner with an
// address once the event is recorded (never the credential, and again on the next try while
// the mail server fails), and ends without a word when the event never comes within
// ownersWait.
func TestOwnersTask(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	st := store.New(storetest.Redis(t))
	mail := channelstest.NewSMTPServer(t)
	clock := &settableClock{now: now}
	e := NewEngine(st, NewDispatcher(st, clock), EngineConfig{Clock: clock,
		Mailer: email.Notifier{Config: email.Config{Addr: mail.Addr, From: "herald@example.com"}}})
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	p, _ := herald.NewProject("prod", org.ID, nil, now)
	for _, err := range []error{st.CreateOrg(ctx, org, herald.Event{}), st.CreateProject(ctx, p, nil, herald.Event{})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []struct {
		name, address string
		role          string
	}{{"owner", "owner@example.com", herald.GroupOwner}, {"reader", "reader@example.com", herald.GroupReadOnly}, {"silent", "", herald.GroupOwner}} {
		user := herald.User{ID: herald.NewID(now), Username: u.name, EmailAddress: u.address, HA1: "ha1",
			Roles: []herald.Role{{GroupID: p.ID, RoleName: u.role}}}
		if err := st.CreateUser(ctx, user, herald.Event{ID: herald.NewID(now)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ev := herald.NewEvent(herald.EventCredentialRejected, herald.Principal{}, p.Scope(), now)
	ev.AlertConfigID = herald.NewID(now)
	ev.Raw = map[string]any{"typeName": "CHAT_B", "field": "apiToken", "removedFrom": "notification"}
	task := newTask(TypeOwnersTold, ownersTask{GroupID: p.ID, EventID: ev.ID, Queued: now})

	// Before the removal is recorded: wait, no failure, nothing sent.
	if err := e.ownersTask(ctx, task); !errors.Is(err, errRemovalPending) || isFailure(err) {
		t.Fatalf("before its event: %v, want errRemovalPending, no failed try", err)
	}
	if err := st.RecordEvent(ctx, store.EventScope{GroupID: p.ID}, ev); err != nil {
		t.Fatal(err)
	}
	// The mail server defers: the try fails, to be retried.
	var deferring atomic.Bool
	deferring.Store(true)
	mail.RefuseWith(func(channelstest.Mail) error {
		if deferring.Load() {
			return errors.New("451 try again later")
		}
		return nil
	})
	if err := e.ownersTask(ctx, task); err == nil || errors.Is(err, errRemovalPending) {
		t.Fatalf("with the mail server deferring: %v, want a failed try", err)
	}
	deferring.Store(false)
	if err := e.ownersTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	ms := mail.Mails()
	if len(ms) != 1 || len(ms[0].To) != 1 || ms[0].To[0] != "owner@example.com" {
		t.Fatalf("mails %+v, want one to the owner with an address", ms)
	}
	body := string(ms[0].Data)
	for _, want := range []string{"CHAT_B", "apiToken", "alert configuration " + ev.AlertConfigID, ev.ID, "prod"} {
		if !strings.Contains(body, want) {
			t.Errorf("the mail does not say %q: %s", want, body)
		}
	}

	// A notice whose removal never happened ends, once ownersWait is over, without a mail.
	lost := newTask(TypeOwnersTold, ownersTask{GroupID: p.ID, EventID: herald.NewID(now), Queued: now})
	clock.set(now.Add(ownersWait - time.Second))
	if err := e.ownersTask(ctx, lost); !errors.Is(err, errRemovalPending) {
		t.Fatalf("within ownersWait: %v, want errRemovalPending", err)
	}
	clock.set(now.Add(ownersWait + time.Second))
	if err := e.ownersTask(ctx, lost); err != nil {
		t.Fatalf("after ownersWait: %v, want the notice ended", err)
	}
	if n := len(mail.Mails()); n != 1 {
		t.Errorf("%d mails, want still 1", n)
	}
	// A payload without its event is no notice: never retried.
	if err := e.ownersTask(ctx, asynq.NewTask(TypeOwnersTold, []byte(`{"groupId":"x"}`))); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("a notice without its event: %v, want SkipRetry", err)
	}
}
