package herald

// The alert lifecycle (docs/lifecycle.md) as pure functions of an alert, its schedule, its rule and
// a clock: what the engine does to an alert at one moment, and when it must look again. The
// engine stores the alert and the schedule, sends the notices a Step names, records the audit
// events its flags name, and calls Advance again at Wake.

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"time"
)

// Schedule is the engine's timing state of one active alert, kept beside the alert.
type Schedule struct {
	Detected time.Time   `json:"detected"` // when the condition was first reported (full precision); delays count from here
	Next     []time.Time `json:"next"`     // per notification of the rule (same index): when it is next due; zero = never again
	Sent     []int       `json:"sent"`     // per notification: notices sent so far
	// Expires is when an alert that ends unless reported again (a Prometheus alert, at its
	// endsAt) closes; zero: it holds until it is reported cleared. Re-reports move it.
	Expires time.Time `json:"expires,omitzero"`
}

// Step is what happens to an alert at one moment: the alert and schedule after it, the notices
// to send now, what happened (for audit events), and when to look at the alert next.
type Step struct {
	Alert          Alert
	Schedule       Schedule
	Notify         []int     // indexes of the rule's notifications to send an open/repeat notice to now
	Resolve        []int     // indexes to send a resolution notice to now
	Opened         bool      // the alert became OPEN
	Closed         bool      // the alert became CLOSED
	Cancelled      bool      // the alert became CANCELLED
	Unacknowledged bool      // an acknowledgement expired
	Silenced       []int     // indexes whose due notice (or resolution) a maintenance window withheld now
	Wake           time.Time // when Advance must be called next; zero = never (the alert ended)
}

// NewAlert is the alert a rule opens for observation o at now: TRACKING, with the target fields
// of o (hostId, hostnameAndPort, replicaSetName, clusterId, clusterName, shardName,
// sourceTypeName; for a measurement metricName and currentValue {value, units}; for a
// condition its currentValue; for a Prometheus alert its labels, fingerprint, annotations and
// generator URL), created/updated At(now), and a schedule whose Next[i] is
// detected + delayMin_i × minute. The caller sets the schedule's Expires (ExpiresAt of the
// observation at the time it is evaluated: now may be an earlier startsAt). Call Advance right
// after to open it at once when a delay is 0.
//
// The alert's event type is the rule's (OUTSIDE_METRIC_THRESHOLD for a measurement). Detected
// is now with any monotonic reading stripped, so that the schedule compares the same before and
// after it is stored.
func NewAlert(id, groupID, configID string, rule AlertRule, o Observation, minute time.Duration, now time.Time) (Alert, Schedule) {
	now = now.Round(0)
	a := Alert{
		ID:              id,
		GroupID:         groupID,
		AlertConfigID:   configID,
		EventTypeName:   rule.EventTypeName,
		Status:          StatusTracking,
		Created:         At(now),
		Updated:         At(now),
		HostID:          o.HostID,
		HostnameAndPort: o.HostnameAndPort,
		ReplicaSetName:  o.ReplicaSetName,
		ClusterID:       o.ClusterID,
		ClusterName:     o.ClusterName,
		ShardName:       o.ShardName,
		SourceTypeName:  o.SourceTypeName,
		HeartbeatName:   o.HeartbeatName,
		CurrentValue:    observedValue(o),
	}
	if o.IsPrometheus() {
		a.Labels, a.Annotations = maps.Clone(o.Labels), maps.Clone(o.Annotations)
		a.Fingerprint, a.GeneratorURL = o.Labels.Fingerprint(), o.GeneratorURL
	}
	if o.HeartbeatName != "" && o.Annotations != nil {
		a.Annotations = maps.Clone(o.Annotations) // a failure's output
	}
	if a.EventTypeName == "" {
		a.EventTypeName = o.EventTypeName
	}
	if o.IsMeasurement() {
		a.MetricName = o.MetricName
		if a.EventTypeName == "" {
			a.EventTypeName = "OUTSIDE_METRIC_THRESHOLD"
		}
	}
	s := Schedule{
		Detected: now,
		Next:     make([]time.Time, len(rule.Notifications)),
		Sent:     make([]int, len(rule.Notifications)),
	}
	for i, n := range rule.Notifications {
		s.Next[i] = firstSlot(now, n, minute)
	}
	return a, s
}

