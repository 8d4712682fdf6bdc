package herald

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// promObs is a valid PROMETHEUS_ALERT item, changed by change.
func promObs(change func(*Observation)) Observation {
	yes := true
	o := Observation{EventTypeName: EventTypePrometheusAlert, Active: &yes,
		Labels:      Labels{"alertname": "HighLatency", "severity": "critical", "instance": "db1:9100"},
		Annotations: Labels{"summary": "p99 over 1 s", "description": "db1 is slow"}, GeneratorURL: "http://prom:9090/graph?g0.expr=up"}
	if change != nil {
		change(&o)
	}
	return o
}

func TestObservationValidatePrometheus(t *testing.T) {
	start, _ := ParseTime("2026-03-01T12:00:00Z")
	end, _ := ParseTime("2026-03-01T12:04:00Z")
	for _, o := range []Observation{
		promObs(nil),
		promObs(func(o *Observation) { o.Annotations, o.GeneratorURL = nil, "" }),
		promObs(func(o *Observation) { o.Labels = Labels{"job": "api"} }), // alertname is not required
		promObs(func(o *Observation) { o.At, o.EndsAt = &start, &end }),
		promObs(func(o *Observation) { f := false; o.Active = &f }),
		promObs(func(o *Observation) { o.Labels["ünïcode.name"] = "välue" }),
	} {
		if err := o.Validate(0); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}

	many := Labels{}
	for i := range MaxPrometheusLabels + 1 {
		many[fmt.Sprintf("l%d", i)] = "v"
	}
	for _, tc := range []struct {
		name        string
		o           Observation
		code, field string
	}{
		{"no labels", promObs(func(o *Observation) { o.Labels = nil }), CodeInvalidObservation, "labels"},
		{"empty labels", promObs(func(o *Observation) { o.Labels = Labels{} }), CodeInvalidObservation, "labels"},
		{"no active", promObs(func(o *Observation) { o.Active = nil }), CodeMissingAttribute, "active"},
		{"too many labels", promObs(func(o *Observation) { o.Labels = many }), CodeInvalidObservation, "labels"},
		{"too many annotations", promObs(func(o *Observation) { o.Annotations = many }), CodeInvalidObservation, "annotations"},
		{"empty label name", promObs(func(o *Observation) { o.Labels[""] = "x" }), CodeInvalidObservation, "labels"},
		{"control in name", promObs(func(o *Observation) { o.Labels["a\nb"] = "x" }), CodeInvalidObservation, "labels"},
		{"name not UTF-8", promObs(func(o *Observation) { o.Labels["a\xff"] = "x" }), CodeInvalidObservation, "labels"},
		{"long name", promObs(func(o *Observation) { o.Labels[strings.Repeat("n", MaxLabelNameLength+1)] = "x" }), CodeInvalidObservation, "labels"},
		{"value not UTF-8", promObs(func(o *Observation) { o.Labels["job"] = "\xff" }), CodeInvalidObservation, "labels.job"},
		{"long label value", promObs(func(o *Observation) { o.Labels["job"] = strings.Repeat("v", MaxLabelValueLength+1) }), CodeInvalidObservation, "labels.job"},
		{"long annotation", promObs(func(o *Observation) { o.Annotations["summary"] = strings.Repeat("v", MaxAnnotationValueLength+1) }), CodeInvalidObservation, "annotations.summary"},
		{"generator not a URL", promObs(func(o *Observation) { o.GeneratorURL = "prom:9090/graph" }), CodeInvalidObservation, "generatorURL"},
		{"generator not http", promObs(func(o *Observation) { o.GeneratorURL = "file:///etc/passwd" }), CodeInvalidObservation, "generatorURL"},
		{"ends before it starts", promObs(func(o *Observation) { o.At, o.EndsAt = &end, &start }), CodeInvalidObservation, "endsAt"},
		{"host", promObs(func(o *Observation) { o.HostID = "h1" }), CodeInvalidObservation, "hostId"},
		{"replica set", promObs(func(o *Observation) { o.ReplicaSetName = "rs0" }), CodeInvalidObservation, "replicaSetName"},
		{"current value", promObs(func(o *Observation) { o.CurrentValue = &CurrentValue{Number: 1} }), CodeInvalidObservation, "currentValue"},
		{"disks", promObs(func(o *Observation) { o.Disks = []Disk{{"sda"}} }), CodeInvalidObservation, "disks"},
		{"value", promObs(func(o *Observation) { v := 1.0; o.Value = &v }), CodeInvalidObservation, "value"},
		// The fields of a Prometheus alert on anything else.
		{"labels on a condition", Observation{EventTypeName: "HOST_DOWN", Active: promObs(nil).Active, HostID: "h1", Labels: Labels{"a": "b"}}, CodeInvalidObservation, "labels"},
		{"annotations on a condition", Observation{EventTypeName: "HOST_DOWN", Active: promObs(nil).Active, HostID: "h1", Annotations: Labels{}}, CodeInvalidObservation, "annotations"},
		{"endsAt on a measurement", Observation{MetricName: "CONNECTIONS", Value: new(float64), Units: "RAW", HostID: "h1", EndsAt: &end}, CodeInvalidObservation, "endsAt"},
		{"generatorURL on a condition", Observation{EventTypeName: "HOST_DOWN", Active: promObs(nil).Active, HostID: "h1", GeneratorURL: "http://x"}, CodeInvalidObservation, "generatorURL"},
	} {
		err := ErrorOf(tc.o.Validate(3))
		if err == nil || err.Code != tc.code || fmt.Sprint(err.Parameters) != fmt.Sprint([]any{3, tc.field}) {
			t.Errorf("%s: got %v, want %s naming item 3 and %s", tc.name, err, tc.code, tc.field)
		}
	}
}

