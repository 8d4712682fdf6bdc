package herald

// Alertmanager's API v2 shapes, the subset Prometheus and amtool use, and how they map onto
// Herald's model: a posted alert is a PROMETHEUS_ALERT observation, a silence is a maintenance
// window that carries label matchers. Pure functions, tested as tables; api/prometheus.go
// decodes, authorizes, calls the store and encodes.

import (
	"regexp"
	"time"
)

// PostableAlert is one alert of Alertmanager's POST /api/v2/alerts, as Prometheus sends it.
type PostableAlert struct {
	Labels       Labels `json:"labels"`
	Annotations  Labels `json:"annotations,omitempty"`
	StartsAt     *Time  `json:"startsAt,omitempty"`
	EndsAt       *Time  `json:"endsAt,omitempty"`
	GeneratorURL string `json:"generatorURL,omitempty"`
}

// Observation is the alert as Herald's engine takes it: firing unless its end has passed at
// now, observed at its start (now when it has none). Observation.Validate checks it.
func (a PostableAlert) Observation(now time.Time) Observation {
	firing := true
	o := Observation{EventTypeName: EventTypePrometheusAlert, Labels: a.Labels, Annotations: a.Annotations,
		GeneratorURL: a.GeneratorURL, Active: &firing}
	at := At(now)
	if a.StartsAt != nil && !a.StartsAt.IsZero() {
		at = *a.StartsAt
	}
	o.At = &at
	if a.EndsAt != nil && !a.EndsAt.IsZero() {
		end := *a.EndsAt
		o.EndsAt = &end
		firing = end.After(now)
	}
	return o
}

// CheckTimes refuses alert i when its startsAt or endsAt is out of bounds
// (RequestTimeProblem; startsAt says when it started). A zero time is no time, as in
// Alertmanager.
func (a PostableAlert) CheckTimes(i int, now time.Time) error {
	given := func(t *Time) *Time {
		if t == nil || t.IsZero() {
			return nil
		}
		return t
	}
	return checkItemTimes(i, now, itemTime{"startsAt", given(a.StartsAt), true}, itemTime{"endsAt", given(a.EndsAt), false})
}

// Alert states and silence states as Alertmanager names them.
const (
	AlertStateActive     = "active"
	AlertStateSuppressed = "suppressed"

	SilenceStateActive  = "active"
	SilenceStatePending = "pending"
	SilenceStateExpired = "expired"
)

// GettableAlert is one alert of Alertmanager's GET /api/v2/alerts.
type GettableAlert struct {
	Labels       Labels           `json:"labels"`
	Annotations  Labels           `json:"annotations"`
	StartsAt     Time             `json:"startsAt"`
	EndsAt       Time             `json:"endsAt"`
	UpdatedAt    Time             `json:"updatedAt"`
	GeneratorURL string           `json:"generatorURL,omitempty"`
	Fingerprint  string           `json:"fingerprint"`
	Receivers    []AMReceiver     `json:"receivers"`
	Status       AlertStatusShape `json:"status"`
}

// UnroutedAlert is a firing Prometheus alert that no alert configuration of its project took:
// it opens no alert, but is kept until it ends, so that GET /api/v2/alerts lists it, with no
// receiver, as Alertmanager lists every alert it holds.
type UnroutedAlert struct {
	Labels       Labels `json:"labels"`
	Annotations  Labels `json:"annotations,omitempty"`
	GeneratorURL string `json:"generatorURL,omitempty"`
	StartsAt     Time   `json:"startsAt"`
	UpdatedAt    Time   `json:"updatedAt"`
	EndsAt       Time   `json:"endsAt"` // it ends then unless reported again (ExpiresAt)
}

// UnroutedOf is Prometheus alert o, evaluated at now, as an unrouted alert: started when it
// was observed (now when it says nothing), ending at its expiry.
func UnroutedOf(o Observation, now time.Time) UnroutedAlert {
	start := At(now)
	if o.At != nil && !o.At.IsZero() {
		start = *o.At
	}
	return UnroutedAlert{Labels: o.Labels, Annotations: o.Annotations, GeneratorURL: o.GeneratorURL,
		StartsAt: start, UpdatedAt: At(now), EndsAt: At(o.ExpiresAt(now))}
}