// observedValue is the currentValue o reports: a measurement's value and units, or a
// condition's currentValue (copied, so the alert never shares it with the observation).
// RefreshesNothing reports whether o, re-reporting the condition of an active alert, leaves
// the alert as it is whatever it holds (Refresh returns it unchanged): o carries no value and
// is no Prometheus alert.
func RefreshesNothing(o Observation) bool { return !o.IsPrometheus() && observedValue(o) == nil }

func observedValue(o Observation) *CurrentValue {
	if o.IsMeasurement() {
		if o.Value == nil {
			return nil
		}
		return &CurrentValue{Number: *o.Value, Units: o.Units}
	}
	if o.CurrentValue == nil {
		return nil
	}
	v := *o.CurrentValue
	return &v
}

// Advance is the alert at now. Rules (docs/lifecycle.md):
//   - not active (CLOSED/CANCELLED): nothing, Wake zero.
//   - expired (Schedule.Expires at or before now: Prometheus stopped reporting it): Clear.
//   - TRACKING until the smallest delayMin has passed since Detected, then OPEN (Opened).
//   - acknowledged (AcknowledgedUntil after now): nothing is sent; Wake = AcknowledgedUntil.
//   - acknowledgement expired (AcknowledgedUntil at or before now): clear the three acknowledgement
//     fields (Unacknowledged), then go on as unacknowledged: a notification that never sent its first
//     notice and whose time has passed sends it now; repeats resume at the next slot of their cadence
//     (no notice just because the acknowledgement ended).
//   - silenced (a maintenance window covers the alert now): nothing is sent; every due slot is skipped
//     to the next slot of its cadence after now, so when the window ends the alert resumes at its next
//     due time without a burst of the repeats the window swallowed.
//   - otherwise every notification with Next[i] <= now is notified (Notify), Sent[i]++, and Next[i]
//     becomes the first slot of its cadence strictly after now (a late wake-up never causes a burst).
//   - the cadence of notification i: Detected + delayMin_i×minute + k×intervalMin_i×minute, k >= 0,
//     each product saturating at the longest time.Duration (minutes), exact for any Detected.
//   - Wake = the earliest Next[i] (AcknowledgedUntil while acknowledged); Updated = At(now) when anything changed.
//
// Details:
//   - The acknowledgement covers the time before AcknowledgedUntil, so on expiry a repeat skips
//     the slots before AcknowledgedUntil (the ones the acknowledgement swallowed); a slot at or
//     after it is an ordinary due slot, sent once (as any late wake-up) if it has passed.
//   - A TRACKING alert opens at its time whether or not it is acknowledged (acknowledging stops
//     notices, never tracking); while it is TRACKING and acknowledged, Wake is the earlier of the
//     opening time and AcknowledgedUntil.
//   - A notification with intervalMin 0 or less never repeats: after its first notice its Next is
//     zero. An alert with nothing more to send has Wake zero until it is acknowledged, cleared or
//     cancelled.
//   - Updated changes when the alert does (opened, unacknowledged, notified); skipping slots under
//     a maintenance window changes only the schedule.
//   - A schedule whose length does not match the rule (it should not happen: editing a rule
//     cancels its alerts) is cut or extended, a new notification starting at its first slot.
//   - The inputs are never modified: the Step holds fresh slices.
//   - Whatever the arithmetic computed, a step sends no notification a second notice in one
//     slot (guardSlots).
func Advance(a Alert, s Schedule, rule AlertRule, silenced bool, minute time.Duration, now time.Time) Step {
	if !Active(a.Status) {
		return Step{Alert: a, Schedule: s}
	}
	if s.Expired(now) {
		return Clear(a, s, silenced, now)
	}
	s = fitSchedule(s, rule, minute)
	st := Step{Alert: a, Schedule: s}
	changed := false

	openAt := s.Detected.Add(minutes(minDelay(rule), minute))
	if a.Status == StatusTracking && !now.Before(openAt) {
		st.Alert.Status = StatusOpen
		st.Opened = true
		changed = true
	}

	if ack := st.Alert.AcknowledgedUntil; !ack.IsZero() && !now.Before(ack.Time) {
		st.Alert.AcknowledgedUntil = Time{}
		st.Alert.AcknowledgementComment = ""
		st.Alert.AcknowledgingUsername = ""
		st.Unacknowledged = true
		changed = true
		for i, n := range rule.Notifications {
			if s.Sent[i] > 0 && !s.Next[i].IsZero() && s.Next[i].Before(ack.Time) {
				s.Next[i] = slotFrom(s.Detected, n, minute, ack.Time, false)
			}
		}
	}

	var due []time.Time // the slots due before this step, for guardSlots
	switch {
	case st.Alert.Acknowledged(now):
		st.Wake = st.Alert.AcknowledgedUntil.Time
		if st.Alert.Status == StatusTracking && openAt.Before(st.Wake) {
			st.Wake = openAt
		}
	case st.Alert.Status != StatusOpen:
		// Still TRACKING: nothing is due before the alert opens.
		st.Wake = openAt
	default:
		due = slices.Clone(s.Next)
		for i, n := range rule.Notifications {
			if s.Next[i].IsZero() || s.Next[i].After(now) {
				continue
			}
			if silenced {
				st.Silenced = append(st.Silenced, i)
			} else {
				st.Notify = append(st.Notify, i)
				s.Sent[i]++
				changed = true
			}
			// Notified or silenced, this slot is spent (a silenced first notice waits for the
			// next slot too).
			s.Next[i] = slotFrom(s.Detected, n, minute, now, true)
		}
		st.Wake = earliest(s.Next)
	}
	st.Wake = earliest([]time.Time{st.Wake, s.Expires})
	if changed {
		st.Alert.Updated = At(now)
	}
	st.Schedule = s
	if len(st.Notify) > 0 || len(st.Silenced) > 0 {
		st = guardSlots(st, due, rule, minute, now)
	}
	return st
}