func TestPrometheusTargetKey(t *testing.T) {
	a := promObs(nil)
	same := promObs(func(o *Observation) {
		o.Annotations, o.GeneratorURL = Labels{"summary": "other text"}, "" // annotations are not identity
	})
	other := promObs(func(o *Observation) { o.Labels["severity"] = "warning" })
	// A label set whose pairs read the same run together must differ: parts are length-prefixed.
	shifted1 := promObs(func(o *Observation) { o.Labels = Labels{"a": "bc"} })
	shifted2 := promObs(func(o *Observation) { o.Labels = Labels{"ab": "c"} })
	host := Observation{EventTypeName: "HOST_DOWN", HostID: "p"}
	if a.TargetKey() != same.TargetKey() {
		t.Errorf("the same labels with other annotations are another target: %q vs %q", a.TargetKey(), same.TargetKey())
	}
	for _, o := range []Observation{other, shifted1, host} {
		if o.TargetKey() == a.TargetKey() {
			t.Errorf("%v is the same target as %v", o.Labels, a.Labels)
		}
	}
	if shifted1.TargetKey() == shifted2.TargetKey() {
		t.Errorf("{a=bc} and {ab=c} are one target: %q", shifted1.TargetKey())
	}
	if !strings.HasPrefix(a.TargetKey(), "p") {
		t.Errorf("TargetKey = %q, want the kind letter p", a.TargetKey())
	}
}

