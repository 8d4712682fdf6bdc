package channels

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// The short texts every sender writes about an alert, one way.

// Title is one line naming status, event type and what the alert is about (the project when
// it names nothing else): "OPEN HOST_DOWN: db1.example.com:27017".
func Title(a herald.Alert) string {
	subject := Subject(a)
	if subject == "" {
		subject = Or(OneLine(a.GroupID), "unknown")
		if a.GroupID != "" {
			subject = "project " + subject
		}
	}
	return OneLine(Or(a.Status, "UNKNOWN") + " " + EventType(a) + ": " + subject)
}

// Subject is the short name of what the alert is about, for one line: its host, else its
// replica set, else its cluster; "" when it names none of them. An alert about a heartbeat is
// "heartbeat " and its name; an alert from Prometheus is named by its alertname (else its
// fingerprint), its instance and its summary annotation: "HighLatency on db1:9100: p99 over 1 s".
func Subject(a herald.Alert) string {
	if a.Labels != nil {
		return prometheusSubject(a)
	}
	if a.HeartbeatName != "" {
		return OneLine("heartbeat " + a.HeartbeatName)
	}
	for _, s := range []string{a.HostnameAndPort, a.HostID, a.ReplicaSetName, a.ClusterName, a.ClusterID} {
		if s = OneLine(s); s != "" {
			return s
		}
	}
	return ""
}

// Target is what the alert is about with its context, for a message people read: its host (and
// replica set), else its replica set, else its cluster (and shard), else its project; for an
// alert from Prometheus or about a heartbeat, its Subject.
func Target(a herald.Alert) string {
	if a.Labels != nil || a.HeartbeatName != "" {
		return Subject(a)
	}
	host, cluster := Or(a.HostnameAndPort, a.HostID), Or(a.ClusterName, a.ClusterID)
	var s string
	switch {
	case host != "" && a.ReplicaSetName != "":
		s = host + " (replica set " + a.ReplicaSetName + ")"
	case host != "":
		s = host
	case a.ReplicaSetName != "":
		s = "replica set " + a.ReplicaSetName
	case cluster != "" && a.ShardName != "":
		s = "cluster " + cluster + ", shard " + a.ShardName
	case cluster != "":
		s = "cluster " + cluster
	case a.GroupID != "":
		s = "project " + a.GroupID
	default:
		s = "(unknown target)"
	}
	return OneLine(s)
}

// prometheusSubject is the Subject of an alert from Prometheus.
func prometheusSubject(a herald.Alert) string {
	s := Or(a.Labels["alertname"], "alert "+a.Fingerprint)
	if inst := a.Labels["instance"]; inst != "" {
		s += " on " + inst
	}
	if sum := a.Annotations["summary"]; sum != "" {
		s += ": " + sum
	}
	return OneLine(s)
}

// LabelList is a label set on one line, in name order: `alertname="X", severity="critical"`.
func LabelList(ls herald.Labels) string {
	parts := make([]string, 0, len(ls))
	for _, n := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, n+"="+strconv.Quote(ls[n]))
	}
	return OneLine(strings.Join(parts, ", "))
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
func EventType(a herald.Alert) string { return Or(OneLine(a.EventTypeName), "(no event type)") }

// Status names what a delivery tells: ACKNOWLEDGED for an acknowledgement, else the alert's
// status, else what the event says.
func Status(d Delivery) string {
	if d.Event == EventAcknowledge {
		return "ACKNOWLEDGED"
	}
	if s := OneLine(d.Alert.Status); s != "" {
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

// Or is s, or def when s is empty.
func Or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// OneLine folds every run of white space (newlines included) into one space: text that goes
// into a header or a one-line field cannot break out of it.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s to at most n characters (runes), ending a cut text with ellipsis.
func Truncate(s string, n int, ellipsis string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-utf8.RuneCountInString(ellipsis)]) + ellipsis
}

// The words people read at 3 a.m.: what happened, where, since when, and what they can do.

