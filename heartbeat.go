package herald

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Heartbeat is a job that should report (ping) within its period, or by each time of its cron
// schedule, plus a grace time: when it goes silent, the engine opens a HEARTBEAT_MISSED alert
// about it; a ping reporting a failure opens HEARTBEAT_FAILED at once (docs/api.md#heartbeats).
type Heartbeat struct {
	ID            string         `json:"id"`
	GroupID       string         `json:"groupId"`
	Name          string         `json:"name"`
	PeriodMin     int            `json:"periodMin,omitempty"`
	Schedule      string         `json:"schedule,omitempty"`
	TimeZone      string         `json:"timeZone,omitempty"`
	GraceMin      int            `json:"graceMin"`
	LabelMatchers []LabelMatcher `json:"labelMatchers,omitempty"`
	Status        string         `json:"status"`
	Created       Time           `json:"created"`
	Updated       Time           `json:"updated"`
	LastPing      Time           `json:"lastPing,omitzero"`
	LastStart     Time           `json:"lastStart,omitzero"`
	LastFailure   Time           `json:"lastFailure,omitzero"`
	// LastBody is the start of the body of the last POST ping (at most MaxPingBody bytes).
	LastBody string `json:"lastBody,omitempty"`
	// LastDurationMs is how long the last run that ended took, from its start to its end (a
	// success or a failure) in milliseconds: the start of the same run id, or the last start
	// without one.
	LastDurationMs int64 `json:"lastDurationMs,omitempty"`
	// Runs are the runs started and not ended, oldest first, at most MaxOpenRuns: a start
	// past that many forgets the oldest.
	Runs    []HeartbeatRun `json:"runs,omitempty"`
	PingURL string         `json:"pingUrl,omitempty"`

	// Kept by the store, never shown (Public clears them): the hash of the ping token, its last
	// characters (for the masked URL), when the deadline counts from (full precision), and
	// which of the heartbeat's alerts are open.
	TokenHash string    `json:"tokenHash,omitempty"`
	TokenTail string    `json:"tokenTail,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	Missed    bool      `json:"missed,omitempty"`
	Failed    bool      `json:"failed,omitempty"`
}

// HeartbeatRun is a run of a heartbeat's job started and not ended: its run id (the ping's
// ?rid=, "" for a start without one) and when it started.
type HeartbeatRun struct {
	RID     string    `json:"rid,omitempty"`
	Started time.Time `json:"started"`
}

// Heartbeat statuses.
const (
	HeartbeatNew    = "NEW"
	HeartbeatUp     = "UP"
	HeartbeatLate   = "LATE"
	HeartbeatDown   = "DOWN"
	HeartbeatPaused = "PAUSED"
)

// The heartbeats' event types and category.
const (
	EventTypeHeartbeatMissed = "HEARTBEAT_MISSED"
	EventTypeHeartbeatFailed = "HEARTBEAT_FAILED"
)

// Bounds of a heartbeat's fields.
const (
	MaxHeartbeatPeriodMin = 44640 // 31 days
	MaxHeartbeatGraceMin  = 10080 // 7 days
	MaxHeartbeatName      = 200
	MaxPingBody           = 10 << 10
	MaxOpenRuns           = 10 // runs a heartbeat keeps started and not ended
	MaxRunID              = 64
)

// ValidRunID reports whether rid can be a ping's run id: 1 to MaxRunID letters, digits, '.',
// '_', ':' or '-' (a UUID, a job's name and number).
func ValidRunID(rid string) bool {
	if rid == "" || len(rid) > MaxRunID {
		return false
	}
	for i := range len(rid) {
		switch c := rid[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// HeartbeatOutput is the annotation of a HEARTBEAT_FAILED alert that holds the last lines of
// the failure ping's body (a job's output), for its notices.
const HeartbeatOutput = "output"

// The most of a failure ping's body its alert keeps: its last lines, within a size.
const (
	failureOutputLines = 20
	failureOutputBytes = 2048
)

// LastLines is the end of s: at most n lines (a final newline ends the last, not starts
// another) and at most max bytes, cut at a line, or else at a character.
func LastLines(s string, n, max int) string {
	s = strings.TrimRight(s, "\r\n")
	for i, lines := len(s)-1, 0; i >= 0; i-- {
		if s[i] == '\n' {
			if lines++; lines == n {
				s = s[i+1:]
				break
			}
		}
	}
	if len(s) <= max {
		return s
	}
	cut := s[len(s)-max:]
	if s[len(s)-max-1] == '\n' {
		return cut // starts a line
	}
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		return cut[i+1:]
	}
	for len(cut) > 0 && !utf8.RuneStart(cut[0]) {
		cut = cut[1:]
	}
	return cut
}

// Cron is a parsed cron schedule: the first time of it after t (in the schedule's time zone).
type Cron interface {
	Next(t time.Time) time.Time
}

// CronParser parses a cron expression in a time zone; the error names what is wrong.
type CronParser func(spec, timeZone string) (Cron, error)

// HeartbeatInput is a heartbeat as a create or update request carries it.
type HeartbeatInput struct {
	Name          *string             `json:"name"`
	PeriodMin     *int                `json:"periodMin"`
	Schedule      *string             `json:"schedule"`
	TimeZone      *string             `json:"timeZone"`
	GraceMin      *int                `json:"graceMin"`
	LabelMatchers []LabelMatcherInput `json:"labelMatchers"`
}

// Empty reports whether the request names no field (an update must name one).
func (in HeartbeatInput) Empty() bool {
	return in.Name == nil && in.PeriodMin == nil && in.Schedule == nil && in.TimeZone == nil &&
		in.GraceMin == nil && in.LabelMatchers == nil
}

// Apply validates in and applies it to h: name and graceMin, and periodMin or schedule, are
// required when creating; an update changes only what it names (periodMin replaces a schedule
// and the other way round). parse checks a schedule and its time zone.
func (in HeartbeatInput) Apply(h *Heartbeat, creating bool, parse CronParser) error {
	if creating {
		switch {
		case in.Name == nil:
			return MissingAttribute("name")
		case in.PeriodMin == nil && in.Schedule == nil:
			return MissingAttribute("periodMin")
		case in.GraceMin == nil:
			return MissingAttribute("graceMin")
		}
	} else if in.Empty() {
		return Errorf(KindInvalid, CodeMissingAttribute, []any{"name"},
			"At least one of name, periodMin, schedule, timeZone, graceMin and labelMatchers must be given.")
	}
	if in.Name != nil {
		n := *in.Name
		if n == "" || len(n) > MaxHeartbeatName || !utf8.ValidString(n) || strings.IndexFunc(n, unicode.IsControl) >= 0 {
			return InvalidAttribute("name", "name is 1 to %d bytes of printable UTF-8.", MaxHeartbeatName)
		}
		h.Name = n
	}
	if in.PeriodMin != nil && in.Schedule != nil {
		return InvalidAttribute("schedule", "Give periodMin or schedule, not both.")
	}
	if in.PeriodMin != nil {
		if *in.PeriodMin < 1 || *in.PeriodMin > MaxHeartbeatPeriodMin {
			return InvalidAttribute("periodMin", "periodMin is 1 to %d minutes.", MaxHeartbeatPeriodMin)
		}
		h.PeriodMin, h.Schedule, h.TimeZone = *in.PeriodMin, "", ""
	}
	if in.Schedule != nil {
		if *in.Schedule == "" {
			return InvalidAttribute("schedule", "schedule is a cron expression.")
		}
		h.Schedule, h.PeriodMin = *in.Schedule, 0
		if h.TimeZone == "" {
			h.TimeZone = "UTC"
		}
	}
	if in.TimeZone != nil {
		if h.Schedule == "" {
			return InvalidAttribute("timeZone", "timeZone applies only to a schedule.")
		}
		h.TimeZone = *in.TimeZone
	}
	if h.Schedule != "" {
		if _, err := parse(h.Schedule, ""); err != nil {
			return InvalidAttribute("schedule", "The cron expression %q does not parse: %v.", h.Schedule, err)
		}
		if _, err := parse(h.Schedule, h.TimeZone); err != nil {
			return InvalidAttribute("timeZone", "Unknown time zone %q.", h.TimeZone)
		}
	}
	if in.GraceMin != nil {
		if *in.GraceMin < 1 || *in.GraceMin > MaxHeartbeatGraceMin {
			return InvalidAttribute("graceMin", "graceMin is 1 to %d minutes.", MaxHeartbeatGraceMin)
		}
		h.GraceMin = *in.GraceMin
	}
	if in.LabelMatchers != nil {
		ms := make([]LabelMatcher, 0, len(in.LabelMatchers))
		for i, m := range in.LabelMatchers {
			lm, err := m.Validate("labelMatchers", i)
			if err != nil {
				return err
			}
			ms = append(ms, lm)
		}
		if len(ms) > 0 {
			if err := ValidateSilenceMatchers(ms); err != nil {
				return InvalidAttribute("labelMatchers", "At least one matcher must not match the empty string: these would match every alert.")
			}
		}
		h.LabelMatchers = ms
	}
	return nil
}

// Due is when h is next expected to ping (after Since): Since plus its period, or the next
// time of its schedule (cron, nil for a heartbeat with a period). minute is HERALD_MINUTE.
func (h Heartbeat) Due(minute time.Duration, cron Cron) time.Time {
	if cron != nil {
		return cron.Next(h.Since)
	}
	return h.Since.Add(minutes(h.PeriodMin, minute))
}

// Deadline is when h, not pinged since Since, is missed: its due time plus its grace. A paused
// heartbeat, or one already missed, has none (zero).
func (h Heartbeat) Deadline(minute time.Duration, cron Cron) time.Time {
	if h.Status == HeartbeatPaused || h.Missed {
		return time.Time{}
	}
	return h.Due(minute, cron).Add(minutes(h.GraceMin, minute))
}

// StatusAt is the status h reads back at now: PAUSED, DOWN while one of its alerts is open,
// LATE once past its due time (within its grace), NEW before its first ping, else UP.
func (h Heartbeat) StatusAt(now time.Time, minute time.Duration, cron Cron) string {
	switch {
	case h.Status == HeartbeatPaused:
		return HeartbeatPaused
	case h.Missed || h.Failed:
		return HeartbeatDown
	case !now.Before(h.Due(minute, cron)):
		return HeartbeatLate
	case h.LastPing.IsZero():
		return HeartbeatNew
	}
	return HeartbeatUp
}

// Public is h as the API shows it: the stored-only fields cleared.
func (h Heartbeat) Public() Heartbeat {
	h.TokenHash, h.TokenTail, h.Since, h.Missed, h.Failed = "", "", time.Time{}, false, false
	return h
}

// PingKind is what a ping reports.
type PingKind int

// The kinds of ping: success (the plain URL, or exit code 0), a run started, a failure (/fail,
// or a non-zero exit code).
const (
	PingSuccess PingKind = iota
	PingStart
	PingFailure
)

// Ping applies a ping of kind at now to h, without a run id (PingRun).
func (h *Heartbeat) Ping(kind PingKind, body string, now time.Time) []Observation {
	return h.PingRun(kind, "", body, now)
}

// PingRun applies a ping of kind of run rid ("" for none) at now to h and returns the
// observations it makes: a success clears the heartbeat's open alerts, a failure opens
// HEARTBEAT_FAILED (unless open already), a start changes no alert. A start opens run rid
// (again, if it is open); a success or failure ends it, if open, and records its duration.
// A paused heartbeat records the ping and makes none.
func (h *Heartbeat) PingRun(kind PingKind, rid, body string, now time.Time) []Observation {
	now = now.Round(0)
	at := At(now)
	if kind == PingStart {
		h.LastStart = at
		h.Runs = append(h.endRun(rid), HeartbeatRun{RID: rid, Started: now})
		if len(h.Runs) > MaxOpenRuns {
			h.Runs = h.Runs[len(h.Runs)-MaxOpenRuns:]
		}
		return nil
	}
	for _, r := range h.Runs {
		if r.RID == rid {
			h.LastDurationMs = max(0, now.Sub(r.Started).Milliseconds())
		}
	}
	h.Runs = h.endRun(rid)
	h.LastPing, h.LastBody = at, body
	if h.Status == HeartbeatPaused {
		return nil
	}
	h.Since = now
	var obs []Observation
	if kind == PingFailure {
		h.LastFailure = at
		if !h.Failed {
			h.Failed = true
			o := h.Observation(EventTypeHeartbeatFailed, true, now)
			if out := LastLines(body, failureOutputLines, failureOutputBytes); out != "" {
				o.Annotations = Labels{HeartbeatOutput: out}
			}
			obs = append(obs, o)
		}
		h.Status = HeartbeatDown
		return obs
	}
	obs = h.CloseAlerts(now)
	h.Status = HeartbeatUp
	return obs
}

// endRun is h's runs without run rid (a new slice: h's may be shared with a copy).
func (h *Heartbeat) endRun(rid string) []HeartbeatRun {
	var out []HeartbeatRun
	for _, r := range h.Runs {
		if r.RID != rid {
			out = append(out, r)
		}
	}
	return out
}

// CloseAlerts closes h's open alerts: the observations that clear them (about its name as it
// is: call it before a rename, so that the alerts of the old name close).
func (h *Heartbeat) CloseAlerts(now time.Time) []Observation {
	var obs []Observation
	if h.Missed {
		obs = append(obs, h.Observation(EventTypeHeartbeatMissed, false, now))
	}
	if h.Failed {
		obs = append(obs, h.Observation(EventTypeHeartbeatFailed, false, now))
	}
	h.Missed, h.Failed = false, false
	return obs
}

// Pause stops watching h, closing its open alerts.
func (h *Heartbeat) Pause(now time.Time) []Observation {
	obs := h.CloseAlerts(now)
	h.Status = HeartbeatPaused
	return obs
}

// Resume watches h again from now, as a new heartbeat.
func (h *Heartbeat) Resume(now time.Time) {
	if h.Status == HeartbeatPaused {
		h.Status, h.Since = HeartbeatNew, now.Round(0)
	}
}

// Miss marks h missed at now: the observation that opens HEARTBEAT_MISSED.
func (h *Heartbeat) Miss(now time.Time) Observation {
	h.Missed, h.Status = true, HeartbeatDown
	return h.Observation(EventTypeHeartbeatMissed, true, now)
}

// Observation is the condition typ of h, active or cleared, as the engine evaluates it.
func (h Heartbeat) Observation(typ string, active bool, now time.Time) Observation {
	at := At(now)
	return Observation{EventTypeName: typ, Active: &active, HeartbeatName: h.Name, At: &at}
}
