package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A service takes one request a second per target, a little early included, and says how long
// a request that came too soon must wait.
func TestGCRAKeepsToOneASecond(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	g := &gcra{every: time.Second, tolerance: 250 * time.Millisecond}
	for _, c := range []struct {
		at       time.Duration
		ok       bool
		wait     time.Duration
		retryHdr string
	}{
		{0, true, 0, ""},
		{500 * time.Millisecond, false, 250 * time.Millisecond, "1"},  // too soon
		{800 * time.Millisecond, true, 0, ""},                         // 200 ms early: taken
		{1500 * time.Millisecond, false, 250 * time.Millisecond, "1"}, // the early one moved nothing forward
		{1800 * time.Millisecond, true, 0, ""},
		{10 * time.Second, true, 0, ""}, // after a pause, no burst is owed
		{10*time.Second + 100*time.Millisecond, false, 650 * time.Millisecond, "1"},
	} {
		ok, wait := g.take(t0.Add(c.at))
		if ok != c.ok || wait != c.wait {
			t.Errorf("at %s: taken %v, wait %s; want %v, %s", c.at, ok, wait, c.ok, c.wait)
		}
		if !ok && retryAfter(wait) != c.retryHdr {
			t.Errorf("at %s: Retry-After %s, want %s", c.at, retryAfter(wait), c.retryHdr)
		}
	}
	if got := retryAfter(2100 * time.Millisecond); got != "3" {
		t.Errorf("Retry-After of 2.1s: %s, want 3", got)
	}
}

// The gateway and the chat service answer 429 with Retry-After to a second message to the
// same number or channel within the second, take one to another at once, and count both.
func TestPeopleServicesLimitEachTarget(t *testing.T) {
	s, err := startPeopleServices()
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	sms := func(to string) *http.Response {
		resp, err := http.PostForm(s.smsURL+"/2010-04-01/Accounts/"+smsAccount+"/Messages.json",
			url.Values{"To": {to}, "From": {"+15550109999"}, "Body": {"Herald Open: Host down: people-1.example.com:27017"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	chat := func(channel string) *http.Response {
		resp, err := http.Post(s.chatURL+"/api/chat.postMessage", "application/json", strings.NewReader(`{"channel":"`+channel+`","text":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		name       string
		resp       *http.Response
		status     int
		retryAfter string
	}{
		{"SMS to a number", sms("+15550100001"), 201, ""},
		{"SMS to it again at once", sms("+15550100001"), 429, "1"},
		{"SMS to another number", sms("+15550100002"), 201, ""},
		{"a chat message", chat("#ops"), 200, ""},
		{"another at once", chat("#ops"), 429, "1"},
	} {
		if c.resp.StatusCode != c.status || c.resp.Header.Get("Retry-After") != c.retryAfter {
			t.Errorf("%s: %d, Retry-After %q; want %d, %q", c.name, c.resp.StatusCode, c.resp.Header.Get("Retry-After"), c.status, c.retryAfter)
		}
	}
	got := map[string][3]int{}
	for _, tg := range s.targets([]owner{{email: "owner1@example.com", mobile: "+15550100001"}}) {
		got[tg.kind+" "+tg.name] = [3]int{tg.requests, tg.limited, len(tg.messages)}
	}
	want := map[string][3]int{"EMAIL owner1@example.com": {0, 0, 0}, "SMS +15550100001": {2, 1, 1}, "CHAT_B #ops": {2, 1, 1}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: requests, 429s, messages %v; want %v", k, got[k], w)
		}
	}
}

// An alert is accounted for by a message that names its host, links to it, or links to a
// digest whose record lists it; once per target, or it shows as in more than one message or
// in none.
func TestPeopleAccountCountsNamesLinksAndDigests(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	keys, err := actlink.ParseKeys(actlink.NewKey("bench"))
	if err != nil {
		t.Fatal(err)
	}
	linker, err := actlink.NewLinker(keys, "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	alerts := map[int]string{0: "6a0000000000000000000000", 1: "6a0000000000000000000001", 2: "6a0000000000000000000002",
		3: "6a0000000000000000000003", 4: "6a0000000000000000000004"}
	d := herald.Digest{ID: "6d0000000000000000000000", GroupID: "5f0000000000000000000000", Kind: "SMS", Recipient: "+15550100001",
		Entries: []herald.DigestEntry{{AlertID: alerts[2]}, {AlertID: alerts[3]}}}
	if err := st.SaveDigest(ctx, d, time.Hour); err != nil {
		t.Fatal(err)
	}
	view := linker.Links(herald.Alert{ID: alerts[1], GroupID: d.GroupID, Status: herald.StatusOpen}, false, false, "+15550100001", now).View
	cut := view[:len(view)-8] + "=\r\n" + view[len(view)-8:] // a quoted-printable soft break inside it
	target := &peopleTarget{kind: "SMS", name: "+15550100001", messages: []peopleMessage{
		{at: now, body: "Herald Open: Host down: people-0.example.com:27017, project bench"},
		{at: now, body: "Alert opened: Host down " + cut},
		{at: now, body: "2 alerts opened in project bench: HOST_DOWN x2 " + linker.DigestLink(d, now) + " " + view[:40]},
		{at: now, body: "Herald Open: Host down: people-2.example.com:27017"},                                                            // alert 2 a second time
		{at: now, body: "3 alerts opened: " + linker.DigestLink(herald.Digest{ID: "6d0000000000000000000009", GroupID: d.GroupID}, now)}, // no record
	}}
	acc := &peopleAccount{store: st, project: d.GroupID, keys: keys, alerts: alerts, digests: map[string][]string{}}
	if err := acc.read(ctx, target); err != nil {
		t.Fatal(err)
	}
	if once, more, none := target.accounted(len(alerts)); once != 3 || more != 1 || none != 1 {
		t.Errorf("once %d, more %d, none %d; want 3 (alerts 0, 1, 3), 1 (alert 2), 1 (alert 4)", once, more, none)
	}
	if target.lostDigests != 1 {
		t.Errorf("%d links to a digest without a record, want 1", target.lostDigests)
	}
	if !target.gotDigestListing(d.ID, alerts[3]) || target.gotDigestListing(d.ID, alerts[1]) {
		t.Error("the digest's message should account for alert 3, not alert 1")
	}
	var ag recordAgreement
	ag.judge(target, alerts[3], []attemptRecord{{Outcome: store.OutcomePaced}, {Outcome: "DIGESTED", DigestID: d.ID}})
	ag.judge(target, alerts[1], []attemptRecord{{Outcome: store.OutcomeDelivered}})
	ag.judge(target, alerts[2], []attemptRecord{{Outcome: "DIGESTED", DigestID: d.ID}}) // also named on its own
	ag.judge(target, alerts[4], []attemptRecord{{Outcome: store.OutcomePaced}})
	ag.judge(target, alerts[0], nil)
	if ag.agree != 3 || ag.disagree != 1 || ag.notLogged != 1 || ag.digested != 2 || ag.delivered != 1 {
		t.Errorf("%+v: want 3 agreeing, 1 disagreeing (alert 2), 1 not in the log", ag)
	}
}
