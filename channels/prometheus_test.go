package channels

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
)

// promAlert is an alert from Prometheus as the engine opens it.
func promAlert() herald.Alert {
	labels := herald.Labels{"alertname": "HighLatency", "instance": "db1:9100", "severity": "critical"}
	return herald.Alert{ID: "65a1b2c3d4e5f60718293a4c", GroupID: "5f0c1d2e3f4a5b6c7d8e9f00", EventTypeName: herald.EventTypePrometheusAlert,
		Status: herald.StatusOpen, Created: channelstest.At("2026-11-21T18:40:55Z"), Labels: labels, Fingerprint: labels.Fingerprint(),
		Annotations:  herald.Labels{"summary": "p99 over 1 s", "description": "db1 answers slowly\nsee the runbook"},
		GeneratorURL: "http://prom.example.com:9090/graph?g0.expr=latency"}
}

// Every text a sender writes about an alert from Prometheus names it by its alertname and
// carries its summary; the long text its description, labels, fingerprint and generator URL.
func TestPrometheusTexts(t *testing.T) {
	a := promAlert()
	if got, want := herald.Subject(a), "HighLatency on db1:9100: p99 over 1 s"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	if got, want := Title(a), "OPEN PROMETHEUS_ALERT: HighLatency on db1:9100: p99 over 1 s"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	if herald.Target(a) != herald.Subject(a) {
		t.Errorf("Target = %q, want the Subject", herald.Target(a))
	}
	want := strings.Join([]string{
		"Alert OPEN: PROMETHEUS_ALERT",
		"Project: 5f0c1d2e3f4a5b6c7d8e9f00",
		"Prometheus alert: HighLatency on db1:9100: p99 over 1 s",
		"Description: db1 answers slowly\nsee the runbook",
		`Labels: alertname="HighLatency", instance="db1:9100", severity="critical"`,
		"Fingerprint: " + a.Fingerprint,
		"Source: http://prom.example.com:9090/graph?g0.expr=latency",
		"Created: 2026-11-21T18:40:55Z",
		"Alert ID: 65a1b2c3d4e5f60718293a4c",
	}, "\n")
	if got := Summary(a); got != want {
		t.Errorf("Summary:\n%s\nwant\n%s", got, want)
	}

	// Without alertname, instance or annotations: the fingerprint names it.
	bare := a
	bare.Labels, bare.Annotations, bare.GeneratorURL = herald.Labels{"job": "api"}, nil, ""
	bare.Fingerprint = bare.Labels.Fingerprint()
	if got, want := herald.Subject(bare), "alert "+bare.Fingerprint; got != want {
		t.Errorf("Subject without alertname = %q, want %q", got, want)
	}
	// A label value cannot break out of its line.
	odd := a
	odd.Labels = herald.Labels{"alertname": "X\nY", "note": "a\"b"}
	if got := LabelList(odd.Labels); got != `alertname="X\nY", note="a\"b"` {
		t.Errorf("LabelList = %q", got)
	}
}
