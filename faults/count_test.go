//go:build linux

package faults

import (
	"reflect"
	"testing"
	"time"
)

// The suite's counting, on notices made up for it: a harness that miscounts would hide
// findings or invent them.
func TestCount(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	hook := func(key, event, alert, host, status string, s float64) notice {
		return notice{via: "webhook", key: key, event: event, alertID: alert, host: host, status: status, at: at(s)}
	}
	mail := func(to, key, event, alert, host string, s float64) notice {
		return notice{via: "email", to: to, key: key, event: event, alertID: alert, host: host, status: "OPEN", at: at(s)}
	}
	cut := func(n notice) notice { n.cut = true; return n }
	digest := func(to, id string, s float64) notice {
		return notice{via: "email", to: to, key: id, digest: id, at: at(s)}
	}
	told := func(to, id, event, alert, host string, s float64) notice {
		status := "OPEN"
		if event == evClose {
			status = "CLOSED"
		}
		return notice{via: "email", to: to, key: id, told: id, event: event, alertID: alert, host: host, status: status, at: at(s)}
	}
	cond := func(host string, opened, cleared float64, rcpt ...string) condition {
		c := condition{host: host, opened: at(opened), recipients: rcpt}
		if cleared > 0 {
			c.cleared = at(cleared)
		}
		return c
	}
	for _, c := range []struct {
		name  string
		conds []condition
		got   []notice
		kills []time.Time
		want  tally
	}{
		{"all in order, once", []condition{cond("h1", 1, 2, "webhook"), cond("h2", 1, 0, "webhook")},
			[]notice{hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 1.1), hook("a1-0-close", evClose, "a1", "h1", "CLOSED", 2.1),
				hook("a2-0-1", evOpen, "a2", "h2", "OPEN", 1.2)},
			nil, tally{alerts: 2, expected: 3}},
		{"a duplicate, a lost close, a close first", []condition{cond("h1", 1, 2, "webhook"), cond("h2", 1, 2, "webhook")},
			[]notice{hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 1.1), hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 5),
				hook("a2-0-close", evClose, "a2", "h2", "CLOSED", 2.1), hook("a2-0-1", evOpen, "a2", "h2", "CLOSED", 3)},
			nil, tally{alerts: 2, expected: 4, lost: 1, dups: 1, outOfOrder: 1, stale: 1}},
		{"a report just before a SIGKILL is the fsync window's", []condition{cond("h1", 1, 0, "webhook"), cond("h2", 9, 0, "webhook")},
			nil, []time.Time{at(10)}, tally{alerts: 2, expected: 2, lost: 2, fsyncLost: 1}},
		{"each person of a GROUP counts", []condition{cond("h1", 1, 2, "webhook", "u1@x", "u2@x")},
			[]notice{hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 1.1), hook("a1-0-close", evClose, "a1", "h1", "CLOSED", 2.1),
				mail("u1@x", "a1-1-1-u1-EMAIL", evOpen, "a1", "h1", 1.1), mail("u1@x", "a1-1-close-u1-EMAIL", evClose, "a1", "h1", 2.2),
				mail("u2@x", "a1-1-1-u2-EMAIL", evOpen, "a1", "h1", 1.3), mail("u2@x", "a1-1-1-u2-EMAIL", evOpen, "a1", "h1", 1.4)},
			nil, tally{alerts: 1, expected: 6, lost: 1, dups: 1}},
		{"an open cut off counts as seen, not as delivered", []condition{cond("h1", 1, 2, "webhook")},
			[]notice{cut(hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 1.1)), hook("a1-0-close", evClose, "a1", "h1", "CLOSED", 2.1)},
			nil, tally{alerts: 1, expected: 2, lost: 1}},
		{"a close alone", []condition{cond("h1", 1, 2, "webhook")},
			[]notice{hook("a1-0-close", evClose, "a1", "h1", "CLOSED", 2.1)},
			nil, tally{alerts: 1, expected: 2, lost: 1, lone: 1}},
		{"a digest tells its alerts; sent twice, it is one duplicate", []condition{cond("h1", 1, 2, "u1@x"), cond("h2", 1, 0, "u1@x")},
			[]notice{mail("u1@x", "a1-1-1-u1-EMAIL", evOpen, "a1", "h1", 1.1),
				digest("u1@x", "d1", 3), told("u1@x", "d1", evClose, "a1", "h1", 3), told("u1@x", "d1", evOpen, "a2", "h2", 3),
				digest("u1@x", "d1", 9), told("u1@x", "d1", evClose, "a1", "h1", 9), told("u1@x", "d1", evOpen, "a2", "h2", 9)},
			nil, tally{alerts: 2, expected: 3, dups: 1}},
		{"an alert told in a mail and again in a digest", []condition{cond("h1", 1, 0, "u1@x")},
			[]notice{mail("u1@x", "a1-1-1-u1-EMAIL", evOpen, "a1", "h1", 1.1), digest("u1@x", "d1", 3), told("u1@x", "d1", evOpen, "a1", "h1", 3)},
			nil, tally{alerts: 1, expected: 1, retold: 1}},
		{"a resolution told in a digest before its opening", []condition{cond("h1", 1, 2, "u1@x")},
			[]notice{digest("u1@x", "d1", 3), told("u1@x", "d1", evClose, "a1", "h1", 3), mail("u1@x", "a1-1-1-u1-EMAIL", evOpen, "a1", "h1", 4)},
			nil, tally{alerts: 1, expected: 2, outOfOrder: 1}},
		{"a second alert for one condition", []condition{cond("h1", 1, 0, "webhook")},
			[]notice{hook("a1-0-1", evOpen, "a1", "h1", "OPEN", 1.1), hook("a9-0-1", evOpen, "a9", "h1", "OPEN", 1.5)},
			nil, tally{alerts: 1, expected: 1, extra: 1}},
	} {
		got := count(c.conds, c.got, c.kills, nil)
		got.missing = nil // a listing for people; the counts are what is checked
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// A person's notice recorded superseded accounts for that person's only.
func TestCountEndedPerPerson(t *testing.T) {
	c := condition{host: "h1", opened: time.Now(), recipients: []string{"u1@x", "u2@x"}}
	got := count([]condition{c}, nil, nil, func() map[string]bool { return map[string]bool{"h1|open|u1@x": true} })
	if got.ended != 1 || got.lost != 1 {
		t.Errorf("ended %d, lost %d; want 1 and 1", got.ended, got.lost)
	}
}

// What the receivers read from a webhook and an email.
func TestParseNotices(t *testing.T) {
	hdr := map[string][]string{"Idempotency-Key": {"a1-0-close"}, "X-Vendor-Event": {"alert.close"}}
	n := parseWebhook(hdr, []byte(`{"id":"a1","groupId":"g1","status":"CLOSED","hostnameAndPort":"h1:27017"}`))
	if n.key != "a1-0-close" || n.event != evClose || n.alertID != "a1" || n.group != "g1" || n.status != "CLOSED" || n.host != "h1:27017" {
		t.Errorf("webhook: %+v", n)
	}
	m := parseEmail("u1@x", map[string][]string{"Message-Id": {"<a1-1-2-u1-EMAIL@herald>"}, "Subject": {"[Herald] Open: Host down: h1:27017 (replica set rs0), project P"}})
	if m.key != "a1-1-2-u1-EMAIL" || m.event != evUpdate || m.alertID != "a1" || m.status != "OPEN" || m.host != "h1:27017" || m.to != "u1@x" {
		t.Errorf("email: %+v", m)
	}
	if m := parseEmail("u1@x", map[string][]string{"Message-Id": {"<a1-1-close-u1-EMAIL@herald>"}}); m.event != evClose {
		t.Errorf("close email: %+v", m)
	}
	d := parseEmail("u1@x", map[string][]string{"Message-Id": {"<3f2a9c0d11e4b5a6c7d8e9f0@herald>"}, "Subject": {"[Herald] 41 alerts opened in project P: Host down ×41"}})
	if d.digest != "3f2a9c0d11e4b5a6c7d8e9f0" || d.key != d.digest || d.alertID != "" || d.event != "" || d.host != "" {
		t.Errorf("digest email: %+v", d)
	}
	one := parseEmail("u1@x", map[string][]string{"Message-Id": {"<3f2a9c0d11e4b5a6c7d8e9f0@herald>"}, "Subject": {"[Herald] Resolved: Host down: h1:27017 (replica set rs0), project P"}})
	if one.digest != "3f2a9c0d11e4b5a6c7d8e9f0" || one.event != evClose || one.host != "h1:27017" || one.alertID != "" {
		t.Errorf("digest of one notice: %+v", one)
	}
}
