package dispatch_test

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// digestAfter is the rigs' HERALD_DIGEST_AFTER.
const digestAfter = 3

// newDigestRig is a mail rig with digests on (3 messages a target in window minutes of 200 ms)
// and two project owners mailed by a GROUP notification of HOST_DOWN; it returns their ids by
// address.
func newDigestRig(t *testing.T, window int) (*rig, *channelstest.SMTPServer, map[string]string) {
	r, smtpSrv := newMailRig(t, func(c *dispatch.EngineConfig) { c.DigestAfter, c.DigestWindow = digestAfter, window })
	owners := map[string]string{}
	for _, name := range []string{"ana", "bo"} {
		now := time.Now()
		u := herald.User{ID: herald.NewID(now), Username: name, EmailAddress: name + "@example.com", FirstName: "A", LastName: "B",
			Roles: []herald.Role{{GroupID: r.project, RoleName: herald.GroupOwner}}, Created: herald.At(now)}
		if err := r.Store.CreateUser(context.Background(), u, herald.NewEvent(herald.EventUserCreated, herald.Principal{}, herald.Scope{}, now), nil); err != nil {
			t.Fatal(err)
		}
		owners[u.EmailAddress] = u.ID
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.waitEngineIdle(10 * time.Second)
	return r, smtpSrv, owners
}

// storm posts n hosts' observations at once (active: down; else up again).
func (r *rig) storm(n int, active bool) {
	var obs []map[string]any
	for i := range n {
		obs = append(obs, hostDown(fmt.Sprintf("s%02d", i), active))
	}
	r.observe(obs...)
}

// openAlerts waits for n alerts to be open and returns them.
func (r *rig) openAlerts(n int) []map[string]any {
	r.t.Helper()
	var alerts []map[string]any
	if !eventually(15*time.Second, func() bool { alerts = r.alerts("?status=OPEN&itemsPerPage=100"); return len(alerts) == n }) {
		r.t.Fatalf("%d alerts open, want %d", len(alerts), n)
	}
	return alerts
}

// told is what one owner was told, as their mailbox and the deliveries log say: for each host
// and event ("open", "close"), the indexes of the messages that told it (a message naming it,
// or a digest the log records it DIGESTED in), and the messages' ids in order.
type told struct {
	by       map[string][]int // host + " " + event -> message indexes
	messages []string         // Message-IDs, in the order received
	digests  int
	stray    []string // DIGESTED records of digests the owner never received
}

var hostInSubject = regexp.MustCompile(`(s\d\d)\.example\.com`)

// toldTo reads what address (user id userID) was told about the project's alerts.
func (r *rig) toldTo(mails *channelstest.SMTPServer, address, userID string, alerts []map[string]any) told {
	r.t.Helper()
	tl := told{by: map[string][]int{}}
	index := map[string]int{}
	for _, m := range mails.Mails() {
		if len(m.To) != 1 || m.To[0] != address {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			r.t.Fatal(err)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(msg.Header.Get("Message-Id"), "<"), "@herald>")
		subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		i := len(tl.messages)
		tl.messages = append(tl.messages, id)
		index[id] = i
		switch host := hostInSubject.FindStringSubmatch(subject); {
		case strings.Contains(subject, " alerts "):
			tl.digests++
		case host != nil && strings.HasPrefix(subject, "[Herald] Open: "):
			tl.by[host[1]+" open"] = append(tl.by[host[1]+" open"], i)
		case host != nil && strings.HasPrefix(subject, "[Herald] Resolved: "):
			tl.by[host[1]+" close"] = append(tl.by[host[1]+" close"], i)
		default:
			r.t.Errorf("%s got %q", address, subject)
		}
	}
	for _, a := range alerts {
		host := strings.TrimSuffix(a["hostnameAndPort"].(string), ".example.com:27017")
		for _, at := range r.attemptsOf(a["id"].(string)) {
			delivery, _ := at["deliveryId"].(string)
			if at["outcome"] != "DIGESTED" || !strings.HasSuffix(delivery, "-"+userID+"-EMAIL") {
				continue
			}
			ev := "open"
			if strings.Contains(delivery, "-close-") {
				ev = "close"
			}
			i, ok := index[at["digestId"].(string)]
			if !ok {
				tl.stray = append(tl.stray, host+" "+ev+" in "+at["digestId"].(string))
				continue
			}
			tl.by[host+" "+ev] = append(tl.by[host+" "+ev], i)
		}
	}
	return tl
}

// accounted says whether every alert's event was told to the owner exactly once (else why).
func (tl told) accounted(alerts []map[string]any, ev string) string {
	for _, a := range alerts {
		host := strings.TrimSuffix(a["hostnameAndPort"].(string), ".example.com:27017")
		if n := len(tl.by[host+" "+ev]); n != 1 {
			return fmt.Sprintf("%s %s told %d times", host, ev, n)
		}
	}
	if len(tl.stray) > 0 {
		return fmt.Sprintf("DIGESTED in digests never received: %v", tl.stray)
	}
	return ""
}

// waitTold waits until each owner was told ev of every alert (told exactly once: accounted),
// and returns what each was told.
func (r *rig) waitTold(mails *channelstest.SMTPServer, owners map[string]string, alerts []map[string]any, ev string) map[string]told {
	r.t.Helper()
	out := map[string]told{}
	why := ""
	if !eventually(30*time.Second, func() bool {
		for address, id := range owners {
			out[address] = r.toldTo(mails, address, id, alerts)
			if why = out[address].accounted(alerts, ev); why != "" {
				why = address + ": " + why
				return false
			}
		}
		return true
	}) {
		r.t.Fatalf("not every alert's %s told exactly once: %s\n%s", ev, why, r.failedTasks())
	}
	return out
}

// A storm of 50 hosts down, two owners mailed: each owner is told of every alert exactly once,
// alone or in a digest the deliveries log names, in a few messages; then every resolution
// likewise, and never one before its opening.
func TestStormDigestsForPeople(t *testing.T) {
	r, mails, owners := newDigestRig(t, 10)
	const n = 50
	r.storm(n, true)
	alerts := r.openAlerts(n)
	opened := r.waitTold(mails, owners, alerts, "open")
	for address, tl := range opened {
		t.Logf("%s: %d alerts opened in %d messages, %d of them digests", address, n, len(tl.messages), tl.digests)
		if len(tl.messages) > digestAfter+2 || tl.digests == 0 {
			t.Errorf("%s got %d messages (%d digests) for %d alerts, want at most %d and a digest", address, len(tl.messages), tl.digests, n, digestAfter+2)
		}
	}
	r.storm(n, false)
	closed := r.waitTold(mails, owners, alerts, "close")
	for address, tl := range closed {
		t.Logf("%s: %d alerts resolved in %d messages", address, n, len(tl.messages)-len(opened[address].messages))
		if later := len(tl.messages) - len(opened[address].messages); later > digestAfter+2 || tl.digests == opened[address].digests {
			t.Errorf("%s got %d messages for %d resolutions (%d digests in all), want at most %d and a digest", address, later, n, tl.digests, digestAfter+2)
		}
		for _, a := range alerts {
			host := strings.TrimSuffix(a["hostnameAndPort"].(string), ".example.com:27017")
			if o, c := tl.by[host+" open"], tl.by[host+" close"]; c[0] <= o[0] {
				t.Errorf("%s was told %s closed (message %d) no later than opened (message %d)", address, host, c[0], o[0])
			}
		}
	}
}

// A digest whose claimer's worker fails right after the claim (its task queued no digest),
// and whose first message the mail server defers: the claimer's retry queues the digest, which
// is sent again with the same id; every alert is accounted for once per owner.
func TestDigestSurvivesItsClaimerAndARetry(t *testing.T) {
	r, mails, owners := newDigestRig(t, 10)
	r.faults.fail(1, onDigestTask)
	var mu sync.Mutex
	deferred := map[string]int{}
	mails.RefuseWith(func(m channelstest.Mail) error {
		mu.Lock()
		defer mu.Unlock()
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			return nil
		}
		subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		id := msg.Header.Get("Message-Id")
		if strings.Contains(subject, " alerts ") && deferred[id] == 0 {
			deferred[id]++
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "try again later"}
		}
		return nil
	})
	const n = 12
	r.storm(n, true)
	alerts := r.openAlerts(n)
	got := r.waitTold(mails, owners, alerts, "open")
	if r.faults.injected() != 1 {
		t.Fatalf("the claimer's queueing of its digest never failed (%d)", r.faults.injected())
	}
	mu.Lock()
	if len(deferred) == 0 {
		t.Error("no digest was deferred")
	}
	mu.Unlock()
	for address, tl := range got {
		mu.Lock()
		if tl.digests == 0 {
			t.Errorf("%s got no digest", address)
		}
		for _, id := range tl.messages {
			if deferred["<"+id+"@herald>"] > 0 {
				delete(deferred, "<"+id+"@herald>") // sent after its deferral, with the same id
			}
		}
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deferred) != 0 {
		t.Errorf("digests deferred and never sent with the same id: %v", deferred)
	}
}