func TestRuleMatchesLabelMatchers(t *testing.T) {
	rule := func(ms ...string) AlertRule {
		r := AlertRule{Enabled: true, EventTypeName: EventTypePrometheusAlert}
		for _, s := range ms {
			m, err := ParseLabelMatcher(s)
			if err != nil {
				t.Fatal(err)
			}
			r.LabelMatchers = append(r.LabelMatchers, m)
		}
		return r
	}
	critical := promObs(nil)
	warning := promObs(func(o *Observation) { o.Labels["severity"] = "warning" })
	bare := promObs(func(o *Observation) { o.Labels = Labels{"alertname": "Watchdog"} })
	for _, tc := range []struct {
		rule AlertRule
		o    Observation
		want bool
	}{
		{rule(), critical, true}, // no label matchers: every Prometheus alert
		{rule(), bare, true},
		{rule(`severity="critical"`), critical, true},
		{rule(`severity="critical"`), warning, false},
		{rule(`severity!="critical"`), warning, true},
		{rule(`severity!="critical"`), critical, false},
		{rule(`severity!="critical"`), bare, true}, // a missing label is the empty value
		{rule(`severity=~"crit.*|page"`), critical, true},
		{rule(`severity=~"crit"`), critical, false}, // a regular expression matches the whole value
		{rule(`severity!~"warn.*"`), critical, true},
		{rule(`severity="critical"`, `instance=~"db.*"`), critical, true},
		{rule(`severity="critical"`, `instance=~"web.*"`), critical, false},
		{rule(`team=""`), critical, true},
		// Another event type never matches, label matchers or not.
		{AlertRule{Enabled: true, EventTypeName: "HOST_DOWN"}, critical, false},
		{func() AlertRule { r := rule(); r.Enabled = false; return r }(), critical, false},
	} {
		if got := tc.rule.Matches(tc.o); got != tc.want {
			t.Errorf("%v on %v: Matches = %v, want %v", tc.rule.LabelMatchers, tc.o.Labels, got, tc.want)
		}
	}
}

