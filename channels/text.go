package channels

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// The short texts every sender writes about an alert, one way.

// Title is one line naming status, event type and what the alert is about (the project when
// it names nothing else): "OPEN HOST_DOWN: db1.example.com:27017".
func Title(a herald.Alert) string {
	subject := herald.Subject(a)
	if subject == "" {
		subject = cmp.Or(herald.OneLine(a.GroupID), "unknown")
		if a.GroupID != "" {
			subject = "project " + subject
		}
	}
	return herald.OneLine(cmp.Or(a.Status, "UNKNOWN") + " " + EventType(a) + ": " + subject)
}

// LabelList is a label set on one line, in name order: `alertname="X", severity="critical"`.
func LabelList(ls herald.Labels) string {
	parts := make([]string, 0, len(ls))
	for _, n := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, n+"="+strconv.Quote(ls[n]))
	}
	return herald.OneLine(strings.Join(parts, ", "))
}

// headlines are what a chat message says happened, by event.
var headlines = map[Event]string{
	EventOpen:        "Alert opened",
	EventUpdate:      "Alert still open",
	EventClose:       "Alert resolved",
	EventAcknowledge: "Alert acknowledged",
	EventCancel:      "Alert cancelled",
}

// Headline says in a few words what happened ("Alert resolved"); ok is false for an event
// Herald does not send.
func Headline(ev Event) (string, bool) {
	h, ok := headlines[ev]
	return h, ok
}

// EventType is the alert's event type for a text, "(no event type)" when it has none.
func EventType(a herald.Alert) string {
	return cmp.Or(herald.OneLine(a.EventTypeName), "(no event type)")
}

// Status names what a delivery tells: ACKNOWLEDGED for an acknowledgement, else the alert's
// status, else what the event says.
func Status(d Delivery) string {
	if d.Event == EventAcknowledge {
		return "ACKNOWLEDGED"
	}
	if s := herald.OneLine(d.Alert.Status); s != "" {
		return s
	}
	switch d.Event {
	case EventClose:
		return herald.StatusClosed
	case EventCancel:
		return herald.StatusCancelled
	}
	return herald.StatusOpen
}

// Truncate cuts s to at most n characters (runes), ending a cut text with ellipsis.
func Truncate(s string, n int, ellipsis string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-utf8.RuneCountInString(ellipsis)]) + ellipsis
}

// The words people read at 3 a.m.: what happened, where, since when, and what they can do.

// Where names the alert's project for people: its name and its organization's ("Orders
// (organization Acme)"), else its id when the dispatcher found no name.
func Where(d Delivery) string {
	p := herald.OneLine(d.Project)
	if p == "" {
		p = herald.OneLine(d.Alert.GroupID)
	}
	if org := herald.OneLine(d.Org); org != "" && p != "" {
		p += " (organization " + org + ")"
	}
	return p
}

// StatusWords names what a delivery tells in one word for people: Open, Acknowledged,
// Resolved, Cancelled (Status made readable).
func StatusWords(d Delivery) string {
	if s := Status(d); s != herald.StatusClosed {
		return herald.Readable(s)
	}
	return "Resolved"
}

// aYear is where durations stop being counted: anything longer is "over a year".
const aYear = 365 * 24 * time.Hour

// Duration says how long d is, for people: "under a minute", "14 min", "2 h 5 min", "3 days",
// "over a year". A negative d (a time in the future) is "".
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return ""
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		s := strconv.Itoa(int(d/time.Hour)) + " h"
		if m := int(d%time.Hour) / int(time.Minute); m != 0 {
			s += " " + strconv.Itoa(m) + " min"
		}
		return s
	case d < aYear:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return "over a year"
}

// Clock says when t was for someone reading at now, in UTC: "03:12 UTC" the same day, "21 Nov
// 03:12 UTC" the same year, "21 Nov 2025 03:12 UTC" otherwise.
func Clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	switch {
	case t.Year() != now.Year():
		return t.Format("2 Jan 2006 15:04 UTC")
	case t.YearDay() != now.YearDay():
		return t.Format("2 Jan 15:04 UTC")
	}
	return t.Format("15:04 UTC")
}

// Since says since when the alert has been open and for how long at now ("since 03:12 UTC, 14
// min"), or, once it is resolved, how long it lasted ("lasted 14 min, 03:12 UTC to 03:26 UTC"). Only
// the alert's own times are used; "" when it has no creation time.
func Since(a herald.Alert, now time.Time) string {
	if a.Created.IsZero() {
		return ""
	}
	if !a.Resolved.IsZero() {
		s := cmp.Or(Duration(a.Resolved.Sub(a.Created.Time)), "under a minute")
		return "lasted " + s + ", " + Clock(a.Created.Time, now) + " to " + Clock(a.Resolved.Time, now)
	}
	s := "since " + Clock(a.Created.Time, now)
	if d := Duration(now.Sub(a.Created.Time)); d != "" {
		s += ", " + d
	}
	return s
}

// Acknowledgement says until when and by whom the alert is acknowledged at now ("until 07:12
// UTC by alice@example.com: rebooting"); "" when it is not (or no longer) acknowledged.
func Acknowledgement(a herald.Alert, now time.Time) string {
	if a.AcknowledgedUntil.IsZero() || !a.AcknowledgedUntil.After(now) {
		return ""
	}
	s := "until " + Clock(a.AcknowledgedUntil.Time, now)
	if who := herald.OneLine(a.AcknowledgingUsername); who != "" {
		s += " by " + who
	}
	if c := herald.OneLine(a.AcknowledgementComment); c != "" {
		s += ": " + c
	}
	return s
}

// Link is one action a notice offers: what it says, and where it goes.
type Link struct{ Label, URL string }

// Links are the links a delivery offers, in the order a notice shows them: the actions first,
// then view. None when the delivery has none.
func Links(l herald.ActionLinks) []Link {
	var out []Link
	for _, k := range []Link{
		{"Acknowledge for 1 hour", l.Acknowledge1h},
		{"Acknowledge for 4 hours", l.Acknowledge4h},
		{"Withdraw the acknowledgement", l.Unacknowledge},
		{"View the alert", l.View},
	} {
		if k.URL != "" {
			out = append(out, k)
		}
	}
	return out
}

// Now is where a sender takes the time it says "how long" against: nil is the system clock.
type Now func() time.Time

// Time is the time now.
func (n Now) Time() time.Time {
	if n == nil {
		return time.Now()
	}
	return n()
}
