package herald

import (
	"cmp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The words people read about an alert, one way: the notices' and the action page's.

// Subject is the short name of what the alert is about, for one line: its host, else its
// replica set, else its cluster; "" when it names none of them. An alert about a heartbeat is
// "heartbeat " and its name; an alert from Prometheus is named by its alertname (else its
// fingerprint), its instance and its summary annotation: "HighLatency on db1:9100: p99 over 1 s".
func Subject(a Alert) string {
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
func Target(a Alert) string {
	if a.Labels != nil || a.HeartbeatName != "" {
		return Subject(a)
	}
	host, cluster := cmp.Or(a.HostnameAndPort, a.HostID), cmp.Or(a.ClusterName, a.ClusterID)
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
func prometheusSubject(a Alert) string {
	s := cmp.Or(a.Labels["alertname"], "alert "+a.Fingerprint)
	if inst := a.Labels["instance"]; inst != "" {
		s += " on " + inst
	}
	if sum := a.Annotations["summary"]; sum != "" {
		s += ": " + sum
	}
	return OneLine(s)
}

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

	EventTypePrometheusAlert: "Prometheus alert",
	EventTypeHeartbeatMissed: "Heartbeat missed: no ping in time",
	EventTypeHeartbeatFailed: "Heartbeat reported a failure",
}

// EventWords says in words what an event type means ("Host down" for HOST_DOWN); an event type
// Herald does not know reads as its name made readable, and none as "Alert".
func EventWords(eventType string) string {
	if w, ok := eventWords[eventType]; ok {
		return w
	}
	return cmp.Or(Readable(eventType), "Alert")
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
func What(a Alert) string {
	if a.Labels != nil {
		return prometheusSubject(a)
	}
	s, about := EventWords(a.EventTypeName), Subject(a) != ""
	sep := ": "
	if a.MetricName != "" {
		s += ": " + a.MetricName
		if v := a.CurrentValue.Text(); v != "" {
			s += " at " + v
		}
		sep = " on "
	}
	if about {
		s += sep + Target(a)
	}
	return OneLine(s)
}

// Text is the value with its units ("512 RAW"); "" for none.
func (v *CurrentValue) Text() string {
	if v == nil {
		return ""
	}
	s := strconv.FormatFloat(v.Number, 'f', -1, 64)
	if v.Units != "" {
		s += " " + v.Units
	}
	return s
}

// OneLine folds every run of white space (newlines included) into one space: text that goes
// into a header or a one-line field cannot break out of it.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
