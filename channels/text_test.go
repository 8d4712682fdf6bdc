package channels

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
)

func TestDurationIsCapped(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Hour:                      "",
		0:                               "under a minute",
		59 * time.Second:                "under a minute",
		14*time.Minute + 30*time.Second: "14 min",
		2*time.Hour + 5*time.Minute:     "2 h 5 min",
		3 * time.Hour:                   "3 h",
		47 * time.Hour:                  "47 h",
		72 * time.Hour:                  "3 days",
		400 * 24 * time.Hour:            "over a year",
		time.Duration(1<<63 - 1):        "over a year",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestSince(t *testing.T) {
	now := time.Date(2026, 11, 21, 3, 26, 30, 0, time.UTC)
	open := herald.Alert{Created: channelstest.At("2026-11-21T03:12:00Z")}
	closed := open
	closed.Resolved = channelstest.At("2026-11-21T03:26:00Z")
	for _, c := range []struct {
		name string
		a    herald.Alert
		want string
	}{
		{"open today", open, "since 03:12 UTC, 14 min"},
		{"resolved", closed, "lasted 14 min, 03:12 UTC to 03:26 UTC"},
		{"open since yesterday", herald.Alert{Created: channelstest.At("2026-11-20T22:00:00Z")}, "since 20 Nov 22:00 UTC, 5 h 26 min"},
		{"far in the past", herald.Alert{Created: channelstest.At("1970-01-01T00:00:00Z")}, "since 1 Jan 1970 00:00 UTC, over a year"},
		{"in the future", herald.Alert{Created: channelstest.At("2999-01-01T00:00:00Z")}, "since 1 Jan 2999 00:00 UTC"},
		{"resolved before it opened", herald.Alert{Created: closed.Resolved, Resolved: open.Created}, "lasted under a minute, 03:26 UTC to 03:12 UTC"},
		{"no times", herald.Alert{}, ""},
	} {
		if got := Since(c.a, now); got != c.want {
			t.Errorf("%s: Since = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAcknowledgement(t *testing.T) {
	now := time.Date(2026, 11, 21, 3, 26, 0, 0, time.UTC)
	a := herald.Alert{AcknowledgedUntil: channelstest.At("2026-11-21T07:12:00Z"), AcknowledgingUsername: "alice@example.com",
		AcknowledgementComment: "rebooting\nsoon"}
	if got, want := Acknowledgement(a, now), "until 07:12 UTC by alice@example.com: rebooting soon"; got != want {
		t.Errorf("Acknowledgement = %q, want %q", got, want)
	}
	if got := Acknowledgement(a, now.Add(5*time.Hour)); got != "" {
		t.Errorf("an acknowledgement that ended reads %q", got)
	}
}

func TestNoticeSaysWhatWhereSinceAndLinks(t *testing.T) {
	now := time.Date(2026, 11, 21, 18, 55, 0, 0, time.UTC)
	links := herald.ActionLinks{View: "https://h.example/act/v", Acknowledge1h: "https://h.example/act/a1", Acknowledge4h: "https://h.example/act/a4"}
	d := Delivery{Event: EventOpen, Alert: channelstest.HostAlert(), Project: "Orders", Org: "Acme", Links: links}
	n, ok := NoticeOf(d, now)
	if !ok {
		t.Fatal("no notice")
	}
	want := `Alert opened: Host down: db1.example.com:27017 (replica set rs0)
Project: Orders (organization Acme)
Open since 18:40 UTC, 14 min

Acknowledge for 1 hour: https://h.example/act/a1
Acknowledge for 4 hours: https://h.example/act/a4
View the alert: https://h.example/act/v

` + Summary(d.Alert)
	if got := n.Text(d.Alert); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
	if got, want := n.Subject(), "Open: Host down: db1.example.com:27017 (replica set rs0), project Orders (organization Acme)"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}

	d.Event, d.Project, d.Org, d.Links = EventAcknowledge, "", "", herald.ActionLinks{View: "v", Unacknowledge: "u"}
	d.Alert.AcknowledgedUntil, d.Alert.AcknowledgingUsername = channelstest.At("2026-11-21T19:55:00Z"), "bob"
	n, _ = NoticeOf(d, now)
	if got, want := strings.Join(n.Lines(), "\n"), `Alert acknowledged: Host down: db1.example.com:27017 (replica set rs0)
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Open since 18:40 UTC, 14 min
Acknowledged until 19:55 UTC by bob`; got != want {
		t.Errorf("Lines:\n%s\nwant:\n%s", got, want)
	}
	if got := Links(d.Links); len(got) != 2 || got[0] != (Link{"Withdraw the acknowledgement", "u"}) || got[1] != (Link{"View the alert", "v"}) {
		t.Errorf("Links = %v", got)
	}

	d.Event, d.Alert = EventClose, channelstest.Closed(channelstest.HostAlert(), "2026-11-21T18:52:55Z")
	n, _ = NoticeOf(d, now)
	if got, want := n.Lines()[2], "Resolved, lasted 12 min, 18:40 UTC to 18:52 UTC"; got != want {
		t.Errorf("resolution says %q, want %q", got, want)
	}
	if _, ok := NoticeOf(Delivery{Event: "alert.bogus"}, now); ok {
		t.Error("a notice of an unknown event")
	}
}
