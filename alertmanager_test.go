package herald

import (
	"regexp"
	"testing"
	"time"
)

func tm(s string) *Time {
	t, ok := ParseTime(s)
	if !ok {
		panic(s)
	}
	return &t
}

func TestPostableAlertObservation(t *testing.T) {
	now := tm("2026-11-24T10:00:00Z").Time
	for _, c := range []struct {
		name           string
		in             PostableAlert
		firing         bool
		at             string
		endsAtRecorded bool
	}{
		{"firing with an end ahead", PostableAlert{Labels: Labels{"a": "b"}, StartsAt: tm("2026-11-24T09:00:00Z"), EndsAt: tm("2026-11-24T10:04:00Z")}, true, "2026-11-24T09:00:00Z", true},
		{"resolved: end passed", PostableAlert{Labels: Labels{"a": "b"}, StartsAt: tm("2026-11-24T09:00:00Z"), EndsAt: tm("2026-11-24T09:59:59Z")}, false, "2026-11-24T09:00:00Z", true},
		{"resolved: end is now", PostableAlert{Labels: Labels{"a": "b"}, EndsAt: tm("2026-11-24T10:00:00Z")}, false, "2026-11-24T10:00:00Z", true},
		{"no times: now, firing", PostableAlert{Labels: Labels{"a": "b"}}, true, "2026-11-24T10:00:00Z", false},
		{"zero times (amtool) count as none", PostableAlert{Labels: Labels{"a": "b"}, StartsAt: &Time{}, EndsAt: &Time{}}, true, "2026-11-24T10:00:00Z", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.in.Observation(now)
			if o.EventTypeName != EventTypePrometheusAlert || o.Active == nil || *o.Active != c.firing || o.At.String() != c.at || (o.EndsAt != nil) != c.endsAtRecorded {
				t.Errorf("got %+v (active %v, at %s)", o, *o.Active, o.At)
			}
			if err := o.Validate(0); err != nil {
				t.Errorf("the observation does not validate: %v", err)
			}
		})
	}
}

