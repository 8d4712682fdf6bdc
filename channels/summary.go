package channels

import (
	"strings"
	"time"

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
		add("Prometheus alert", herald.Subject(a))
		add("Description", strings.TrimSpace(a.Annotations["description"]))
		add("Labels", LabelList(a.Labels))
		add("Fingerprint", a.Fingerprint)
		add("Source", a.GeneratorURL)
	}

	if a.HeartbeatName != "" {
		add("Heartbeat", a.HeartbeatName)
		if out := a.Annotations[herald.HeartbeatOutput]; out != "" {
			b.WriteString("\nOutput (last lines):\n")
			b.WriteString(out)
		}
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

	value := a.CurrentValue.Text()
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
			ack += ": " + herald.OneLine(a.AcknowledgementComment)
		}
		add("Acknowledged", ack)
	}
	add("Alert ID", a.ID)
	return b.String()
}

// Notice is what a notice meant for people says, in words, each part on one line: the
// senders of people's kinds lay it out in their own format.
type Notice struct {
	Headline string // what happened: "Alert opened" (Headline)
	Status   string // "Open", "Acknowledged", "Resolved", "Cancelled" (StatusWords)
	What     string // "Host down: db1.example.com:27017 (replica set rs0)" (What)
	Where    string // "Orders (organization Acme)" (Where); "" when nothing names the project
	Since    string // "since 03:12 UTC, 14 min" or "lasted 14 min, 03:12 UTC to 03:26 UTC" (Since)
	Ack      string // "until 07:12 UTC by alice@example.com" (Acknowledgement); "" when none
	Links    []Link // the links the delivery offers (Links)
	// Items, for a digest (Delivery.Digest), name its alerts one by one (Digest.Items); its
	// Headline then counts them and What counts their event types.
	Items []string
}

// digest says the notice is a digest's.
func (n Notice) digest() bool { return len(n.Items) > 0 }

// NoticeOf is what d says to people read at now; ok is false for an event Herald does not send.
func NoticeOf(d Delivery, now time.Time) (n Notice, ok bool) {
	n.Headline, ok = Headline(d.Event)
	if !ok {
		return Notice{}, false
	}
	if d.Digest != nil {
		return digestNotice(d), true
	}
	a := d.Alert
	return Notice{Headline: n.Headline, Status: StatusWords(d), What: herald.What(a), Where: Where(d),
		Since: Since(a, now), Ack: Acknowledgement(a, now), Links: Links(d.Links)}, true
}

// Subject is the notice on one line: "Resolved: Host down: db1.example.com:27017, project
// Orders (organization Acme)"; a digest's: "41 alerts opened in project prod: Host down ×38,
// No primary ×3".
func (n Notice) Subject() string {
	if n.digest() {
		return n.Headline + ": " + n.What
	}
	s := n.Status + ": " + n.What
	if n.Where != "" {
		s += ", project " + n.Where
	}
	return s
}

// Lines are the notice's words, a line each, without its links:
//
//	Alert opened: Host down: db1.example.com:27017 (replica set rs0)
//	Project: Orders (organization Acme)
//	Open since 03:12 UTC, 14 min
//	Acknowledged until 07:12 UTC by alice@example.com
//
// A digest's is its Subject: its Details name the alerts.
func (n Notice) Lines() []string {
	if n.digest() {
		return []string{n.Subject()}
	}
	lines := []string{n.Headline + ": " + n.What}
	if n.Where != "" {
		lines = append(lines, "Project: "+n.Where)
	}
	if w := n.When(); w != "" {
		lines = append(lines, w)
	}
	if n.Ack != "" {
		lines = append(lines, "Acknowledged "+n.Ack)
	}
	return lines
}

// Facts are the notice's parts as a card lays them out, name and value, for the alert a it is
// about: Status, Event type, Target, Project, When and Acknowledged, those with nothing to say
// left out.
func (n Notice) Facts(a herald.Alert) [][2]string {
	all := [][2]string{{"Status", n.Status}, {"Event type", EventType(a)}, {"Target", herald.Target(a)},
		{"Project", n.Where}, {"When", n.When()}, {"Acknowledged", n.Ack}}
	if n.digest() { // about many alerts: a's own facts are not the digest's
		all = [][2]string{{"Project", n.Where}}
	}
	var out [][2]string
	for _, f := range all {
		if f[1] != "" {
			out = append(out, f)
		}
	}
	return out
}

// When is the line that says since when: "Open since 03:12 UTC, 14 min", "Resolved, lasted
// 14 min, 03:12 UTC to 03:26 UTC"; "" when the alert has no times.
func (n Notice) When() string {
	switch {
	case n.Since == "":
		return ""
	case strings.HasPrefix(n.Since, "since ") && n.Status == "Acknowledged":
		return "Open " + n.Since // acknowledged since the acknowledgement, open since this
	case strings.HasPrefix(n.Since, "since "):
		return n.Status + " " + n.Since
	}
	return n.Status + ", " + n.Since
}

// Details are what a message says below the notice's words: the alert's Summary, or the
// digest's Items, a line each.
func (n Notice) Details(a herald.Alert) string {
	if n.digest() {
		return strings.Join(n.Items, "\n")
	}
	return Summary(a)
}

// Text is the notice for a plain-text message: its Lines, then each link labelled on a line
// of its own ("Acknowledge for 1 hour: https://..."), then its Details.
func (n Notice) Text(a herald.Alert) string {
	var b strings.Builder
	for _, l := range n.Lines() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(n.Links) > 0 {
		b.WriteByte('\n')
		for _, l := range n.Links {
			b.WriteString(l.Label + ": " + l.URL + "\n")
		}
	}
	b.WriteByte('\n')
	b.WriteString(n.Details(a))
	return b.String()
}