// A storm's records overflow the project's log of attempts: each alert's deliveries still say
// which digest told each owner about it. A notice that waited for a digest is one record with
// its alert, PACED and then DIGESTED in its place; the project's log lists no waiting notice.
func TestStormAccountingOutlivesTheLog(t *testing.T) {
	r, mails, owners := newDigestRig(t, 10)
	const n = 30
	r.storm(n, true)
	alerts := r.openAlerts(n)
	r.waitTold(mails, owners, alerts, "open")
	r.waitDeliveriesDrained(30 * time.Second)
	ctx := context.Background()
	logged, _, err := r.Store.Attempts(ctx, r.project, "", store.Page{Limit: store.AttemptsKept})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range logged {
		if a.Outcome == store.OutcomePaced {
			t.Errorf("the project's log lists a waiting notice: %+v", a)
		}
	}
	flood := make([]store.Attempt, store.AttemptsKept)
	for i := range flood {
		id := herald.NewID(time.Now())
		flood[i] = store.Attempt{At: herald.At(time.Now()), AlertID: id, DeliveryID: id + "-0-0", Kind: "WEBHOOK", Outcome: store.OutcomeDelivered}
	}
	if err := r.Store.RecordAttempts(ctx, r.project, flood); err != nil {
		t.Fatal(err)
	}
	for address, id := range owners {
		tl := r.toldTo(mails, address, id, alerts)
		if why := tl.accounted(alerts, "open"); why != "" {
			t.Errorf("%s, with the log full of others: %s", address, why)
		}
		if tl.digests == 0 {
			t.Errorf("%s got no digest", address)
		}
	}
	for _, a := range alerts {
		for _, at := range r.attemptsOf(a["id"].(string)) {
			if at["outcome"] == "PACED" {
				t.Errorf("%s: a waiting record left beside its digest's: %v", hostOf(a), at)
			}
		}
	}
}

