package dispatch_test

import (
	"bytes"
	"context"
	"net/http"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// pacedWebhooks is a rig whose WEBHOOK targets take one notice every every.
func pacedWebhooks(t *testing.T, every time.Duration) *rig {
	return newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) {
		c.Paces = map[string]store.Pace{"WEBHOOK": {Every: every, Burst: 1}}
	})
}

// firstSlot is the slot the first PACED record of an alert's notices names (zero: none).
func (r *rig) firstSlot(alertID string) time.Time {
	r.t.Helper()
	var first time.Time
	for _, a := range r.attemptsOf(alertID) { // newest first: the last PACED one is the first
		if a["outcome"] == store.OutcomePaced {
			reason, _ := a["reason"].(string)
			at, err := time.Parse(time.RFC3339Nano, reason[strings.LastIndex(reason, " ")+1:])
			if err != nil {
				r.t.Fatalf("a PACED record without its slot: %q", reason)
			}
			first = at
		}
	}
	return first
}

// A storm at one paced target: the notices go one per interval, in the order they were
// given their slots; a 429 with Retry-After pauses the whole target (nothing is sent to it
// until the pause ends), the refused notice goes first after it, the others follow in their
// order, and every alert is delivered once.
func TestPacedTargetPausesOnRetryAfter(t *testing.T) {
	const every, alerts, pause = 300 * time.Millisecond, 6, 3 * time.Second
	r := pacedWebhooks(t, every)
	refused := 0
	r.recv.respond = func(n int, w http.ResponseWriter) {
		if n == 3 {
			refused = n
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	var down []map[string]any
	for i := range alerts {
		down = append(down, hostDown("h"+string(rune('a'+i)), true))
	}
	r.observe(down...)
	got := r.recv.waitCount(t, alerts+1, 30*time.Second)
	r.waitDeliveriesDrained(10 * time.Second) // nothing more may come: each alert was delivered once
	got = r.recv.deliveries()
	if len(got) != alerts+1 || refused != 3 {
		t.Fatalf("%d requests (the 429 at %d), want %d: every alert once, and the refused one again", len(got), refused, alerts+1)
	}
	delivered := map[string]int{}
	for i, d := range got {
		if i+1 != refused {
			delivered[d.Alert["id"].(string)]++
		}
		// Each goes at its slot, one every 300 ms, or later when the machine is slow: never
		// two at once.
		if i > 0 && d.At.Sub(got[i-1].At) < every/3 {
			t.Errorf("requests %d and %d %s apart, want about the pace's %s", i, i+1, d.At.Sub(got[i-1].At), every)
		}
	}
	if len(delivered) != alerts {
		t.Errorf("alerts delivered: %v, want each of %d once", delivered, alerts)
	}
	refusedAt, after := got[refused-1], got[refused]
	if gap := after.At.Sub(refusedAt.At); gap < pause-50*time.Millisecond {
		t.Errorf("the target got a request %s after its 429 with Retry-After 3: it was not paused", gap)
	}
	if after.Alert["id"] != refusedAt.Alert["id"] {
		t.Errorf("the first request after the pause is alert %v, want the refused %v at the head of the line", after.Alert["id"], refusedAt.Alert["id"])
	}
	// The ones that waited through the pause went in the order of their first slots.
	var waited []string
	for _, d := range got[refused+1:] {
		waited = append(waited, d.Alert["id"].(string))
	}
	if !slices.IsSortedFunc(waited, func(a, b string) int { return r.firstSlot(a).Compare(r.firstSlot(b)) }) {
		t.Errorf("after the pause the notices went out of their order: %v", waited)
	}
	for _, id := range waited {
		if r.firstSlot(id).IsZero() {
			t.Errorf("alert %s waited without a PACED record", id)
		}
	}
}

// An alert whose opening waits for its slot at a target and which closes meanwhile: the target
// never gets its resolution before (or without) its opening. The waiting opening is
// superseded (its alert closed), its resolution withheld (the opening never reached the
// target), both recorded; the other alert's resolution waits its turn behind the waiting
// opening, and goes after its own opening.
func TestPacedOpeningIsNotOvertaken(t *testing.T) {
	const every = 2 * time.Second
	r := pacedWebhooks(t, every)
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true), hostDown("h2", true))
	first := r.recv.waitCount(t, 1, 10*time.Second)[0]
	r.observe(hostDown("h1", false), hostDown("h2", false))
	var ids []string
	for _, a := range r.alerts("") {
		ids = append(ids, a["id"].(string))
	}
	if len(ids) != 2 {
		t.Fatalf("%d alerts, want 2", len(ids))
	}
	sentID := first.Alert["id"].(string)
	pacedID := ids[0]
	if pacedID == sentID {
		pacedID = ids[1]
	}
	// Every notice ends: the sent alert's resolution delivered, the waiting opening and its
	// resolution superseded.
	if !eventually(20*time.Second, func() bool {
		return hasAttempt(r.attemptsOf(pacedID), store.OutcomeSuperseded, herald.SupersededClosed) &&
			hasAttempt(r.attemptsOf(pacedID), store.OutcomeSuperseded, herald.SupersededNeverOpened) &&
			len(r.recv.deliveries()) == 2
	}) {
		t.Fatalf("the notices did not all end: waiting alert %v; requests %+v", r.attemptsOf(pacedID), r.recv.deliveries())
	}
	if !hasAttempt(r.attemptsOf(pacedID), store.OutcomePaced, "") {
		t.Errorf("the waiting opening has no PACED record: %v", r.attemptsOf(pacedID))
	}
	r.waitDeliveriesDrained(10 * time.Second) // nothing more may come
	got := r.recv.deliveries()
	if len(got) != 2 || got[0].Alert["id"] != sentID || got[0].Event != "alert.open" ||
		got[1].Alert["id"] != sentID || got[1].Event != "alert.close" {
		t.Fatalf("requests %+v, want the sent alert's opening then its resolution, nothing of the waiting one", got)
	}
	if gap := got[1].At.Sub(got[0].At); gap < every-every/3 {
		t.Errorf("the resolution came %s after the opening: it did not wait its turn behind the waiting opening", gap)
	}
}