func TestGettableAlertsSelect(t *testing.T) {
	now := tm("2026-11-24T10:00:00Z").Time
	alert := func(name, status string) Alert {
		ls := Labels{"alertname": name, "team": "db"}
		return Alert{ID: name, AlertConfigID: "cfg", EventTypeName: EventTypePrometheusAlert, Status: status, Labels: ls, Fingerprint: ls.Fingerprint()}
	}
	alerts := []Alert{alert("A", StatusOpen), alert("B", StatusTracking), alert("C", StatusClosed),
		{ID: "host", EventTypeName: "HOST_DOWN", Status: StatusOpen}}
	silence := MaintenanceWindow{ID: "s1", StartDate: *tm("2026-11-24T09:00:00Z"), EndDate: *tm("2026-11-24T11:00:00Z"),
		Matchers: []LabelMatcher{{Name: "alertname", Value: "A", IsEqual: true}}}
	pending := silence
	pending.ID, pending.StartDate = "s2", *tm("2026-11-24T10:30:00Z")
	categoryWindow := MaintenanceWindow{ID: "w", StartDate: silence.StartDate, EndDate: silence.EndDate, AlertTypeNames: []string{"PROMETHEUS"}}
	windows := []MaintenanceWindow{silence, pending, categoryWindow}
	unroutedAlert := func(name, ends string) UnroutedAlert {
		return UnroutedAlert{Labels: Labels{"alertname": name, "team": "db"}, StartsAt: *tm("2026-11-24T09:00:00Z"),
			UpdatedAt: *tm("2026-11-24T09:59:00Z"), EndsAt: *tm(ends)}
	}
	// U fires, nothing took it; E has ended; A is also an alert a configuration took.
	unrouted := []UnroutedAlert{unroutedAlert("U", "2026-11-24T10:04:00Z"), unroutedAlert("E", "2026-11-24T10:00:00Z"),
		unroutedAlert("A", "2026-11-24T10:04:00Z")}
	names := func(q AlertQuery) (out string) {
		for _, g := range GettableAlerts(alerts, unrouted, windows, q, now) {
			out += g.Labels["alertname"] + ":" + g.Status.State + " "
		}
		return out
	}
	all := AlertQuery{Active: true, Silenced: true}
	for _, c := range []struct {
		name string
		q    AlertQuery
		want string
	}{
		{"every active Prometheus alert, then the unrouted ones not ended nor listed; A silenced by the active silence only", all, "A:suppressed B:active U:active "},
		{"silenced=false", AlertQuery{Active: true}, "B:active U:active "},
		{"active=false", AlertQuery{Silenced: true}, "A:suppressed "},
		{"filter", AlertQuery{Active: true, Silenced: true, Filter: []LabelMatcher{{Name: "alertname", Value: "B|C", IsRegex: true, IsEqual: true}}}, "B:active "},
		{"filter selecting an unrouted alert", AlertQuery{Active: true, Silenced: true, Filter: []LabelMatcher{{Name: "alertname", Value: "U", IsEqual: true}}}, "U:active "},
		{"receiver", AlertQuery{Active: true, Silenced: true, Receiver: regexp.MustCompile("^(?:other)$")}, ""},
		{"receiver of the routed ones: no unrouted alert", AlertQuery{Active: true, Silenced: true, Receiver: regexp.MustCompile("^(?:.*)$")}, "A:suppressed B:active "},
	} {
		if got := names(c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	g := GettableAlerts(alerts[:1], nil, windows, all, now)[0]
	if len(g.Status.SilencedBy) != 1 || g.Status.SilencedBy[0] != "s1" || g.Status.InhibitedBy == nil || g.Status.MutedBy == nil ||
		g.Fingerprint != alerts[0].Fingerprint || g.Receivers[0].Name != "cfg" {
		t.Errorf("gettable alert %+v", g)
	}
	u := GettableAlerts(nil, unrouted[:1], nil, all, now)[0]
	if u.Receivers == nil || len(u.Receivers) != 0 || u.Fingerprint != unrouted[0].Labels.Fingerprint() || u.EndsAt != unrouted[0].EndsAt ||
		u.StartsAt != unrouted[0].StartsAt || u.Annotations == nil || u.Status.State != AlertStateActive || u.Status.MutedBy == nil {
		t.Errorf("unrouted alert shown as %+v", u)
	}
}

// An unrouted alert starts when it was observed (now without a time) and ends at its expiry.
func TestUnroutedOf(t *testing.T) {
	now := tm("2026-11-24T10:00:00Z").Time
	o := PostableAlert{Labels: Labels{"a": "b"}, Annotations: Labels{"summary": "s"}, StartsAt: tm("2026-11-24T09:00:00Z"),
		EndsAt: tm("2026-11-24T10:04:00Z"), GeneratorURL: "http://p/graph"}.Observation(now)
	u := UnroutedOf(o, now)
	if u.StartsAt.String() != "2026-11-24T09:00:00Z" || u.EndsAt.String() != "2026-11-24T10:04:00Z" || u.UpdatedAt.String() != "2026-11-24T10:00:00Z" ||
		u.Labels["a"] != "b" || u.Annotations["summary"] != "s" || u.GeneratorURL != "http://p/graph" {
		t.Errorf("got %+v", u)
	}
	u = UnroutedOf(PostableAlert{Labels: Labels{"a": "b"}}.Observation(now), now)
	if u.StartsAt.String() != "2026-11-24T10:00:00Z" || !u.EndsAt.Equal(now.Add(PrometheusResolveTimeout)) {
		t.Errorf("without times: %+v", u)
	}
}

func TestPostableSilenceApply(t *testing.T) {
	now := tm("2026-11-24T10:00:00Z").Time
	str := func(s string) *string { return &s }
	yes := true
	eq := LabelMatcherInput{Name: str("alertname"), Value: str("X")}
	for _, c := range []struct {
		name string
		in   PostableSilence
		err  string // "" when valid
	}{
		{"valid; isEqual defaults to true", PostableSilence{Matchers: []LabelMatcherInput{eq}, StartsAt: tm("2026-11-24T10:00:00Z"), EndsAt: tm("2026-11-24T11:00:00Z"), CreatedBy: "me", Comment: "c"}, ""},
		{"no matchers", PostableSilence{StartsAt: tm("2026-11-24T10:00:00Z"), EndsAt: tm("2026-11-24T11:00:00Z"), CreatedBy: "me", Comment: "c"}, CodeMissingAttribute},
		{"bad regex", PostableSilence{Matchers: []LabelMatcherInput{{Name: str("a"), Value: str("("), IsRegex: &yes}}, StartsAt: tm("2026-11-24T10:00:00Z"), EndsAt: tm("2026-11-24T11:00:00Z"), CreatedBy: "me", Comment: "c"}, CodeInvalidAttribute},
		{"matches the empty string only", PostableSilence{Matchers: []LabelMatcherInput{{Name: str("a"), Value: str(".*"), IsRegex: &yes}}, StartsAt: tm("2026-11-24T10:00:00Z"), EndsAt: tm("2026-11-24T11:00:00Z"), CreatedBy: "me", Comment: "c"}, CodeInvalidAttribute},
		{"no creator", PostableSilence{Matchers: []LabelMatcherInput{eq}, StartsAt: tm("2026-11-24T10:00:00Z"), EndsAt: tm("2026-11-24T11:00:00Z"), Comment: "c"}, CodeMissingAttribute},
		{"ended", PostableSilence{Matchers: []LabelMatcherInput{eq}, StartsAt: tm("2026-11-24T08:00:00Z"), EndsAt: tm("2026-11-24T09:00:00Z"), CreatedBy: "me", Comment: "c"}, CodeWindowStartAfterEnd},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w MaintenanceWindow
			err := c.in.Apply(&w, now)
			if c.err == "" {
				if err != nil || len(w.Matchers) != 1 || !w.Matchers[0].IsEqual || w.CreatedBy != "me" || w.Description != "c" || w.AlertTypeNames[0] != "PROMETHEUS" {
					t.Errorf("window %+v (%v)", w, err)
				}
				return
			}
			if e, ok := err.(*Error); !ok || e.Code != c.err {
				t.Errorf("got %v, want %s", err, c.err)
			}
		})
	}
}