// onDigestTask matches asynq's commands on a digest's task (its key names its id).
func onDigestTask(_ string, args []any) bool {
	for _, a := range args {
		if s, ok := a.(string); ok && strings.Contains(s, ":t:digest:") {
			return true
		}
	}
	return false
}

// A claimer whose queueing of its digest was done but never answered (the answer lost) runs
// again after the digest was sent and asynq let go of its task: the digest is not sent again,
// and every alert is told once per owner.
func TestDigestIsNotSentAgainByItsClaimersRetry(t *testing.T) {
	r, mails, owners := newDigestRig(t, 10)
	r.faults.failAfter(1, onDigestTask)
	const n = 12
	r.storm(n, true)
	alerts := r.openAlerts(n)
	r.waitTold(mails, owners, alerts, "open")
	if r.faults.injected() != 1 {
		t.Fatalf("the claimer's queueing of its digest never lost its answer (%d)", r.faults.injected())
	}
	r.waitDeliveriesDrained(30 * time.Second) // the claimer's retry ran, and what it queued
	for address, id := range owners {
		tl := r.toldTo(mails, address, id, alerts)
		if why := tl.accounted(alerts, "open"); why != "" {
			t.Errorf("%s: %s (%d messages, %d digests)", address, why, len(tl.messages), tl.digests)
		}
		if seen := map[string]bool{}; slices.ContainsFunc(tl.messages, func(m string) bool { dup := seen[m]; seen[m] = true; return dup }) {
			t.Errorf("%s got a message twice: %v", address, tl.messages)
		}
	}
}

// hostOf is the host an alert is about ("s07").
func hostOf(a map[string]any) string {
	return strings.TrimSuffix(a["hostnameAndPort"].(string), ".example.com:27017")
}

// recorded says whether the deliveries log has an attempt of alert a with outcome for the
// owner userID, of its resolution (closing) or its opening.
func (r *rig) recorded(a map[string]any, userID, outcome string, closing bool) bool {
	for _, at := range r.attemptsOf(a["id"].(string)) {
		d, _ := at["deliveryId"].(string)
		reason, _ := at["reason"].(string)
		if at["outcome"] == outcome && strings.HasSuffix(d, "-"+userID+"-EMAIL") && strings.Contains(d, "-close-") == closing &&
			(outcome != "PACED" || strings.Contains(reason, "digest")) {
			return true
		}
	}
	return false
}

// supersededOpenings counts the SUPERSEDED records of alert a's openings to people by email.
func (r *rig) supersededOpenings(a map[string]any) int {
	n := 0
	for _, at := range r.attemptsOf(a["id"].(string)) {
		if d, _ := at["deliveryId"].(string); at["outcome"] == "SUPERSEDED" && at["via"] == "EMAIL" && !strings.Contains(d, "-close") {
			n++
		}
	}
	return n
}