// AMReceiver names where an alert goes: in Herald, the alert configuration that opened it.
type AMReceiver struct {
	Name string `json:"name"`
}

// AlertStatusShape is a gettable alert's status. InhibitedBy and MutedBy are always empty:
// Herald has no inhibit rules, and no time intervals besides its maintenance windows (those
// with matchers are silences).
type AlertStatusShape struct {
	State       string   `json:"state"`
	SilencedBy  []string `json:"silencedBy"`
	InhibitedBy []string `json:"inhibitedBy"`
	MutedBy     []string `json:"mutedBy"`
}

// AlertQuery is what GET /api/v2/alerts selects: alerts whose labels satisfy Filter, in the
// states asked for (Alertmanager's booleans, each true unless given false), routed to a
// receiver matching Receiver (nil: any).
type AlertQuery struct {
	Filter           []LabelMatcher
	Active, Silenced bool
	Receiver         *regexp.Regexp
}

// GettableAlerts lists the active PROMETHEUS_ALERT alerts of alerts, then the unrouted alerts
// that have not ended by now and that no listed alert has the label set of, that q selects, as
// Alertmanager shows them, with the silences (windows with matchers) that suppress each at now.
// An unrouted alert has no receiver: a receiver query leaves it out.
func GettableAlerts(alerts []Alert, unrouted []UnroutedAlert, windows []MaintenanceWindow, q AlertQuery, now time.Time) []GettableAlert {
	out := []GettableAlert{}
	routed := map[string]bool{} // the fingerprints of the active alerts
	for _, a := range alerts {
		if a.EventTypeName != EventTypePrometheusAlert || !Active(a.Status) {
			continue
		}
		g := GettableAlert{Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.Created, EndsAt: a.Resolved,
			UpdatedAt: a.Updated, GeneratorURL: a.GeneratorURL, Fingerprint: a.Fingerprint,
			Receivers: []AMReceiver{{Name: a.AlertConfigID}}}
		if g.Fingerprint == "" {
			g.Fingerprint = a.Labels.Fingerprint()
		}
		routed[g.Fingerprint] = true
		if q.Receiver != nil && !q.Receiver.MatchString(a.AlertConfigID) {
			continue
		}
		out = q.add(out, g, windows, now)
	}
	for _, u := range unrouted {
		g := GettableAlert{Labels: u.Labels, Annotations: u.Annotations, StartsAt: u.StartsAt, EndsAt: u.EndsAt,
			UpdatedAt: u.UpdatedAt, GeneratorURL: u.GeneratorURL, Fingerprint: u.Labels.Fingerprint(), Receivers: []AMReceiver{}}
		if routed[g.Fingerprint] || !now.Before(u.EndsAt.Time) || q.Receiver != nil {
			continue
		}
		out = q.add(out, g, windows, now)
	}
	return out
}

// add appends g to out, with its status at now, when q selects it.
func (q AlertQuery) add(out []GettableAlert, g GettableAlert, windows []MaintenanceWindow, now time.Time) []GettableAlert {
	if !MatchAll(q.Filter, g.Labels) {
		return out
	}
	if g.Labels == nil {
		g.Labels = Labels{}
	}
	if g.Annotations == nil {
		g.Annotations = Labels{}
	}
	g.Status = AlertStatusShape{State: AlertStateActive, SilencedBy: []string{}, InhibitedBy: []string{}, MutedBy: []string{}}
	for _, w := range windows {
		if len(w.Matchers) > 0 && w.SilencesAlert(CategoryOther, g.Labels, now) {
			g.Status.SilencedBy = append(g.Status.SilencedBy, w.ID)
		}
	}
	if len(g.Status.SilencedBy) > 0 {
		g.Status.State = AlertStateSuppressed
	}
	if (g.Status.State == AlertStateActive && !q.Active) || (g.Status.State == AlertStateSuppressed && !q.Silenced) {
		return out
	}
	return append(out, g)
}