func TestSilenceOfStates(t *testing.T) {
	w := MaintenanceWindow{ID: "s", StartDate: *tm("2026-11-24T10:00:00Z"), EndDate: *tm("2026-11-24T11:00:00Z"),
		Matchers: []LabelMatcher{{Name: "a", Value: "b", IsEqual: true}}, CreatedBy: "me", Description: "why"}
	for at, want := range map[string]string{"2026-11-24T09:59:59Z": "pending", "2026-11-24T10:00:00Z": "active", "2026-11-24T11:00:00Z": "expired"} {
		if got := SilenceOf(w, tm(at).Time); got.Status.State != want || got.Comment != "why" || got.CreatedBy != "me" {
			t.Errorf("at %s: %+v, want %s", at, got, want)
		}
	}
	if !SilenceSelected(w, []LabelMatcher{{Name: "a", Value: "b", IsEqual: true}}) || SilenceSelected(w, []LabelMatcher{{Name: "a", Value: "c", IsEqual: true}}) {
		t.Error("silence filter")
	}
}

func TestWindowSilencesAlertByMatchers(t *testing.T) {
	now := tm("2026-11-24T10:00:00Z").Time
	in := MaintenanceWindow{StartDate: *tm("2026-11-24T09:00:00Z"), EndDate: *tm("2026-11-24T11:00:00Z")}
	silence := in
	silence.AlertTypeNames = []string{"PROMETHEUS"}
	silence.Matchers = []LabelMatcher{{Name: "alertname", Value: "X", IsEqual: true}, {Name: "env", Value: "dev", IsEqual: false}}
	hosts := in
	hosts.AlertTypeNames = []string{"HOST"}
	for _, c := range []struct {
		name   string
		w      MaintenanceWindow
		cat    Category
		labels Labels
		at     time.Time
		want   bool
	}{
		{"matching labels", silence, CategoryPrometheus, Labels{"alertname": "X", "env": "prod"}, now, true},
		{"a matcher fails", silence, CategoryPrometheus, Labels{"alertname": "X", "env": "dev"}, now, false},
		{"other alertname", silence, CategoryPrometheus, Labels{"alertname": "Y"}, now, false},
		{"a silence never silences an alert without labels", silence, CategoryPrometheus, nil, now, false},
		{"a silence ignores the category", silence, CategoryHost, Labels{"alertname": "X"}, now, true},
		{"after its end", silence, CategoryPrometheus, Labels{"alertname": "X"}, tm("2026-11-24T11:00:00Z").Time, false},
		{"a window without matchers: by category", hosts, CategoryHost, Labels{"alertname": "Y"}, now, true},
		{"a window without matchers: other category", hosts, CategoryPrometheus, Labels{"alertname": "X"}, now, false},
	} {
		if got := c.w.SilencesAlert(c.cat, c.labels, c.at); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
