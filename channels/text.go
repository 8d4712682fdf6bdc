package channels

import (
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald"
)

// The short texts every sender writes about an alert, one way.

// Title is one line naming status, event type and target: "OPEN HOST_DOWN: db1.example.com:27017".
func Title(a herald.Alert) string {
	status, ev := a.Status, a.EventTypeName
	if status == "" {
		status = "UNKNOWN"
	}
	if ev == "" {
		ev = "(no event type)"
	}
	return OneLine(status + " " + ev + ": " + Subject(a))
}

// Subject is what the alert is about: the host, else the replica set, else the cluster, else
// the project.
func Subject(a herald.Alert) string {
	for _, s := range []string{a.HostnameAndPort, a.HostID, a.ReplicaSetName, a.ClusterName, a.ClusterID} {
		if s != "" {
			return s
		}
	}
	if a.GroupID != "" {
		return "project " + a.GroupID
	}
	return "unknown target"
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