// A GROUP notification in a storm: each person's address is a target of its own, paced
// apart from the others' (a burst at once, then one per interval), and each person gets every
// alert exactly once.
func TestPeoplePacedPerAddress(t *testing.T) {
	const every, alerts = 250 * time.Millisecond, 6
	r, smtp := newMailRig(t, func(c *dispatch.EngineConfig) {
		c.Paces = map[string]store.Pace{"EMAIL": {Every: every, Burst: 2}}
	})
	var mu sync.Mutex
	at := map[string][]time.Time{} // address -> when each message came
	smtp.RefuseWith(func(m channelstest.Mail) error {
		mu.Lock()
		defer mu.Unlock()
		at[m.To[0]] = append(at[m.To[0]], time.Now())
		return nil
	})
	now := time.Now()
	for _, name := range []string{"ana", "bo"} {
		u := herald.User{ID: herald.NewID(now), Username: name, EmailAddress: name + "@example.com", FirstName: "A", LastName: "B",
			Roles: []herald.Role{{GroupID: r.project, RoleName: herald.GroupOwner}}, Created: herald.At(now)}
		if err := r.Store.CreateUser(context.Background(), u, herald.NewEvent(herald.EventUserCreated, herald.Principal{}, herald.Scope{}, now), nil); err != nil {
			t.Fatal(err)
		}
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	var down []map[string]any
	for i := range alerts {
		down = append(down, hostDown("h"+string(rune('a'+i)), true))
	}
	r.observe(down...)
	if !eventually(30*time.Second, func() bool { return len(smtp.Mails()) >= 2*alerts }) {
		t.Fatalf("%d mails, want %d\n%s", len(smtp.Mails()), 2*alerts, r.failedTasks())
	}
	r.waitDeliveriesDrained(10 * time.Second) // nothing more may come
	// Messages by address and subject.
	told := map[string]int{}
	for _, m := range smtp.Mails() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		told[m.To[0]+" "+msg.Header.Get("Subject")]++
	}
	if len(told) != 2*alerts || len(smtp.Mails()) != 2*alerts {
		t.Errorf("%d mails on %d subjects, want each of %d alerts once to each of 2 owners: %v", len(smtp.Mails()), len(told), alerts, told)
	}
	mu.Lock()
	defer mu.Unlock()
	for addr, times := range at {
		if len(times) != alerts {
			t.Errorf("%s got %d messages, want %d", addr, len(times), alerts)
			continue
		}
		// The burst comes at once, then one per interval: never two within a third of it.
		for i := 2; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < every/3 {
				t.Errorf("%s: messages %d and %d %s apart, want about %s", addr, i, i+1, gap, every)
			}
		}
	}
	// Each address has its own bucket: the second owner's burst does not wait for the first's.
	if a, b := at["ana@example.com"], at["bo@example.com"]; len(a) > 0 && len(b) > 0 {
		if d := a[0].Sub(b[0]).Abs(); d > every {
			t.Errorf("the owners' first messages %s apart: their addresses share a bucket", d)
		}
	}
}

// A paced target that answers every try with a 429 and Retry-After: the delivery's last try
// makes it a dead letter, recorded once, and nothing is sent to the target after it.
func TestPacedRetryAfterEndsOneDeadLetter(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) {
		c.DeliveryRetries = 1
		c.Paces = map[string]store.Pace{"WEBHOOK": {Every: 100 * time.Millisecond, Burst: 1}}
	})
	r.recv.respond = func(_ int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	r.observe(hostDown("h1", true))
	a := r.onlyAlert("OPEN")
	r.waitArchived(dispatch.DeliveryQueue("WEBHOOK"), 1, 30*time.Second)
	tries := len(r.recv.deliveries())
	dead := 0
	for _, at := range r.attemptsOf(a["id"].(string)) {
		if at["outcome"] == store.OutcomeDeadLetter {
			dead++
		}
	}
	if dead != 1 || tries != 3 {
		t.Errorf("%d requests and %d dead-letter records, want the first try and %d retries, the last one dead", tries, dead, 2)
	}
}