// guardSlots keeps step st to one notice per notification per slot, whatever the arithmetic
// that made it computed. due is the schedule's Next before the step. A notification notified
// at now must have been due (due[i] not zero, not after now), or its notice is dropped; one
// notified or silenced at now has spent the slot due[i], and its next slot must be after now
// and at least its interval after due[i], or it becomes now plus the interval (zero, never
// again, for a notification that does not repeat). Wake follows the schedule. A slip in the
// cadence can then make a notice late, never a second one in a slot: no flood.
func guardSlots(st Step, due []time.Time, rule AlertRule, minute time.Duration, now time.Time) Step {
	wasDue := func(i int) bool { return i >= 0 && i < len(due) && !due[i].IsZero() && !due[i].After(now) }
	fixed := false
	next, sent := slices.Clone(st.Schedule.Next), slices.Clone(st.Schedule.Sent)
	var notify []int
	for _, i := range st.Notify {
		if !wasDue(i) {
			if i >= 0 && i < len(sent) && sent[i] > 0 {
				sent[i]--
			}
			fixed = true
			continue
		}
		notify = append(notify, i)
	}
	for _, i := range slices.Concat(notify, st.Silenced) {
		if !wasDue(i) || i >= len(next) || i >= len(rule.Notifications) || next[i].IsZero() {
			continue
		}
		iv := minutes(rule.Notifications[i].IntervalMin, minute)
		switch {
		case iv <= 0:
			next[i] = time.Time{}
		case !next[i].After(now) || next[i].Before(due[i].Add(iv)):
			next[i] = now.Round(0).Add(iv)
		default:
			continue
		}
		fixed = true
	}
	if !fixed {
		return st
	}
	st.Notify, st.Schedule.Next, st.Schedule.Sent = notify, next, sent
	st.Wake = earliest(append(slices.Clone(next), st.Schedule.Expires))
	return st
}

