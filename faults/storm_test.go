//go:build linux

package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Digest storms: many alerts for the members of a project, reached by email, so that each
// address takes three mails one by one and then digests (README "What a person receives in a
// storm"), with a fault while digests are claimed and sent. Each alert must be told each
// address exactly once (in a mail of its own, or listed in a digest that address received),
// never its resolution before its opening, and every digest's alerts recorded DIGESTED with
// its id.

// Digests at the suite's pace: a Herald minute of 1 s, a window of 4 of them.
const (
	stormMinute = time.Second
	stormWindow = 4
	// stormSMTPDelay is how long the SMTP server takes to accept a mail: long enough for a
	// fault to find a digest being sent.
	stormSMTPDelay = 300 * time.Millisecond
	// resendSlack bounds the at-least-once window around a fault: a mail whose sender could not
	// record it as sent (it was killed, or Redis stopped) is sent again, and its first copy
	// arrived at most this long before the fault began or after it ended.
	resendSlack = 2 * time.Second
)

// storm is a digest storm's cluster, its load and its projects.
type storm struct {
	c      *cluster
	l      *load
	ps     []project
	faults []span // when each fault began and ended
	hit    int    // faults that found a digest being sent
}

type span struct{ from, to time.Time }

// digestStorm starts a cluster of two workers with digests at the storm's pace, and the
// scale's projects, whose members are reached by email (a GROUP notification: at once, and
// no repeat within the scenario).
func digestStorm(t *testing.T, sc scale, name string) *storm {
	t.Helper()
	c := startCluster(t, clusterSpec{workers: 2, schedulers: 1, minute: stormMinute,
		env: []string{fmt.Sprintf("HERALD_DIGEST_WINDOW=%d", stormWindow)}})
	c.smtp.setDelay(stormSMTPDelay)
	ps := c.projects(t, name, sc.stormProjects, sc.stormHosts, sc.stormMembers, groupByEmail(0, 100000))
	for i := range ps {
		ps[i].recipients = slices.DeleteFunc(ps[i].recipients, func(r string) bool { return r == "webhook" })
	}
	return &storm{c: c, l: newLoad(), ps: ps}
}

// run reports the storm and injects faults: every project's hosts go down in four waves, half
// a window apart, and each wave's hosts come up three waves later (most openings told by
// then, in a mail or a digest). fault(k) runs once a digest
// mail is being accepted (or after 15 s without one) and returns when its fault began and
// ended. run returns when the last fault ended or the last report was accepted, the later.
func (s *storm) run(t *testing.T, faults int, fault func(k int, sending map[int][]string) span) time.Time {
	t.Helper()
	const waves, lag = 4, 3
	loadDone := make(chan time.Time, 1)
	go func() {
		for k := range waves + lag {
			var wg sync.WaitGroup
			for _, p := range s.ps {
				batch := func(w int) []string {
					n := len(p.hosts)
					return p.hosts[w*n/waves : (w+1)*n/waves]
				}
				if k < waves {
					wg.Go(func() { s.l.report(t, p.g, batch(k), true, p.recipients...) })
				}
				if k >= lag {
					wg.Go(func() { s.l.report(t, p.g, batch(k-lag), false) })
				}
			}
			wg.Wait()
			time.Sleep(stormWindow * stormMinute / 2)
		}
		loadDone <- time.Now()
	}()
	var last time.Time
	for k := range faults {
		var sending map[int][]string
		if pollUntil(15*time.Second, func() (bool, string) {
			sending = s.c.smtp.sending(s.c.workerPids())
			for _, ids := range sending {
				if slices.ContainsFunc(ids, isDigestID) {
					return true, ""
				}
			}
			return false, ""
		}) {
			s.hit++
		}
		f := fault(k, sending)
		s.faults = append(s.faults, f)
		last = f.to
		time.Sleep(time.Second) // the next fault finds other digests
	}
	return latest(last, <-loadDone)
}

// isDigestID says whether a Message-ID's left part is a digest's id (a notice's has dashes).
func isDigestID(id string) bool { return id != "" && !strings.Contains(id, "-") }

// workerPids are the pids of the running workers, in the order of c.workers.
func (c *cluster) workerPids() []int {
	pids := make([]int, len(c.workers))
	for i, w := range c.workers {
		pids[i] = w.cmd.Process.Pid
	}
	return pids
}

