package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/store"
)

// Scenario 9, a storm for people (go run ./bench -only people): -people-alerts HOST_DOWN
// alerts open at once in a project with three owners, each with an email address and a mobile
// number, notified by a GROUP notification by email and text message, and a CHAT_B channel
// notification. Herald runs as production runs it (herald api and herald worker, with action
// keys), against real services on 127.0.0.1: the SMTP server the tests use, an SMS gateway
// speaking the gateway's Messages API and a chat service speaking chat.postMessage, each of
// the last two answering 429 with Retry-After beyond its documented rate (people_services.go).
//
// Each target is watched for a span from the first report: 15 minutes of Herald's minute
// (-people-minute, HERALD_MINUTE: it sets the notifications' and the digests' minutes; the
// services' rates stay real), or -people-span. Then the worker is stopped and each target's
// messages are read: how many came in the span, how many requests were answered 429, when the
// first came, and which alerts each message (up to the worker's stop) accounts for: those it
// names (its action links, or its hosts' names), and every alert a digest it links to lists
// (its record in the store, as the digest's page shows it). An alert is accounted for at a
// target when exactly one of the target's messages accounts for it. The deliveries API is
// asked about a sample of the
// alerts (-people-sample), and what it records for each target (DELIVERED, or DIGESTED with
// a digestId) is checked against what the target received.
var (
	peopleAlerts = flag.Int("people-alerts", 10_000, "scenario 9: alerts opened at once in the storm for people")
	peopleMinute = flag.Duration("people-minute", 8*time.Second, "scenario 9: Herald's minute (HERALD_MINUTE) in the storm for people; 1m for the real thing (the services' rates are real either way)")
	peopleSpan   = flag.Duration("people-span", 0, "scenario 9: how long the targets are watched from the first report (default: 15 of -people-minute)")
	peopleSample = flag.Int("people-sample", 100, "scenario 9: alerts whose deliveries the API is asked for, spread over the storm")
)

// Scenario 9's goals: messages a target in the first 15 minutes, and the first message's
// delay.
var peopleGoals = map[string]int{"EMAIL": 10, "SMS": 10, "CHAT_B": 20}

const (
	peopleFirstLimit = 5 * time.Second
	peopleOwners     = 3
	peopleHosts      = "people" // the storm's hosts: people-0.example.com, …
	peopleChannel    = "#ops"
)