// Alerts that close while their openings wait for a digest are left out of it, recorded
// SUPERSEDED, and their resolutions withheld: the owners are never told of them; the digest
// tells of the others.
func TestDigestLeavesOutAlertsClosedWhileWaiting(t *testing.T) {
	r, mails, owners := newDigestRig(t, 20) // a window of 4 s
	const n = 7
	r.storm(n, true)
	alerts := r.openAlerts(n)
	var waiting []map[string]any // waiting for a digest, for both owners
	if !eventually(5*time.Second, func() bool {
		waiting = nil
		for _, a := range alerts {
			both := true
			for _, id := range owners {
				both = both && r.recorded(a, id, "PACED", false)
			}
			if both {
				waiting = append(waiting, a)
			}
		}
		return len(waiting) >= 2
	}) {
		t.Fatalf("%d alerts wait for a digest for both owners, want 2 or more", len(waiting))
	}
	gone, kept := waiting[:2], map[string]bool{}
	r.observe(hostDown(hostOf(gone[0]), false), hostDown(hostOf(gone[1]), false))
	var rest []map[string]any
	for _, a := range alerts {
		if a["id"] != gone[0]["id"] && a["id"] != gone[1]["id"] {
			rest = append(rest, a)
			kept[hostOf(a)] = true
		}
	}
	got := r.waitTold(mails, owners, rest, "open")
	for address, id := range owners {
		if got[address].digests != 1 {
			t.Errorf("%s got %d digests, want 1", address, got[address].digests)
		}
		for _, a := range gone {
			// A person's opening is recorded under the notice's id, by its means, when its own
			// task finds it superseded; under the person's delivery when a digest leaves it out.
			if !eventually(10*time.Second, func() bool {
				return r.recorded(a, id, "SUPERSEDED", true) && r.supersededOpenings(a) >= len(owners)
			}) {
				t.Errorf("%s: %s's openings and resolution not recorded SUPERSEDED: %v", address, hostOf(a), r.attemptsOf(a["id"].(string)))
			}
			tl := r.toldTo(mails, address, id, alerts)
			if o, c := tl.by[hostOf(a)+" open"], tl.by[hostOf(a)+" close"]; len(o)+len(c) != 0 {
				t.Errorf("%s was told of %s, closed while it waited: opened in %v, closed in %v", address, hostOf(a), o, c)
			}
		}
	}
}

// Machines are never digested: with digests on, a webhook gets one notice per alert in a storm.
func TestWebhooksAreNotDigested(t *testing.T) {
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) { c.DigestAfter = 1 })
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{r.webhook(0, 60)}})
	const n = 10
	r.storm(n, true)
	opened := func() map[string]bool {
		r.recv.mu.Lock()
		defer r.recv.mu.Unlock()
		out := map[string]bool{}
		for _, d := range r.recv.got {
			if d.Event == "alert.open" {
				out[d.Alert["id"].(string)] = true
			}
		}
		return out
	}
	if !eventually(15*time.Second, func() bool { return len(opened()) == n }) {
		t.Fatalf("%d of %d alerts' openings reached the webhook\n%s", len(opened()), n, r.failedTasks())
	}
	for _, a := range r.openAlerts(n) {
		for _, at := range r.attemptsOf(a["id"].(string)) {
			if at["outcome"] != "DELIVERED" {
				t.Errorf("a webhook's notice: %v", at)
			}
		}
	}
}

// A digest whose sender died once it was sent (its openings' tries never ended, nothing
// recorded), and whose alerts closed before it ran again: its next run leaves the openings
// out and ends their tries, so that the resolutions go at once, not once the tries' marks
// lapse (two minutes).
func TestDigestRunAgainEndsTheTriesOfItsDeadSender(t *testing.T) {
	r, mails, owners := newDigestRig(t, 10) // a window of 2 s
	digestID := regexp.MustCompile(`^[0-9a-f]{24}$`)
	var mu sync.Mutex
	dead, recordFailed := "", false
	// The end of one digest (the first whose tries end) as a dead sender leaves it: its tries
	// (EndNotices, by the digest) not ended, its records not written; its task runs again
	// (storeRetryDelay).
	r.faults.fail(1000, func(name string, args []any) bool {
		mu.Lock()
		defer mu.Unlock()
		if recordFailed {
			return false
		}
		if by, _ := args[len(args)-1].(string); name == "evalsha" && len(args) == 8 && digestID.MatchString(by) && (dead == "" || dead == by) {
			dead = by
			return true
		}
		if dead != "" && name == "lpush" && slices.ContainsFunc(args, func(a any) bool {
			b, ok := a.([]byte)
			return ok && bytes.Contains(b, []byte(dead))
		}) {
			recordFailed = true
			return true
		}
		return false
	})
	const n = 6
	r.storm(n, true)
	alerts := r.openAlerts(n)
	if !eventually(15*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return recordFailed }) {
		t.Fatalf("no digest was sent: %s", r.failedTasks())
	}
	r.storm(n, false)
	got := r.waitTold(mails, owners, alerts, "close")
	for address, tl := range got {
		for _, a := range alerts {
			h := hostOf(a)
			if o, c := tl.by[h+" open"], tl.by[h+" close"]; len(o) > 0 && len(c) > 0 && c[0] < o[0] {
				t.Errorf("%s got %s's resolution before its opening", address, h)
			}
		}
	}
}