// check waits for every alert to be accounted for, checks the promises and the digests, and
// returns the scenario's row (its figure begins with what is checked here).
func (s *storm) check(t *testing.T, sc scale, from time.Time, within time.Duration) (row, string) {
	t.Helper()
	c := s.c
	done, tl := awaitAll(c, nil, s.l, nil, within, sc.settle)
	checkRoles(t, c)
	checkPromises(t, tl)
	got := received(c, nil)
	mails, digests, resent, outside := s.resends(got)
	if outside > 0 {
		t.Errorf("%d mails were delivered again outside the at-least-once window (first copy more than %s from a fault)", outside, resendSlack)
	}
	unrecorded, late, unsent, reasons := s.crossCheck(got)
	if unrecorded > 0 || unsent > 0 {
		t.Errorf("digests and their DIGESTED records differ: %d alerts told in a digest without their record, %d records naming a digest that did not tell them",
			unrecorded, unsent)
	}
	r := row{scale: fmt.Sprintf("%dx%d hosts, GROUP %d people", sc.stormProjects, sc.stormHosts, sc.stormMembers), tally: tl,
		recovery: since(from, done)}
	figure := fmt.Sprintf("%d notices in %d mails, %d of them digests; %d resends of a Message-ID (%d digests), %d outside a fault's window; %d told again; %d told in a digest recorded SUPERSEDED (its sender died, its alert closed before it ran again); %d of %d faults hit a digest being sent",
		tl.expected, mails, digests, tl.dups, resent, outside, tl.retold, late, s.hit, len(s.faults))
	if len(reasons) > 0 {
		figure += "; superseded: " + strings.Join(reasons, ", ")
	}
	return r, figure
}

// resends counts the distinct mails of got and the digests among them, the digests delivered
// again, and the mails delivered again whose first copy arrived outside every fault's
// at-least-once window.
func (s *storm) resends(got []notice) (mails, digests, resent, outside int) {
	first := map[string]time.Time{}
	times := map[string]int{}
	for _, n := range got {
		if n.via != "email" || n.told != "" {
			continue
		}
		k := n.to + "|" + n.key
		if at, ok := first[k]; !ok || n.at.Before(at) {
			first[k] = n.at
		}
		if times[k]++; times[k] == 1 && n.digest != "" {
			digests++
		}
	}
	for k, n := range times {
		if n < 2 {
			continue
		}
		if isDigestID(k[strings.IndexByte(k, '|')+1:]) {
			resent++
		}
		if !s.inWindow(first[k]) {
			outside++
		}
	}
	return len(times), digests, resent, outside
}

// crossCheck compares the alerts the digests told (by their records) with the DIGESTED
// attempts the API lists. unrecorded are told without a record naming their digest, but for
// those of a digest first delivered within a fault's window and recorded SUPERSEDED since
// (late: its sender died before recording it, and its alert closed before it ran again);
// unsent are records naming a digest that did not tell their alert to anyone; reasons count
// the SUPERSEDED records by event and reason.
func (s *storm) crossCheck(got []notice) (unrecorded, late, unsent int, reasons []string) {
	told := map[string]bool{}       // alert|event|digest
	single := map[string]bool{}     // digests of one notice, sent as that notice: no record
	first := map[string]time.Time{} // digest -> its first delivery
	for _, n := range got {
		switch {
		case n.told != "":
			told[n.alertID+"|"+n.event+"|"+n.told] = true
		case n.digest != "" && n.host != "":
			single[n.digest] = true
		}
		if at, ok := first[n.digest]; n.digest != "" && n.told == "" && (!ok || n.at.Before(at)) {
			first[n.digest] = n.at
		}
	}
	recorded, superseded := map[string]bool{}, map[string]bool{}
	why := map[string]int{}
	for _, g := range s.c.groups {
		for _, a := range append(s.c.attempts(g), s.c.digestRecords(g)...) {
			event := evOpen
			if parts := strings.Split(a.DeliveryID, "-"); len(parts) > 2 && parts[2] == "close" {
				event = evClose
			}
			switch a.Outcome {
			case store.OutcomeDigested:
				recorded[a.AlertID+"|"+event+"|"+a.DigestID] = true
			case store.OutcomeSuperseded:
				superseded[a.AlertID+"|"+event] = true
				why[event+": "+a.Reason]++
			}
		}
	}
	for k := range told {
		i := strings.LastIndexByte(k, '|')
		switch d := k[i+1:]; {
		case recorded[k] || single[d]:
		case superseded[k[:i]] && s.inWindow(first[d]):
			late++
		default:
			unrecorded++
		}
	}
	for k := range recorded {
		if !told[k] {
			unsent++
		}
	}
	for w, n := range why {
		reasons = append(reasons, fmt.Sprintf("%s ×%d", w, n))
	}
	slices.Sort(reasons)
	return unrecorded, late, unsent, reasons
}