func TestAlertRuleLabelMatchers(t *testing.T) {
	const email = `"notifications":[{"typeName":"EMAIL","emailAddress":"ops@example.com"}]`
	for _, tc := range []struct {
		name  string
		body  string
		want  []LabelMatcher
		code  string
		param string
	}{
		{name: "defaults: equal, not a regex", body: `"labelMatchers":[{"name":"severity","value":"critical"}]`,
			want: []LabelMatcher{{Name: "severity", Value: "critical", IsEqual: true}}},
		{name: "all four operators", body: `"labelMatchers":[{"name":"a","value":"1"},{"name":"b","value":"2","isEqual":false},` +
			`{"name":"c","value":"3.*","isRegex":true},{"name":"d","value":"4|5","isRegex":true,"isEqual":false}]`,
			want: []LabelMatcher{{Name: "a", Value: "1", IsEqual: true}, {Name: "b", Value: "2"},
				{Name: "c", Value: "3.*", IsRegex: true, IsEqual: true}, {Name: "d", Value: "4|5", IsRegex: true}}},
		{name: "none", body: `"labelMatchers":[]`},
		{name: "no name", body: `"labelMatchers":[{"value":"critical"}]`, code: CodeMissingAttribute, param: "labelMatchers[0].name"},
		{name: "no value", body: `"labelMatchers":[{"name":"a","value":"1"},{"name":"severity"}]`, code: CodeMissingAttribute, param: "labelMatchers[1].value"},
		{name: "bad regex", body: `"labelMatchers":[{"name":"severity","value":"(","isRegex":true}]`, code: CodeInvalidAttribute, param: "labelMatchers[0]"},
		{name: "long value", body: `"labelMatchers":[{"name":"a","value":"` + strings.Repeat("v", MaxLabelValueLength+1) + `"}]`, code: CodeInvalidAttribute, param: "labelMatchers[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ruleInput(t, `{"eventTypeName":"PROMETHEUS_ALERT",`+tc.body+`,`+email+`}`).Validate(NotificationRules{})
			if tc.code != "" {
				e := ErrorOf(err)
				if e == nil || e.Code != tc.code || fmt.Sprint(e.Parameters) != fmt.Sprint([]any{tc.param}) {
					t.Fatalf("got %v, want %s naming %s", err, tc.code, tc.param)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(r.LabelMatchers, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", r.LabelMatchers, err, tc.want)
			}
		})
	}
	// labelMatchers belong to PROMETHEUS_ALERT; PROMETHEUS_ALERT takes no field matchers.
	_, err := ruleInput(t, `{"eventTypeName":"HOST_DOWN","labelMatchers":[{"name":"a","value":"b"}],`+email+`}`).Validate(NotificationRules{})
	if e := ErrorOf(err); e == nil || e.Code != CodeInvalidAttribute || fmt.Sprint(e.Parameters) != "[labelMatchers]" {
		t.Errorf("labelMatchers on HOST_DOWN: %v", err)
	}
	_, err = ruleInput(t, `{"eventTypeName":"PROMETHEUS_ALERT","matchers":[{"fieldName":"HOSTNAME","operator":"EQUALS","value":"x"}],`+email+`}`).Validate(NotificationRules{})
	if e := ErrorOf(err); e == nil || e.Code != CodeInvalidAttribute || fmt.Sprint(e.Parameters) != "[matchers]" {
		t.Errorf("matchers on PROMETHEUS_ALERT: %v", err)
	}
}

func TestPrometheusExpiry(t *testing.T) {
	now := lcT0
	in := func(d time.Duration) *Time { v := At(now.Add(d)); return &v }
	for _, tc := range []struct {
		name    string
		o       Observation
		expires time.Time
		firing  bool
	}{
		{"endsAt ahead", promObs(func(o *Observation) { o.EndsAt = in(4 * time.Minute) }), now.Add(4 * time.Minute), true},
		{"no endsAt: the resolve timeout", promObs(nil), now.Add(PrometheusResolveTimeout), true},
		{"endsAt now", promObs(func(o *Observation) { o.EndsAt = in(0) }), now, false},
		{"endsAt passed", promObs(func(o *Observation) { o.EndsAt = in(-time.Second) }), now.Add(-time.Second), false},
		{"a condition never expires", Observation{EventTypeName: "HOST_DOWN", HostID: "h1"}, time.Time{}, true},
	} {
		if got := tc.o.ExpiresAt(now); !got.Equal(tc.expires) {
			t.Errorf("%s: ExpiresAt = %v, want %v", tc.name, got, tc.expires)
		}
		if got := tc.o.FiringAt(now); got != tc.firing {
			t.Errorf("%s: FiringAt = %v, want %v", tc.name, got, tc.firing)
		}
	}
}

// An alert from Prometheus follows the lifecycle of any alert, and closes at its expiry.
func TestAdvancePrometheusExpiry(t *testing.T) {
	rule := lcRule([2]int{0, 5})
	rule.EventTypeName = EventTypePrometheusAlert
	o := promObs(nil)
	a, s := NewAlert("a1", "g1", "c1", rule, o, time.Minute, lcT0)
	if a.Fingerprint != o.Labels.Fingerprint() || !reflect.DeepEqual(a.Labels, o.Labels) || !reflect.DeepEqual(a.Annotations, o.Annotations) || a.GeneratorURL != o.GeneratorURL {
		t.Fatalf("NewAlert does not carry the Prometheus alert: %+v", a)
	}
	o.Labels["severity"] = "changed"
	if a.Labels["severity"] != "critical" {
		t.Errorf("the alert shares its labels with the observation")
	}
	s.Expires = lcM(12)

	st := Advance(a, s, rule, false, time.Minute, lcT0)
	if !st.Opened || !slices.Equal(st.Notify, []int{0}) || !st.Wake.Equal(lcM(5)) {
		t.Fatalf("opening: %+v", st)
	}
	for _, tc := range []struct {
		name    string
		now     time.Time
		expires time.Time
		closed  bool
		notify  []int
		wake    time.Time
	}{
		{"repeat before the expiry", lcM(5), lcM(12), false, []int{0}, lcM(10)},
		{"expiry before the next repeat wakes it", lcM(10), lcM(12), false, []int{0}, lcM(12)},
		{"at the expiry: closed", lcM(12), lcM(12), true, nil, time.Time{}},
		{"past the expiry, a repeat due too: closed, no repeat", lcM(16), lcM(12), true, nil, time.Time{}},
		{"renewed expiry: the repeat", lcM(10), lcM(20), false, []int{0}, lcM(15)},
	} {
		sc := st.Schedule
		sc.Expires = tc.expires
		if tc.name == "expiry before the next repeat wakes it" {
			sc.Next = []time.Time{lcM(10)}
		}
		got := Advance(st.Alert, sc, rule, false, time.Minute, tc.now)
		if got.Closed != tc.closed || !slices.Equal(got.Notify, tc.notify) || !got.Wake.Equal(tc.wake) {
			t.Errorf("%s: closed %v notify %v wake %v; want %v %v %v", tc.name, got.Closed, got.Notify, got.Wake, tc.closed, tc.notify, tc.wake)
		}
		if tc.closed {
			if got.Alert.Status != StatusClosed || !slices.Equal(got.Resolve, []int{0}) || !got.Alert.Resolved.Equal(tc.now) {
				t.Errorf("%s: an expired alert closes with its resolution notice: %+v", tc.name, got)
			}
		}
		if !got.Closed && !got.Wake.Equal(Wake(got.Alert, got.Schedule)) {
			t.Errorf("%s: Wake %v disagrees with Advance's %v", tc.name, Wake(got.Alert, got.Schedule), got.Wake)
		}
	}

	// Acknowledged: the expiry still closes it, and wakes it before the acknowledgement ends.
	acked := st.Alert
	acked.AcknowledgedUntil = At(lcM(30))
	if w := Wake(acked, st.Schedule); !w.Equal(lcM(12)) {
		t.Errorf("acknowledged until 30, expiring at 12: Wake = %v", w)
	}
	if w := WakeIfRenewed(acked, st.Schedule); !w.Equal(lcM(30)) {
		t.Errorf("WakeIfRenewed = %v, want the acknowledgement's end", w)
	}
	if got := Advance(acked, st.Schedule, rule, false, time.Minute, lcM(12)); !got.Closed || !slices.Equal(got.Resolve, []int{0}) {
		t.Errorf("an acknowledged alert expires with its resolution notice: %+v", got)
	}
	// Silenced: it closes, and the resolution is withheld.
	if got := Advance(st.Alert, st.Schedule, rule, true, time.Minute, lcM(12)); !got.Closed || len(got.Resolve) != 0 || !slices.Equal(got.Silenced, []int{0}) {
		t.Errorf("a silenced alert expires without its resolution notice: %+v", got)
	}
	// TRACKING: it ends without a notice.
	slow := lcRule([2]int{10, 5})
	ta, tsch := NewAlert("a2", "g1", "c1", slow, promObs(nil), time.Minute, lcT0)
	tsch.Expires = lcM(3)
	if w := Wake(ta, tsch); !w.Equal(lcM(3)) {
		t.Errorf("a TRACKING alert expiring before it opens wakes at the expiry: %v", w)
	}
	if got := Advance(ta, tsch, slow, false, time.Minute, lcM(3)); !got.Closed || len(got.Resolve) != 0 || got.Opened {
		t.Errorf("a TRACKING alert expires without a notice: %+v", got)
	}
}

func TestRefreshPrometheus(t *testing.T) {
	rule := lcRule([2]int{0, 5})
	a, _ := NewAlert("a1", "g1", "c1", rule, promObs(nil), time.Minute, lcT0)
	a.Status = StatusOpen
	if got := Refresh(a, promObs(nil), lcM(1)); !reflect.DeepEqual(got, a) {
		t.Errorf("a re-send with the same annotations changes the alert: %+v", got)
	}
	if a.RefreshDigest() != promObs(nil).RefreshDigest() {
		t.Errorf("the alert's digest differs from the re-send that opened it")
	}
	changed := promObs(func(o *Observation) { o.Annotations["description"] = "db1 is slower" })
	got := Refresh(a, changed, lcM(1))
	if got.Annotations["description"] != "db1 is slower" || !got.Updated.Equal(lcM(1)) || got.Status != StatusOpen {
		t.Errorf("new annotations are recorded, nothing else: %+v", got)
	}
	if changed.RefreshDigest() == a.RefreshDigest() || got.RefreshDigest() != changed.RefreshDigest() {
		t.Errorf("the digest does not follow the annotations")
	}
	moved := promObs(func(o *Observation) { o.GeneratorURL = "http://other:9090/" })
	if moved.RefreshDigest() == a.RefreshDigest() {
		t.Errorf("the digest does not follow the generator URL")
	}
}
