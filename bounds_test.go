package herald

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The bounds of request times and of delayMin and intervalMin: each entry refuses what is out
// of bounds with the documented error, and takes what is at the bound.

var bT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func bTime(s string) *Time {
	t, ok := ParseTime(s)
	if !ok {
		panic("bad test time " + s)
	}
	return &t
}

func TestRequestTimeProblem(t *testing.T) {
	for _, c := range []struct {
		t        time.Time
		happened bool
		refused  bool
	}{
		{time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), false, true},
		{time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), true, true},
		{EarliestRequestTime.Add(-time.Second), false, true},
		{EarliestRequestTime, false, false},
		{EarliestRequestTime, true, false},
		{bT0.Add(MaxRequestTimeAhead), true, false},
		{bT0.Add(MaxRequestTimeAhead + time.Second), true, true},
		{bT0.Add(MaxRequestTimeAhead + time.Second), false, false},                       // an end may lie ahead
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), false, false},                 // for good
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true, true},                   // never seen yet
		{time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("+14", 14*3600)), false, true}, // 1999-12-31T10:00Z
	} {
		if got := RequestTimeProblem(c.t, c.happened, bT0); (got != "") != c.refused {
			t.Errorf("RequestTimeProblem(%v, happened %v) = %q, want refused %v", c.t, c.happened, got, c.refused)
		}
	}
	err := CheckRequestTime("acknowledgedUntil", bTime("1999-12-31T23:59:59Z"), false, bT0)
	wantError(t, err, CodeInvalidDate, "acknowledgedUntil")
	if d := ErrorOf(err).Detail; !strings.Contains(d, "1999-12-31T23:59:59Z") || !strings.Contains(d, "2000-01-01T00:00:00Z") {
		t.Errorf("the detail names neither the time nor the bound: %s", d)
	}
	if err := CheckRequestTime("acknowledgedUntil", nil, false, bT0); err != nil {
		t.Errorf("no time given: %v", err)
	}
}

// wantObservationField checks that err refuses item of a batch as INVALID_OBSERVATION naming
// field, or, with field "", that there is no error.
func wantObservationField(t *testing.T, name string, err error, item int, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
		return
	}
	e := ErrorOf(err)
	if e == nil || e.Code != CodeInvalidObservation || fmt.Sprint(e.Parameters) != fmt.Sprint([]any{item, field}) {
		t.Errorf("%s: %v, want INVALID_OBSERVATION naming item %d and %s", name, err, item, field)
	}
}

func TestObservationTimesBounded(t *testing.T) {
	firing := true
	host := func(at string) Observation {
		return Observation{EventTypeName: "HOST_DOWN", Active: &firing, HostID: "h1", At: bTime(at)}
	}
	prom := func(at, ends string) Observation {
		o := Observation{EventTypeName: EventTypePrometheusAlert, Active: &firing, Labels: Labels{"alertname": "S1"}, At: bTime(at)}
		if ends != "" {
			o.EndsAt = bTime(ends)
		}
		return o
	}
	for _, c := range []struct {
		name  string
		o     Observation
		field string // "" when taken
	}{
		{"at 1700", host("1700-01-01T00:00:00Z"), "at"},
		{"at year 1", host("0001-01-02T00:00:00Z"), "at"},
		{"at a second before 2000", host("1999-12-31T23:59:59Z"), "at"},
		{"at 2000", host("2000-01-01T00:00:00Z"), ""},
		{"at a day ahead", host(bT0.Add(MaxRequestTimeAhead).Format(time.RFC3339)), ""},
		{"at more than a day ahead", host(bT0.Add(MaxRequestTimeAhead + time.Second).Format(time.RFC3339)), "at"},
		{"prometheus startsAt 1700", prom("1700-01-01T00:00:00Z", ""), "at"},
		{"prometheus far endsAt", prom("2026-03-01T11:00:00Z", "9999-12-31T23:59:59Z"), ""},
	} {
		err := c.o.ValidateAt(3, bT0)
		wantObservationField(t, c.name, err, 3, c.field)
	}
}

func TestPostableAlertTimesBounded(t *testing.T) {
	alert := func(starts, ends string) PostableAlert {
		a := PostableAlert{Labels: Labels{"alertname": "S1"}}
		if starts != "" {
			a.StartsAt = bTime(starts)
		}
		if ends != "" {
			a.EndsAt = bTime(ends)
		}
		return a
	}
	for _, c := range []struct {
		name  string
		a     PostableAlert
		field string
	}{
		{"startsAt year 1 (the flood of the report)", alert("0001-01-02T00:00:00Z", ""), "startsAt"},
		{"startsAt 1800", alert("1800-01-01T00:00:00Z", ""), "startsAt"},
		{"endsAt 1999", alert("2026-03-01T11:00:00Z", "1999-01-01T00:00:00Z"), "endsAt"},
		{"startsAt next year", alert("2027-03-01T00:00:00Z", ""), "startsAt"},
		{"zero startsAt is no time", alert("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"), ""},
		{"startsAt 2000, endsAt 9999", alert("2000-01-01T00:00:00Z", "9999-12-31T00:00:00Z"), ""},
	} {
		err := c.a.CheckTimes(7, bT0)
		wantObservationField(t, c.name, err, 7, c.field)
	}
}