// Clear is the condition clearing at now: CLOSED with Resolved = At(now). A TRACKING alert ends
// without any notice; an OPEN one sends a resolution notice to every notification that sent at
// least one notice (also while acknowledged), unless silenced. Wake zero.
//
// A closed or cancelled alert stays as it is. The schedule of the closed alert has every Next
// zero (never again); Sent is kept.
func Clear(a Alert, s Schedule, silenced bool, now time.Time) Step {
	if !Active(a.Status) {
		return Step{Alert: a, Schedule: s}
	}
	st := Step{Alert: a, Schedule: endSchedule(s), Closed: true}
	if a.Status == StatusOpen {
		for i, n := range s.Sent {
			switch {
			case n == 0:
			case silenced:
				st.Silenced = append(st.Silenced, i)
			default:
				st.Resolve = append(st.Resolve, i)
			}
		}
	}
	st.Alert.Status = StatusClosed
	st.Alert.Resolved = At(now)
	st.Alert.Updated = At(now)
	return st
}

// Cancel is the configuration being disabled, edited or deleted: CANCELLED, no notice. Wake zero.
//
// A closed or cancelled alert stays as it is. The schedule of the cancelled alert has every
// Next zero; Sent is kept.
func Cancel(a Alert, s Schedule, now time.Time) Step {
	if !Active(a.Status) {
		return Step{Alert: a, Schedule: s}
	}
	st := Step{Alert: a, Schedule: endSchedule(s), Cancelled: true}
	st.Alert.Status = StatusCancelled
	st.Alert.Updated = At(now)
	return st
}

// Refresh records a repeated report of a holding condition (new currentValue) without changing
// the alert's state or schedule.
//
// Updated moves only when the value changes, so that an agent repeating the same report does
// not rewrite the alert; a report without a value keeps the alert's. A Prometheus alert's
// re-report records its annotations and generator URL when they changed (its expiry is the
// schedule's: the caller moves it). An ended alert is left as it is.
func Refresh(a Alert, o Observation, now time.Time) Alert {
	if !Active(a.Status) {
		return a
	}
	if o.IsPrometheus() {
		return refreshPrometheus(a, o, now)
	}
	v := observedValue(o)
	if v == nil || (a.CurrentValue != nil && *a.CurrentValue == *v) {
		return a
	}
	a.CurrentValue = v
	a.Updated = At(now)
	return a
}

// Wake is when an active alert in schedule s must be looked at next if nothing happens to it
// meanwhile: the end of its acknowledgement while it is acknowledged (or its opening, if a
// TRACKING alert opens sooner), else its earliest next notice (for a TRACKING alert, when it
// opens), or its expiry when that comes first. Zero for an ended alert or
// one with nothing more to send. It is the Wake of the last Step that produced a and s, so a
// change that does not step the alert (a re-report, an untouched alert) keeps its due time.
func Wake(a Alert, s Schedule) time.Time {
	return earliest([]time.Time{WakeIfRenewed(a, s), s.Expires})
}

// WakeIfRenewed is Wake of an alert whose expiry keeps being moved away: when its lifecycle
// alone (opening, repeats, the acknowledgement's end) needs it looked at. The store keeps it
// beside the expiry so that a re-report moves the due time without reading the alert.
func WakeIfRenewed(a Alert, s Schedule) time.Time {
	if !Active(a.Status) {
		return time.Time{}
	}
	w := earliest(s.Next)
	if a.Status == StatusTracking && len(s.Next) == 0 {
		w = s.Detected // a rule without notifications opens at once
	}
	if ack := a.AcknowledgedUntil; !ack.IsZero() && (a.Status != StatusTracking || w.IsZero() || ack.Before(w)) {
		w = ack.Time // an acknowledged OPEN alert sends nothing before its acknowledgement ends
	}
	return w
}