// eventWords say in words what each event type Herald knows means (the catalogue,
// herald.EventTypeNames). An event type not here reads as its name made readable (Readable).
var eventWords = map[string]string{
	"HOST_DOWN":                  "Host down",
	"HOST_EXPOSED":               "Host exposed to the internet",
	"HOST_HAS_INDEX_SUGGESTIONS": "Host has index suggestions",
	"HOST_NOT_ENOUGH_DISK_SPACE": "Host low on disk space",
	"HOST_RECOVERING":            "Host recovering",
	"HOST_ROLLBACK":              "Host rolled back writes",
	"HOST_SSL_CERTIFICATE_STALE": "Host TLS certificate stale",
	"OUTSIDE_METRIC_THRESHOLD":   "Metric outside its threshold",

	"MEMBER_ADDED":               "Replica set member added",
	"MEMBER_REMOVED":             "Replica set member removed",
	"NO_PRIMARY":                 "No primary",
	"PRIMARY_ELECTED":            "New primary elected",
	"REPLICA_SET":                "Replica set alert",
	"RS_BIND_ERROR":              "Replica set member cannot bind",
	"TOO_FEW_HEALTHY_MEMBERS":    "Too few healthy members",
	"TOO_MANY_ELECTIONS":         "Too many elections",
	"TOO_MANY_UNHEALTHY_MEMBERS": "Too many unhealthy members",

	"CLUSTER_MONGOS_IS_MISSING": "No mongos running",
	"SHARD_REMOVED":             "Shard removed",
	"SHARDED_CLUSTER":           "Sharded cluster alert",

	"AUTOMATION_AGENT_DOWN":           "Automation agent down",
	"AUTOMATION_AGENT_VERSION_BEHIND": "Automation agent out of date",
	"BACKUP_AGENT_DOWN":               "Backup agent down",
	"BACKUP_AGENT_VERSION_BEHIND":     "Backup agent out of date",
	"MONITORING_AGENT_DOWN":           "Monitoring agent down",
	"MONITORING_AGENT_VERSION_BEHIND": "Monitoring agent out of date",

	"BACKUP":                            "Backup alert",
	"BACKUP_IN_UNEXPECTED_STATE":        "Backup in an unexpected state",
	"BACKUP_TOO_MANY_RETRIES":           "Backup failing after many retries",
	"BAD_CLUSTERSHOTS":                  "Cluster snapshots failing",
	"INCONSISTENT_BACKUP_CONFIGURATION": "Backup configuration inconsistent",
	"OPLOG_BEHIND":                      "Backup oplog behind",
	"RESYNC_PERFORMED":                  "Backup resync performed",
	"RESYNC_REQUIRED":                   "Backup needs a resync",

	"AUTOMATION_CONFIG_PUBLISHED_AUDIT": "Automation configuration published",
	"DATA_EXPLORER":                     "Data explorer accessed",
	"DATA_EXPLORER_CRUD":                "Data changed through the data explorer",
	"JOINED_GROUP":                      "User joined the project",
	"REMOVED_FROM_GROUP":                "User removed from the project",
	"USER_ROLES_CHANGED_AUDIT":          "User roles changed",
	"USERS_AWAITING_APPROVAL":           "Users awaiting approval",

	herald.EventTypePrometheusAlert: "Prometheus alert",
	herald.EventTypeHeartbeatMissed: "Heartbeat missed: no ping in time",
	herald.EventTypeHeartbeatFailed: "Heartbeat reported a failure",
}

// EventWords says in words what an event type means ("Host down" for HOST_DOWN); an event type
// Herald does not know reads as its name made readable, and none as "Alert".
func EventWords(eventType string) string {
	if w, ok := eventWords[eventType]; ok {
		return w
	}
	return Or(Readable(eventType), "Alert")
}

// Readable makes an upper-case token a phrase: "OUTSIDE_METRIC_THRESHOLD" reads "Outside
// metric threshold".
func Readable(token string) string {
	s := OneLine(strings.ToLower(strings.ReplaceAll(token, "_", " ")))
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return ""
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// What says what happened, on one line: the event type in words and what it is about ("Host
// down: db1.example.com:27017 (replica set rs0)"); a metric alert names its metric and value;
// an alert from Prometheus keeps its alertname, instance and summary (Subject).
func What(a herald.Alert) string {
	if a.Labels != nil {
		return prometheusSubject(a)
	}
	s, about := EventWords(a.EventTypeName), Subject(a) != ""
	sep := ": "
	if a.MetricName != "" {
		s += ": " + a.MetricName
		if v := value(a); v != "" {
			s += " at " + v
		}
		sep = " on "
	}
	if about {
		s += sep + Target(a)
	}
	return OneLine(s)
}

// value is the alert's current value with its units ("512 RAW"), "" when it has none.
func value(a herald.Alert) string {
	if a.CurrentValue == nil {
		return ""
	}
	v := strconv.FormatFloat(a.CurrentValue.Number, 'f', -1, 64)
	if a.CurrentValue.Units != "" {
		v += " " + a.CurrentValue.Units
	}
	return v
}

// Where names the alert's project for people: its name and its organization's ("Orders
// (organization Acme)"), else its id when the dispatcher found no name.
func Where(d Delivery) string {
	p := OneLine(d.Project)
	if p == "" {
		p = OneLine(d.Alert.GroupID)
	}
	if org := OneLine(d.Org); org != "" && p != "" {
		p += " (organization " + org + ")"
	}
	return p
}

// StatusWords names what a delivery tells in one word for people: Open, Acknowledged,
// Resolved, Cancelled (Status made readable).
func StatusWords(d Delivery) string {
	if s := Status(d); s != herald.StatusClosed {
		return Readable(s)
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
		s := Or(Duration(a.Resolved.Sub(a.Created.Time)), "under a minute")
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
	if who := OneLine(a.AcknowledgingUsername); who != "" {
		s += " by " + who
	}
	if c := OneLine(a.AcknowledgementComment); c != "" {
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