func TestWindowAndSilenceTimesBounded(t *testing.T) {
	for _, c := range []struct {
		name, start, end, field string
	}{
		{"start in 1700", "1700-01-01T00:00:00Z", "2030-01-01T00:00:00Z", "startDate"},
		{"start a second before 2000", "1999-12-31T23:59:59Z", "2030-01-01T00:00:00Z", "startDate"},
		{"start 2000, end 9999", "2000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", ""},
	} {
		w := MaintenanceWindow{}
		in := MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, StartDate: bTime(c.start), EndDate: bTime(c.end)}
		err := in.Apply(&w, true, bT0)
		name, value := "alertname", "S1"
		s := PostableSilence{Matchers: []LabelMatcherInput{{Name: &name, Value: &value}}, CreatedBy: "amtool", Comment: "c",
			StartsAt: bTime(c.start), EndsAt: bTime(c.end)}
		serr := s.Apply(&MaintenanceWindow{}, bT0)
		if c.field == "" {
			if err != nil || serr != nil {
				t.Errorf("%s: refused: %v / %v", c.name, err, serr)
			}
			continue
		}
		wantError(t, err, CodeInvalidDate, c.field)
		wantError(t, serr, CodeInvalidDate, map[string]string{"startDate": "startsAt", "endDate": "endsAt"}[c.field])
	}
	// An update is checked too, and a refused one leaves the window as it was.
	w := MaintenanceWindow{AlertTypeNames: []string{"HOST"}, StartDate: At(bT0), EndDate: At(bT0.Add(time.Hour))}
	before := w
	err := MaintenanceWindowInput{StartDate: bTime("1700-01-01")}.Apply(&w, false, bT0)
	wantError(t, err, CodeInvalidDate, "startDate")
	if w.StartDate != before.StartDate {
		t.Errorf("a refused update changed the window: %+v", w)
	}
}

// delayMin and intervalMin are bounded by a year of minutes; what a client meant as "never"
// (2147483647) is refused rather than wrapped into "now".
func TestNotificationDelayAndIntervalBounded(t *testing.T) {
	for _, c := range []struct {
		fields map[string]any
		code   string
		field  string
	}{
		{map[string]any{"delayMin": 2147483647}, CodeInvalidAttribute, "notifications[0].delayMin"},
		{map[string]any{"delayMin": MaxDelayMin + 1}, CodeInvalidAttribute, "notifications[0].delayMin"},
		{map[string]any{"intervalMin": 307445735}, CodeNotificationIntervalRange, "notifications[0].intervalMin"},
		{map[string]any{"intervalMin": MaxIntervalMin + 1}, CodeNotificationIntervalRange, "notifications[0].intervalMin"},
		{map[string]any{"delayMin": MaxDelayMin, "intervalMin": MaxIntervalMin}, "", ""},
	} {
		fields := map[string]any{"emailAddress": "ops@example.com"}
		for k, v := range c.fields {
			fields[k] = v
		}
		for _, global := range []bool{false, true} {
			n, err := notificationInput(t, "EMAIL", fields).Validate("notifications[0]", NotificationRules{Global: global})
			if c.code == "" {
				if err != nil || n.DelayMin != MaxDelayMin || n.IntervalMin != MaxIntervalMin {
					t.Errorf("%v (global %v): %+v, %v", c.fields, global, n, err)
				}
				continue
			}
			wantError(t, err, c.code, c.field)
		}
	}
}

// The docs state each bound as the code has it.
func TestDocsStateTheBounds(t *testing.T) {
	thousands := func(v int) string {
		s := fmt.Sprint(v)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	}
	earliest := At(EarliestRequestTime).String()
	hours := fmt.Sprintf("%d hours", int(MaxRequestTimeAhead/time.Hour))
	for file, wants := range map[string][]string{
		"docs/security.md": {
			"a time before " + earliest, hours + " ahead of the server's clock",
			fmt.Sprintf("`delayMin` or `intervalMin` above %s (a year)", thousands(MaxIntervalMin)),
		},
		"docs/api.md": {
			"A time before `" + earliest + "` is refused", "more than " + hours + " after Herald's clock",
			fmt.Sprintf("`delayMin` (minutes after the condition starts before the first notice, 0 to %s (a year)", thousands(MaxDelayMin)),
			fmt.Sprintf("`intervalMin` (minutes between repeats, %d to %s", MinIntervalMin, thousands(MaxIntervalMin)),
			fmt.Sprintf("`intervalMin` below %d or above %s", MinIntervalMin, thousands(MaxIntervalMin)),
		},
		"docs/lifecycle.md": {
			fmt.Sprintf("Both are at most %s (a year)", thousands(MaxDelayMin)),
			"from " + earliest[:4] + " on and at most " + hours + " ahead",
		},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc := regexp.MustCompile(`\s+`).ReplaceAllString(string(b), " ")
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not say %q", file, want)
			}
		}
	}
	if MaxDelayMin != MaxIntervalMin {
		t.Errorf("the docs state one bound for both delayMin and intervalMin")
	}
}