// PostableSilence is Alertmanager's POST /api/v2/silences body: a new silence, or (with an
// id) a change to one.
type PostableSilence struct {
	ID        string              `json:"id,omitempty"`
	Matchers  []LabelMatcherInput `json:"matchers"`
	StartsAt  *Time               `json:"startsAt"`
	EndsAt    *Time               `json:"endsAt"`
	CreatedBy string              `json:"createdBy"`
	Comment   string              `json:"comment"`
}

// Apply validates s as Alertmanager does and writes it onto the window w (a new one when
// creating): matchers (ValidateSilenceMatchers), a creator and a comment, an end after the start
// and in the future, both from EarliestRequestTime on. A start in the past is now.
func (s PostableSilence) Apply(w *MaintenanceWindow, now time.Time) error {
	matchers := make([]LabelMatcher, 0, len(s.Matchers))
	for i, in := range s.Matchers {
		m, err := in.Validate("matchers", i)
		if err != nil {
			return err
		}
		matchers = append(matchers, m)
	}
	if err := ValidateSilenceMatchers(matchers); err != nil {
		return err
	}
	switch {
	case s.CreatedBy == "":
		return MissingAttribute("createdBy")
	case s.Comment == "":
		return MissingAttribute("comment")
	case s.StartsAt == nil || s.StartsAt.IsZero():
		return MissingAttribute("startsAt")
	case s.EndsAt == nil || s.EndsAt.IsZero():
		return MissingAttribute("endsAt")
	}
	if err := CheckRequestTime("startsAt", s.StartsAt, false, now); err != nil {
		return err
	}
	if err := CheckRequestTime("endsAt", s.EndsAt, false, now); err != nil {
		return err
	}
	start := *s.StartsAt
	if start.Before(now) {
		start = At(now)
	}
	if !start.Before(s.EndsAt.Time) {
		return Errorf(KindInvalid, CodeWindowStartAfterEnd, []any{start.String(), s.EndsAt.String()},
			"The start %s is not before the end %s.", start, *s.EndsAt)
	}
	w.Matchers = matchers
	w.StartDate, w.EndDate = start, *s.EndsAt
	w.CreatedBy, w.Description = s.CreatedBy, s.Comment
	w.AlertTypeNames = []string{string(CategoryPrometheus)} // shown; the matchers decide
	return nil
}

// GettableSilence is a silence as Alertmanager shows it.
type GettableSilence struct {
	ID        string         `json:"id"`
	Status    SilenceStatus  `json:"status"`
	UpdatedAt Time           `json:"updatedAt"`
	Matchers  []LabelMatcher `json:"matchers"`
	StartsAt  Time           `json:"startsAt"`
	EndsAt    Time           `json:"endsAt"`
	CreatedBy string         `json:"createdBy"`
	Comment   string         `json:"comment"`
}

// SilenceStatus is a silence's state.
type SilenceStatus struct {
	State string `json:"state"`
}

// SilenceOf shows window w (one with matchers) as a silence at now: pending before its start,
// active until its end, expired after.
func SilenceOf(w MaintenanceWindow, now time.Time) GettableSilence {
	state := SilenceStateActive
	switch {
	case now.Before(w.StartDate.Time):
		state = SilenceStatePending
	case !now.Before(w.EndDate.Time):
		state = SilenceStateExpired
	}
	return GettableSilence{ID: w.ID, Status: SilenceStatus{State: state}, UpdatedAt: w.Updated, Matchers: w.Matchers,
		StartsAt: w.StartDate, EndsAt: w.EndDate, CreatedBy: w.CreatedBy, Comment: w.Description}
}

// SilenceSelected reports whether a silence's matchers satisfy every filter matcher, as
// Alertmanager's silence listing filters: the silence's matchers read as the label set they name.
func SilenceSelected(w MaintenanceWindow, filter []LabelMatcher) bool {
	ls := Labels{}
	for _, m := range w.Matchers {
		ls[m.Name] = m.Value
	}
	return MatchAll(filter, ls)
}