// firstSlot is when notification n is first due for a condition detected at detected.
func firstSlot(detected time.Time, n Notification, minute time.Duration) time.Time {
	return detected.Add(minutes(n.DelayMin, minute))
}

// slotFrom is the first slot of n's cadence at or after t (strictly after t when strict); zero
// when the cadence has no such slot (no repeats and the first slot is earlier).
//
// It is exact for any two times: it adds to t what is left of the interval t falls in, the
// span from the first slot to t being taken modulo the interval (spanMod), however long the
// span. A slot past the last time a time.Time holds is that time (time.Time.Add saturates).
func slotFrom(detected time.Time, n Notification, minute time.Duration, t time.Time, strict bool) time.Time {
	base := firstSlot(detected, n, minute)
	if base.After(t) || (!strict && base.Equal(t)) {
		return base
	}
	iv := minutes(n.IntervalMin, minute)
	if iv <= 0 {
		return time.Time{}
	}
	t = t.Round(0) // a schedule keeps no monotonic reading (NewAlert)
	r := spanMod(base, t, iv)
	if r == 0 && !strict {
		return t
	}
	return t.Add(iv - r)
}

// spanMod is (to − from) mod d for from not after to and d > 0, for any two times: the span
// may be longer than a time.Duration holds (t.Sub saturates), so it is then taken in 128 bits.
func spanMod(from, to time.Time, d time.Duration) time.Duration {
	if span := to.Sub(from); span < math.MaxInt64 {
		return span % d
	}
	// The seconds between them, less than 2^64: exact in uint64 arithmetic even where Unix
	// wraps, since both wrap alike.
	secs := uint64(to.Unix()) - uint64(from.Unix())
	nanos := int64(to.Nanosecond()) - int64(from.Nanosecond())
	if nanos < 0 {
		secs--
		nanos += int64(time.Second)
	}
	hi, lo := bits.Mul64(secs, uint64(time.Second))
	lo, carry := bits.Add64(lo, uint64(nanos), 0)
	return time.Duration(bits.Rem64(hi+carry, lo, uint64(d)))
}

// minutes is n minutes of length minute, saturating at the longest time.Duration rather than
// wrapping (a wrapped delay or interval can come out negative or tiny); zero for n or minute
// not positive.
func minutes(n int, minute time.Duration) time.Duration {
	if n <= 0 || minute <= 0 {
		return 0
	}
	if int64(n) > int64(math.MaxInt64/minute) {
		return math.MaxInt64
	}
	return time.Duration(n) * minute
}

// minDelay is the smallest delayMin of the rule's notifications (0 without notifications).
func minDelay(rule AlertRule) int {
	if len(rule.Notifications) == 0 {
		return 0
	}
	m := max(rule.Notifications[0].DelayMin, 0)
	for _, n := range rule.Notifications[1:] {
		m = min(m, max(n.DelayMin, 0))
	}
	return m
}

// earliest is the earliest non-zero time of ts, zero when there is none.
func earliest(ts []time.Time) time.Time {
	var e time.Time
	for _, t := range ts {
		if !t.IsZero() && (e.IsZero() || t.Before(e)) {
			e = t
		}
	}
	return e
}

// fitSchedule is a copy of s with one Next and Sent per notification of rule.
func fitSchedule(s Schedule, rule AlertRule, minute time.Duration) Schedule {
	n := len(rule.Notifications)
	out := Schedule{Detected: s.Detected, Next: make([]time.Time, n), Sent: make([]int, n), Expires: s.Expires}
	for i := range n {
		if i < len(s.Next) {
			out.Next[i] = s.Next[i]
		} else {
			out.Next[i] = firstSlot(s.Detected, rule.Notifications[i], minute)
		}
		if i < len(s.Sent) {
			out.Sent[i] = s.Sent[i]
		}
	}
	return out
}

// endSchedule is a copy of s with nothing due any more.
func endSchedule(s Schedule) Schedule {
	return Schedule{Detected: s.Detected, Next: make([]time.Time, len(s.Next)), Sent: slices.Clone(s.Sent), Expires: s.Expires}
}