// inWindow says whether a mail delivered at is within a fault's at-least-once window.
func (s *storm) inWindow(at time.Time) bool {
	return slices.ContainsFunc(s.faults, func(f span) bool {
		return !at.Before(f.from.Add(-resendSlack)) && !at.After(f.to.Add(resendSlack))
	})
}

// toldInDigests are the alerts the digest mails among got told, a notice each, read once per
// digest from its record (what its link's page lists); a digest of one notice is that
// notice, its alert found by its host. A digest not readable yet (Redis stopped) is read on a
// later call.
func (c *cluster) toldInDigests(got []notice) []notice {
	var out []notice
	for _, n := range got {
		if n.digest == "" {
			continue
		}
		told, ok := c.digests[n.digest]
		if !ok {
			if told, ok = c.readDigest(n); !ok {
				continue
			}
			c.digests[n.digest] = told
		}
		for _, e := range told {
			e.to, e.at = n.to, n.at
			out = append(out, e)
		}
	}
	return out
}

// readDigest reads what digest mail n told: its record's entries, or the one notice it is.
func (c *cluster) readDigest(n notice) ([]notice, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st := store.New(c.redis.ctl)
	for _, g := range c.groups {
		if n.host != "" { // a digest of one notice: no record
			for id, host := range c.alertHosts(g) {
				if host == n.host {
					return []notice{{via: "email", key: n.digest, told: n.digest, event: n.event, status: n.status, alertID: id, host: host}}, true
				}
			}
			continue
		}
		d, err := st.Digest(ctx, g, n.digest)
		if herald.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, false
		}
		ids := make([]string, len(d.Entries))
		for i, e := range d.Entries {
			ids[i] = e.AlertID
		}
		alerts, err := st.AlertsByID(ctx, g, ids)
		if err != nil {
			return nil, false
		}
		hosts := map[string]string{}
		for _, a := range alerts {
			hosts[a.ID] = a.HostnameAndPort
		}
		var out []notice
		for _, e := range d.Entries {
			t := notice{via: "email", key: n.digest, told: n.digest, event: evOpen, status: "OPEN", alertID: e.AlertID, host: hosts[e.AlertID]}
			if e.Ended {
				t.event, t.status = evClose, "CLOSED"
			}
			out = append(out, t)
		}
		return out, true
	}
	return nil, false
}

// Redis stopped (SIGSTOP) for 8 s, past go-redis' timeouts, while digests are being claimed
// and sent, as many times as the scale says.
func redisPauseDigest(t *testing.T, sc scale) row {
	const pause = 8 * time.Second
	s := digestStorm(t, sc, "pstorm")
	from := s.run(t, sc.stormPauses, func(int, map[int][]string) span {
		stopped := time.Now()
		s.c.redis.freeze(pause)
		return span{stopped, time.Now()}
	})
	r, figure := s.check(t, sc, from, 90*time.Second)
	r.scale += fmt.Sprintf(", %d×SIGSTOP %s", sc.stormPauses, pause)
	r.figure = figure + "; " + s.c.queued()
	return r
}

// The workers SIGKILLed, one at a time, while digests are being built and sent (the one
// sending a digest, else each in turn), and started again at once.
func workerSIGKILLDigest(t *testing.T, sc scale) row {
	s := digestStorm(t, sc, "kstorm")
	from := s.run(t, sc.stormKills, func(k int, sending map[int][]string) span {
		victim := k % len(s.c.workers)
		for i, pid := range s.c.workerPids() {
			if slices.ContainsFunc(sending[pid], isDigestID) {
				victim = i
			}
		}
		killed := time.Now()
		s.c.replaceWorker(victim, syscall.SIGKILL)
		return span{killed, killed}
	})
	r, figure := s.check(t, sc, from, killedTaskTarget+30*time.Second)
	if r.recovery < 0 || r.recovery > killedTaskTarget {
		t.Errorf("every alert was accounted for %s after the last kill or report, want within %s", r.recovery, killedTaskTarget)
	}
	r.scale += fmt.Sprintf(", %d kills", sc.stormKills)
	r.figure = figure
	return r
}
