package channels

import (
	"maps"
	"slices"
	"strconv"
	"strings"
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
// replica set, else its cluster; "" when it names none of them. An alert from Prometheus is
// named by its alertname (else its fingerprint), its instance and its summary annotation:
// "HighLatency on db1:9100: p99 over 1 s".
func Subject(a herald.Alert) string {
	if a.Labels != nil {
		return prometheusSubject(a)
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
// alert from Prometheus, its Subject.
func Target(a herald.Alert) string {
	if a.Labels != nil {
		return prometheusSubject(a)
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