// people is scenario 9.
func (b *bench) people(ctx context.Context) ([]figure, error) {
	n, minute, span := *peopleAlerts, *peopleMinute, *peopleSpan
	if span <= 0 {
		span = 15 * minute
	}
	if n < 1 || minute < 100*time.Millisecond {
		return nil, errors.New("-people-alerts must be at least 1 and -people-minute at least 100ms")
	}
	dir, bin, err := heraldDir("people")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	svc, err := startPeopleServices()
	if err != nil {
		return nil, err
	}
	defer svc.stop()
	h, err := startHerald(ctx, bin, dir, b.redis.url(), b.sizes.Concurrency, true, svc.env(minute)...)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	keys, err := actlink.ParseKeys(h.actionKeys)
	if err != nil {
		return nil, err
	}
	r := &rig{store: store.New(b.redis.Client), api: h.client()}
	owners, err := r.setUpPeople(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	log.Printf("people: %d alerts, HERALD_MINUTE=%s, watched for %s", n, minute, span)
	start, reported, err := b.postStorm(ctx, n, func(from, to int) any { return hostsDown(peopleHosts, from, to, true) },
		h.observer(r.project))
	if err != nil {
		return nil, err
	}
	log.Printf("people: reported in %s; watching until %s", reported.Sub(start).Round(time.Millisecond), start.Add(span).Format(time.TimeOnly))
	if err := sleepUntil(ctx, start.Add(span)); err != nil {
		return nil, err
	}
	h.worker.stop() // nothing more is sent: what follows reads what the span left
	alerts, err := r.alertsByHost(ctx, n)
	if err != nil {
		return nil, err
	}
	acc := &peopleAccount{store: r.store, project: r.project, keys: keys, alerts: alerts, digests: map[string][]string{}}
	targets := svc.targets(owners)
	for _, t := range targets {
		if err := acc.read(ctx, t); err != nil {
			return nil, err
		}
	}
	check, err := acc.checkDeliveries(ctx, r, targets, *peopleSample)
	if err != nil {
		return nil, err
	}
	return peopleFigures(n, minute, span, start, targets, check), nil
}

// owner is one of the project's owners, as the API made them.
type owner struct{ id, email, mobile string }

// setUpPeople creates the project, whose only enabled configuration is HOST_DOWN notifying the
// project's owners by email and text message and the CHAT_B channel, at once and again an
// hour later, and its owners.
func (r *rig) setUpPeople(ctx context.Context) ([]owner, error) {
	err := r.setUpProjectWith(ctx,
		map[string]any{"typeName": "GROUP", "role": "GROUP_OWNER", "emailEnabled": true, "smsEnabled": true, "delayMin": 0, "intervalMin": 60},
		map[string]any{"typeName": "CHAT_B", "apiToken": "xoxb-bench", "channelName": peopleChannel, "delayMin": 0, "intervalMin": 60})
	if err != nil {
		return nil, err
	}
	owners := make([]owner, peopleOwners)
	for i := range owners {
		o := owner{email: fmt.Sprintf("owner%d@example.com", i+1), mobile: fmt.Sprintf("+1555010000%d", i+1)}
		var user struct{ ID string }
		if err := r.api.call(ctx, "POST", "/users", map[string]any{"username": fmt.Sprintf("owner%d", i+1), "password": "bench-password-1",
			"emailAddress": o.email, "mobileNumber": o.mobile, "firstName": "Owner", "lastName": strconv.Itoa(i + 1),
			"roles": []map[string]string{{"groupId": r.project, "roleName": "GROUP_OWNER"}}}, http.StatusCreated, &user); err != nil {
			return nil, err
		}
		o.id = user.ID
		owners[i] = o
	}
	return owners, nil
}

// alertsByHost are the project's alerts' ids by the index of their host (people-<i>).
func (r *rig) alertsByHost(ctx context.Context, n int) (map[int]string, error) {
	out := make(map[int]string, n)
	for page := 1; ; page++ {
		var list struct {
			Results []struct {
				ID              string `json:"id"`
				HostnameAndPort string `json:"hostnameAndPort"`
			} `json:"results"`
			TotalCount int `json:"totalCount"`
		}
		if err := r.api.call(ctx, "GET", fmt.Sprintf("/groups/%s/alerts?itemsPerPage=500&pageNum=%d", r.project, page), nil, http.StatusOK, &list); err != nil {
			return nil, err
		}
		for _, a := range list.Results {
			if i, ok := hostIndex(a.HostnameAndPort); ok {
				out[i] = a.ID
			}
		}
		if len(list.Results) == 0 || page*500 >= list.TotalCount {
			break
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("the project has %d alerts of the storm's hosts, not %d", len(out), n)
	}
	return out, nil
}

// The storm's hosts and action links, as messages name them. A soft line break of
// quoted-printable ("=" at a line's end) is taken out before either is looked for.
var (
	hostName   = regexp.MustCompile(`\b` + peopleHosts + `-([0-9]+)\.example\.com`)
	actionLink = regexp.MustCompile(`/act/([A-Za-z0-9_-]+)`)
	softBreak  = strings.NewReplacer("=\r\n", "", "=\n", "")
)

// hostIndex is i of host people-<i>.example.com…
func hostIndex(s string) (int, bool) {
	m := hostName.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	i, err := strconv.Atoi(m[1])
	return i, err == nil
}

// peopleAccount reads which alerts each message accounts for.
type peopleAccount struct {
	store   *store.Store
	project string
	keys    actlink.Keys
	alerts  map[int]string      // alert ids by host index
	digests map[string][]string // the alerts each digest read so far lists, by its id
}

// read finds, for each of t's messages in the span, the alerts it accounts for and the digests
// it links to, and counts t's alerts by how many messages account for them.
func (a *peopleAccount) read(ctx context.Context, t *peopleTarget) error {
	t.named, t.lostDigests = map[string]int{}, 0
	for i := range t.messages {
		m := &t.messages[i]
		body := softBreak.Replace(m.body)
		ids := map[string]bool{}
		for _, h := range hostName.FindAllStringSubmatch(body, -1) {
			if i, err := strconv.Atoi(h[1]); err == nil && a.alerts[i] != "" {
				ids[a.alerts[i]] = true
			}
		}
		for _, l := range actionLink.FindAllStringSubmatch(body, -1) {
			c, err := a.keys.Verify(l[1], m.at)
			if err != nil {
				continue // a piece of a token, cut where a line broke
			}
			if c.Action != actlink.ViewDigest {
				ids[c.Alert] = true
				continue
			}
			listed, err := a.digest(ctx, c.Alert)
			if herald.IsNotFound(err) {
				t.lostDigests++ // its alerts are not accounted for by this message
				continue
			}
			if err != nil {
				return fmt.Errorf("%s %s: digest %s: %w", t.kind, t.name, c.Alert, err)
			}
			m.digests = append(m.digests, c.Alert)
			for _, id := range listed {
				ids[id] = true
			}
		}
		m.alerts = ids
		for id := range ids {
			t.named[id]++
		}
	}
	return nil
}

// digest is the alerts digest id's record lists: its openings (the storm resolves nothing).
func (a *peopleAccount) digest(ctx context.Context, id string) ([]string, error) {
	if ids, ok := a.digests[id]; ok {
		return ids, nil
	}
	d, err := a.store.Digest(ctx, a.project, id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range d.Entries {
		if !e.Ended {
			ids = append(ids, e.AlertID)
		}
	}
	a.digests[id] = ids
	return ids, nil
}

// received is how many messages t received until until.
func (t *peopleTarget) received(until time.Time) int {
	n := 0
	for _, m := range t.messages {
		if !m.at.After(until) {
			n++
		}
	}
	return n
}

// accounted counts t's alerts (of n) by how many of its messages account for them.
func (t *peopleTarget) accounted(n int) (once, more, none int) {
	for _, c := range t.named {
		if c == 1 {
			once++
		} else {
			more++
		}
	}
	return once, more, n - once - more
}

// deliveryCheck is, per kind, how the deliveries API's records of a sample of alerts compare
// with what each target received.
type deliveryCheck struct {
	sample int
	kinds  map[string]*recordAgreement
}

// recordAgreement counts (alert, target) pairs of a kind: the record agrees with the target
// (DELIVERED and one message names the alert; DIGESTED and the target got that digest, which
// lists it; only waiting and no message names it), disagrees, or is not in the log (a
// project's log keeps its last store.AttemptsKept attempts).
type recordAgreement struct {
	agree, disagree, notLogged int
	delivered, digested        int
	example                    string // the first disagreement
}

// attemptRecord is an attempt as the deliveries API shows it, with the digest a digested
// notice went in.
type attemptRecord struct {
	DeliveryID string `json:"deliveryId"`
	Kind       string `json:"typeName"`
	Via        string `json:"via"`
	Outcome    string `json:"outcome"`
	DigestID   string `json:"digestId"`
}

// checkDeliveries asks the deliveries API about sample alerts spread over the storm and
// compares what it records for each target with what the target received.
func (a *peopleAccount) checkDeliveries(ctx context.Context, r *rig, targets []*peopleTarget, sample int) (deliveryCheck, error) {
	check := deliveryCheck{kinds: map[string]*recordAgreement{}}
	n := len(a.alerts)
	sample = min(sample, n)
	for s := range sample {
		id := a.alerts[s*n/sample]
		var page struct{ Results []attemptRecord }
		if err := r.api.call(ctx, "GET", "/groups/"+r.project+"/alerts/"+id+"/deliveries?itemsPerPage=500", nil, http.StatusOK, &page); err != nil {
			return check, err
		}
		check.sample++
		for _, t := range targets {
			ag := check.kinds[t.kind]
			if ag == nil {
				ag = &recordAgreement{}
				check.kinds[t.kind] = ag
			}
			ag.judge(t, id, slices.DeleteFunc(slices.Clone(page.Results), func(x attemptRecord) bool { return !t.recordOf(x) }))
		}
	}
	return check, nil
}

// recordOf says whether attempt x was made for t: a person's notice by t's means (its
// delivery id ends with the person's id and the means), or a CHAT_B notice.
func (t *peopleTarget) recordOf(x attemptRecord) bool {
	if t.kind == "CHAT_B" {
		return x.Kind == "CHAT_B"
	}
	return x.Via == t.kind && strings.HasSuffix(x.DeliveryID, "-"+t.owner.id+"-"+t.kind)
}

// judge compares the attempts recorded for alert id at target t with what t received.
func (ag *recordAgreement) judge(t *peopleTarget, id string, attempts []attemptRecord) {
	if len(attempts) == 0 {
		ag.notLogged++
		return
	}
	ok, what := true, "waiting"
	for _, x := range attempts {
		switch x.Outcome {
		case store.OutcomeDelivered:
			what = "DELIVERED"
		case "DIGESTED":
			what = "DIGESTED in " + x.DigestID
		default:
			continue
		}
		if x.Outcome == store.OutcomeDelivered {
			ag.delivered++
			ok = t.named[id] == 1
		} else {
			ag.digested++
			ok = t.named[id] == 1 && t.gotDigestListing(x.DigestID, id)
		}
		break
	}
	if what == "waiting" {
		ok = t.named[id] == 0
	}
	if ok {
		ag.agree++
		return
	}
	ag.disagree++
	if ag.example == "" {
		ag.example = fmt.Sprintf("alert %s at %s: recorded %s, named by %d messages", id, t.name, what, t.named[id])
	}
}

// gotDigestListing says whether t received digest d and d lists alert id.
func (t *peopleTarget) gotDigestListing(d, id string) bool {
	for _, m := range t.messages {
		if slices.Contains(m.digests, d) && m.alerts[id] {
			return true
		}
	}
	return false
}

// peopleFigures are scenario 9's figures: per kind, each target's messages in the span, its
// requests answered 429, its first message and its alerts accounted for; and the deliveries
// API's records against what the targets received.
func peopleFigures(n int, minute, span time.Duration, start time.Time, targets []*peopleTarget, check deliveryCheck) []figure {
	covers := fmt.Sprintf("%s (%.0f Herald minutes of %s)", span, float64(span)/float64(minute), minute)
	figs := []figure{{Name: "9. storm for people: setup", Value: fmt.Sprintf("%d HOST_DOWN alerts at once; %d owners (GROUP, email and SMS) and a CHAT_B channel; "+
		"HERALD_MINUTE=%s; SMTP unlimited, SMS %s a number, chat %s a channel, beyond which 429 with Retry-After; figures over the first %s",
		n, peopleOwners, minute, smsRate, chatRate, covers)}}
	for _, kind := range []string{"EMAIL", "SMS", "CHAT_B"} {
		var ts []*peopleTarget
		for _, t := range targets {
			if t.kind == kind {
				ts = append(ts, t)
			}
		}
		p := "9. " + kind + ": "
		var counts, limited, firsts, accounts []string
		worstCount, worstLimited, worstFirst, allOnce := 0, 0, time.Duration(0), true
		for _, t := range ts {
			inSpan := t.received(start.Add(span))
			counts = append(counts, fmt.Sprintf("%s %d", t.name, inSpan))
			worstCount = max(worstCount, inSpan)
			after := max(t.limited-1, 0)
			limited = append(limited, fmt.Sprintf("%s %d of %d requests (%d after the first)", t.name, t.limited, t.requests, after))
			worstLimited = max(worstLimited, after)
			first := "none"
			if len(t.messages) > 0 {
				d := t.messages[0].at.Sub(start)
				first = d.Round(time.Millisecond).String()
				worstFirst = max(worstFirst, d)
			} else {
				worstFirst = span
			}
			firsts = append(firsts, t.name+" "+first)
			once, more, none := t.accounted(n)
			allOnce = allOnce && once == n
			account := fmt.Sprintf("%s %d once, %d in more than one message, %d in none", t.name, once, more, none)
			if t.lostDigests > 0 {
				account += fmt.Sprintf(" (%d links to a digest without a record)", t.lostDigests)
			}
			accounts = append(accounts, account)
		}
		figs = append(figs,
			figure{Name: p + "messages a target in the first " + span.String(), Value: strings.Join(counts, ", "),
				Target: fmt.Sprintf("≤ %d a target in 15 Herald minutes", peopleGoals[kind]), Result: judge(worstCount <= peopleGoals[kind])})
		if kind != "EMAIL" {
			figs = append(figs, figure{Name: p + "requests answered 429", Value: strings.Join(limited, ", "),
				Target: "0 after the first Retry-After", Result: judge(worstLimited == 0)})
		}
		figs = append(figs,
			figure{Name: p + "first message after the first report", Value: strings.Join(firsts, ", "),
				Target: "≤ " + peopleFirstLimit.String(), Result: judge(worstFirst <= peopleFirstLimit)},
			figure{Name: p + "alerts accounted for in exactly one message when the worker stopped", Value: strings.Join(accounts, "; "),
				Target: fmt.Sprintf("all %d, each once, at every target", n), Result: judge(allOnce)})
	}
	var agreement []string
	disagree := 0
	for _, kind := range []string{"EMAIL", "SMS", "CHAT_B"} {
		ag := check.kinds[kind]
		if ag == nil {
			continue
		}
		s := fmt.Sprintf("%s: %d agree (%d DELIVERED, %d DIGESTED), %d disagree, %d not in the log", kind, ag.agree, ag.delivered, ag.digested, ag.disagree, ag.notLogged)
		if ag.example != "" {
			s += " (" + ag.example + ")"
		}
		agreement = append(agreement, s)
		disagree += ag.disagree
	}
	figs = append(figs, figure{Name: fmt.Sprintf("9. deliveries API on %d alerts × every target", check.sample),
		Value:  strings.Join(agreement, "; ") + fmt.Sprintf(" (the log keeps a project's last %d attempts)", store.AttemptsKept),
		Target: "no disagreement", Result: judge(disagree == 0)})
	return figs
}

// env is Herald's settings for the services, with minute as its minute.
func (s *peopleServices) env(minute time.Duration) []string {
	return []string{"HERALD_MINUTE=" + minute.String(),
		herald.SettingMail + "=" + s.smtp.Addr, "HERALD_SMTP_FROM=herald@bench.example.com",
		"HERALD_SMS_URL=" + s.smsURL, herald.SettingSMS + "=" + smsAccount, "HERALD_SMS_TOKEN=bench-token", "HERALD_SMS_FROM=+15550109999",
		"HERALD_CHAT_B_URL=" + s.chatURL}
}
