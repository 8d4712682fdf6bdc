package channels

import (
	"strconv"
	"strings"

	"github.com/heraldhq/herald"
)

// Summary is the human-readable text of an alert, as in the `humanReadable` field: several
// lines naming status, event type, project, target (host/replica set/cluster), metric and
// current value, when it was created/resolved, and acknowledgement if any; for an alert from
// Prometheus, its name and summary, description, labels, fingerprint and generator URL. Lines
// with nothing to say are left out. It holds no secret: only the alert's own fields.
//
//	Alert OPEN: OUTSIDE_METRIC_THRESHOLD
//	Project: 5f0c...
//	Host: db1.example.com:27017
//	Replica set: rs0
//	Metric: CONNECTIONS, current value 512 RAW
//	Created: 2026-11-21T18:40:55Z
//	Alert ID: 6a1b...
//
// It is built in one buffer: a storm writes one for every notification.
func Summary(a herald.Alert) string {
	var b strings.Builder
	b.Grow(256)
	add := func(label, value string) {
		if value != "" {
			b.WriteByte('\n')
			b.WriteString(label)
			b.WriteString(": ")
			b.WriteString(value)
		}
	}
	status := a.Status
	if status == "" {
		status = "UNKNOWN"
	}
	event := a.EventTypeName
	if event == "" {
		event = "(no event type)"
	}
	b.WriteString("Alert ")
	b.WriteString(status)
	b.WriteString(": ")
	b.WriteString(event)
	add("Project", a.GroupID)
	if a.Labels != nil {
		add("Prometheus alert", Subject(a))
		add("Description", strings.TrimSpace(a.Annotations["description"]))
		add("Labels", LabelList(a.Labels))
		add("Fingerprint", a.Fingerprint)
		add("Source", a.GeneratorURL)
	}

	host := a.HostnameAndPort
	if host == "" {
		host = a.HostID
	}
	add("Host", host)
	add("Replica set", a.ReplicaSetName)
	cluster := a.ClusterName
	if cluster == "" {
		cluster = a.ClusterID
	}
	add("Cluster", cluster)
	add("Shard", a.ShardName)
	add("Source", a.SourceTypeName)

	value := ""
	if a.CurrentValue != nil {
		value = strconv.FormatFloat(a.CurrentValue.Number, 'f', -1, 64)
		if a.CurrentValue.Units != "" {
			value += " " + a.CurrentValue.Units
		}
	}
	switch {
	case a.MetricName != "" && value != "":
		add("Metric", a.MetricName+", current value "+value)
	case a.MetricName != "":
		add("Metric", a.MetricName)
	default:
		add("Current value", value)
	}

	addTime := func(label string, t herald.Time) { // as add(label, t.String()), without the string
		if !t.IsZero() {
			var buf [len(herald.TimeLayout) + 8]byte
			b.WriteByte('\n')
			b.WriteString(label)
			b.WriteString(": ")
			b.Write(t.UTC().AppendFormat(buf[:0], herald.TimeLayout))
		}
	}
	addTime("Created", a.Created)
	addTime("Resolved", a.Resolved)
	if !a.AcknowledgedUntil.IsZero() {
		ack := "until " + a.AcknowledgedUntil.String()
		if a.AcknowledgingUsername != "" {
			ack += " by " + a.AcknowledgingUsername
		}
		if a.AcknowledgementComment != "" {
			ack += ": " + oneLine(a.AcknowledgementComment)
		}
		add("Acknowledged", ack)
	}
	add("Alert ID", a.ID)
	return b.String()
}

// oneLine keeps user text (an acknowledgement comment) on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
