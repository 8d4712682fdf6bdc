package herald_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
)

// Every event type Herald knows reads as words of its own, not as its token.
func TestEveryKnownEventTypeHasWords(t *testing.T) {
	for _, name := range herald.EventTypeNames() {
		w, ok := herald.EventWordsTable()[name]
		if !ok || w == "" {
			t.Errorf("%s has no words", name)
			continue
		}
		if strings.ContainsAny(w, "_") || strings.ToUpper(w) == w {
			t.Errorf("%s reads %q, not words", name, w)
		}
	}
	for name := range herald.EventWordsTable() {
		if _, ok := herald.LookupEventType(name); !ok {
			t.Errorf("words for %s, which the catalogue does not know", name)
		}
	}
}

func TestEventWordsOfUnknownTypes(t *testing.T) {
	for in, want := range map[string]string{
		"HOST_DOWN":                "Host down",
		"OUTSIDE_METRIC_THRESHOLD": "Metric outside its threshold",
		"SOME_NEW_THING":           "Some new thing",
		"CPU":                      "Cpu",
		"":                         "Alert",
		"  ":                       "Alert",
	} {
		if got := herald.EventWords(in); got != want {
			t.Errorf("EventWords(%q) = %q, want %q", in, got, want)
		}
	}
	if got := herald.Readable("OUTSIDE_METRIC_THRESHOLD"); got != "Outside metric threshold" {
		t.Errorf("Readable = %q", got)
	}
}

func TestWhat(t *testing.T) {
	prom := herald.Alert{EventTypeName: herald.EventTypePrometheusAlert, Labels: herald.Labels{"alertname": "HighLatency", "instance": "db1:9100"},
		Annotations: herald.Labels{"summary": "p99 over 1 s"}}
	project := herald.Alert{GroupID: "5f0c", EventTypeName: "USERS_AWAITING_APPROVAL"}
	heartbeat := herald.Alert{GroupID: "5f0c", EventTypeName: herald.EventTypeHeartbeatMissed, HeartbeatName: "nightly\nbackup"}
	for _, c := range []struct {
		a    herald.Alert
		want string
	}{
		{channelstest.HostAlert(), "Host down: db1.example.com:27017 (replica set rs0)"},
		{channelstest.MetricAlert(), "Metric outside its threshold: CONNECTIONS at 512 RAW on db1.example.com:27017 (replica set rs0)"},
		{prom, "HighLatency on db1:9100: p99 over 1 s"},
		{project, "Users awaiting approval"},
		{heartbeat, "Heartbeat missed: no ping in time: heartbeat nightly backup"},
		{herald.Alert{EventTypeName: "NEW_TYPE", HostnameAndPort: "h:1\nFAKE LINE"}, "New type: h:1 FAKE LINE"},
	} {
		if got := herald.What(c.a); got != c.want {
			t.Errorf("What = %q, want %q", got, c.want)
		}
	}
}
