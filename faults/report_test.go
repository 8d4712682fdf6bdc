//go:build linux

package faults

import (
	"cmp"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fsyncWindow is what a Redis SIGKILL may take with it under appendfsync everysec: Redis
// syncs the append-only file every second, and lets a slow sync run up to one more second
// before it blocks writes. A report accepted within this window before a SIGKILL may be gone.
const fsyncWindow = 2 * time.Second

// condition is one host of a project reported down, and perhaps up again, with when the API
// accepted each report; every recipient must get its alert's open notice, and its close
// notice when it cleared.
type condition struct {
	host       string    // hostnameAndPort, unique in a scenario
	opened     time.Time // when the API accepted the report that it is down
	cleared    time.Time // when it accepted the report that it is up; zero: still down
	recipients []string  // "webhook", or email addresses of the people a GROUP reaches
}

// tally is what a scenario's receivers got, against what its conditions expect.
type tally struct {
	alerts     int      // conditions
	expected   int      // notices expected: an open and perhaps a close per condition and recipient
	lost       int      // expected notices that never arrived
	fsyncLost  int      // of those, the ones whose report was accepted within fsyncWindow before a Redis SIGKILL
	dups       int      // deliveries of a notice beyond its first
	outOfOrder int      // conditions and recipients that got the close before the open
	lone       int      // conditions and recipients that got the close and never the open
	stale      int      // open or repeat notices telling the alert CLOSED
	extra      int      // alerts beyond one per condition and recipient
	ended      int      // expected notices Herald recorded as superseded or dead letters, not lost
	retold     int      // openings or resolutions told a recipient again in another message (a mail and a digest, two digests)
	missing    []string // the first expected notices that never arrived, to dig into a finding
}

// count compares what arrived with what the conditions expect. kills are the moments Redis
// was SIGKILLed: an expected notice missing because its report was accepted just before one
// counts as fsyncLost, not lost.
// ended, when not nil, is asked (once, and only when something is missing) what Herald
// recorded as not sent on purpose.
func count(conds []condition, got []notice, kills []time.Time, ended func() map[string]bool) tally {
	type slot struct {
		open, close time.Time // first arrival of each
		seen        bool      // an opening came, answered or not
		alerts      map[string]bool
	}
	slots := map[string]*slot{}          // recipient + host
	times := map[string]int{}            // recipient + key
	msgs := map[string]map[string]bool{} // recipient + alert + event -> the messages that told it
	var tl tally
	for _, n := range got {
		rcpt := "webhook"
		if n.via == "email" {
			rcpt = n.to
		}
		if n.cut { // the target saw it; Herald, told nothing, sends it again
			if s := slots[rcpt+"|"+n.host]; s != nil && n.event == evOpen {
				s.seen = true
			} else if n.event == evOpen {
				slots[rcpt+"|"+n.host] = &slot{seen: true, alerts: map[string]bool{}}
			}
			continue
		}
		if n.told == "" {
			times[rcpt+"|"+n.key]++
		}
		if n.digest != "" {
			continue // a digest mail: its alerts come as notices told in it
		}
		if n.event == evOpen || n.event == evClose {
			k := rcpt + "|" + n.alertID + "|" + n.event
			if msgs[k] == nil {
				msgs[k] = map[string]bool{}
			}
			msgs[k][cmp.Or(n.told, n.key)] = true
		}
		if n.status == "CLOSED" && n.event != evClose {
			tl.stale++
		}
		s := slots[rcpt+"|"+n.host]
		if s == nil {
			s = &slot{alerts: map[string]bool{}}
			slots[rcpt+"|"+n.host] = s
		}
		s.alerts[n.alertID] = true
		first := func(t *time.Time) {
			if t.IsZero() || n.at.Before(*t) {
				*t = n.at
			}
		}
		switch n.event {
		case evOpen:
			first(&s.open)
			s.seen = true
		case evClose:
			first(&s.close)
		}
	}
	for _, c := range times {
		tl.dups += c - 1
	}
	for _, m := range msgs {
		tl.retold += len(m) - 1
	}
	inWindow := func(accepted time.Time) bool {
		for _, k := range kills {
			if !accepted.After(k) && k.Sub(accepted) <= fsyncWindow {
				return true
			}
		}
		return false
	}
	miss := func(what string, accepted ...time.Time) {
		tl.lost++
		if len(tl.missing) < 20 {
			tl.missing = append(tl.missing, what)
		}
		for _, a := range accepted {
			if inWindow(a) {
				tl.fsyncLost++
				return
			}
		}
	}
	var endedSet map[string]bool
	endedAs := func(host, event, rcpt string) bool {
		if endedSet == nil && ended != nil {
			endedSet = ended()
		}
		return endedSet[host+"|"+event] || endedSet[host+"|"+event+"|"+rcpt]
	}
	tl.alerts = len(conds)
	for _, c := range conds {
		for _, r := range c.recipients {
			s := slots[r+"|"+c.host]
			if s == nil {
				s = &slot{}
			}
			if len(s.alerts) > 1 {
				tl.extra += len(s.alerts) - 1
			}
			tl.expected++
			if s.open.IsZero() && endedAs(c.host, evOpen, r) {
				tl.ended++
			} else if s.open.IsZero() {
				miss(r+" open "+c.host+" reported "+c.opened.Format("15:04:05.000"), c.opened)
			}
			if c.cleared.IsZero() {
				continue
			}
			tl.expected++
			if s.close.IsZero() && endedAs(c.host, evClose, r) {
				tl.ended++
			} else if s.close.IsZero() {
				miss(r+" close "+c.host+" reported "+c.cleared.Format("15:04:05.000"), c.cleared, c.opened)
			}
			if !s.open.IsZero() && !s.close.IsZero() && s.close.Before(s.open) {
				tl.outOfOrder++
			}
			if !s.seen && !s.close.IsZero() {
				tl.lone++
			}
		}
	}
	return tl
}

// complete reports whether every expected notice arrived, or was taken by a Redis SIGKILL.
func (tl tally) complete() bool { return tl.lost == tl.fsyncLost }

func (tl tally) String() string {
	return fmt.Sprintf("%d alerts, %d notices expected: %d lost (+%d in the SIGKILL fsync window), %d duplicates, %d told again, %d out of order, %d closes alone, %d stale, %d extra alerts",
		tl.alerts, tl.expected, tl.lost-tl.fsyncLost, tl.fsyncLost, tl.dups, tl.retold, tl.outOfOrder, tl.lone, tl.stale, tl.extra)
}

// row is one scenario's line of the table.
type row struct {
	scenario string
	scale    string // the sizes it ran with
	tally
	recovery time.Duration // -1: not measured in this scenario
	figure   string        // the scenario's own figure
}

// table collects the rows of the scenarios that ran.
type table struct {
	mu   sync.Mutex
	rows []row
}

func (tb *table) add(t *testing.T, r row) {
	t.Helper()
	tb.mu.Lock()
	tb.rows = append(tb.rows, r)
	tb.mu.Unlock()
	t.Log("\n" + formatRows([]row{r}))
}

func formatRows(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %-34s %7s %6s %6s %6s %6s %6s %6s %9s  %s\n", "scenario", "scale", "alerts", "lost", "fsync", "ended", "dups", "order", "alone", "recovery", "figure")
	for _, r := range rows {
		rec := "-"
		if r.recovery >= 0 {
			rec = r.recovery.Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "%-26s %-34s %7d %6d %6d %6d %6d %6d %6d %9s  %s\n", r.scenario, r.scale, r.alerts, r.lost-r.fsyncLost, r.fsyncLost,
			r.ended, r.dups, r.outOfOrder, r.lone, rec, r.figure)
	}
	return b.String()
}

// report logs every row, and writes them to HERALD_FAULTS_REPORT when set.
func (tb *table) report(t *testing.T) {
	tb.mu.Lock()
	text := formatRows(tb.rows)
	tb.mu.Unlock()
	t.Log("fault-injection suite (lost excludes the Redis SIGKILL fsync window, counted under fsync; order = closes before their open, alone = closes whose open never came):\n" + text)
	if path := os.Getenv("HERALD_FAULTS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Errorf("write %s: %v", path, err)
		}
	}
}

// checkPromises asserts what every scenario promises: nothing lost (but what a Redis SIGKILL
// takes within its fsync window), no close before its open, no notice telling a wrong status,
// no alert told a recipient twice in different messages.
func checkPromises(t *testing.T, tl tally) {
	t.Helper()
	if n := tl.lost - tl.fsyncLost; n > 0 {
		t.Errorf("%d of %d expected notices lost, among them: %s", n, tl.expected, strings.Join(tl.missing, "; "))
	}
	if tl.outOfOrder > 0 {
		t.Errorf("%d alerts had their close delivered before their open", tl.outOfOrder)
	}
	if tl.lone > 0 {
		t.Errorf("%d alerts had their close delivered and never their open", tl.lone)
	}
	if tl.stale > 0 {
		t.Errorf("%d open or repeat notices told a CLOSED alert", tl.stale)
	}
	if tl.retold > 0 {
		t.Errorf("%d openings or resolutions were told a recipient again in another message (a mail and a digest, or two digests)", tl.retold)
	}
}
