package herald

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

var lcT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// lcM is lcT0 plus x minutes.
func lcM(x float64) time.Time { return lcT0.Add(time.Duration(x * float64(time.Minute))) }

func lcRule(ns ...[2]int) AlertRule {
	r := AlertRule{Enabled: true, EventTypeName: "HOST_DOWN"}
	for _, n := range ns {
		r.Notifications = append(r.Notifications, Notification{TypeName: "EMAIL", DelayMin: n[0], IntervalMin: n[1], Fields: map[string]string{"emailAddress": "ops@example.com"}})
	}
	return r
}

func lcAlert(status string) Alert {
	return Alert{ID: "a1", GroupID: "g1", AlertConfigID: "c1", EventTypeName: "HOST_DOWN", Status: status,
		Created: At(lcT0), Updated: At(lcT0), HostID: "h1", HostnameAndPort: "db1:27017"}
}

func lcAcked(status string, until time.Time) Alert {
	a := lcAlert(status)
	a.AcknowledgedUntil, a.AcknowledgementComment, a.AcknowledgingUsername = At(until), "on it", "jane"
	return a
}

func lcSched(next []time.Time, sent []int) Schedule {
	return Schedule{Detected: lcT0, Next: next, Sent: sent}
}

func ts(t ...time.Time) []time.Time { return t }

// lcStep is the expected outcome of one step: the alert is the input alert changed by alert.
type lcStep struct {
	alert          func(*Alert)
	notify         []int
	resolve        []int
	opened         bool
	closed         bool
	cancelled      bool
	unacknowledged bool
	silenced       []int
	next           []time.Time
	sent           []int
	wake           time.Time
}

func checkStep(t *testing.T, in Alert, got Step, want lcStep) {
	t.Helper()
	wantAlert := in
	if want.alert != nil {
		want.alert(&wantAlert)
	}
	if !reflect.DeepEqual(got.Alert, wantAlert) {
		t.Errorf("alert\n got %+v\nwant %+v", got.Alert, wantAlert)
	}
	if !slices.Equal(got.Notify, want.notify) {
		t.Errorf("Notify = %v, want %v", got.Notify, want.notify)
	}
	if !slices.Equal(got.Resolve, want.resolve) {
		t.Errorf("Resolve = %v, want %v", got.Resolve, want.resolve)
	}
	if !slices.Equal(got.Silenced, want.silenced) {
		t.Errorf("Silenced = %v, want %v", got.Silenced, want.silenced)
	}
	if got.Opened != want.opened || got.Closed != want.closed || got.Cancelled != want.cancelled || got.Unacknowledged != want.unacknowledged {
		t.Errorf("flags opened/closed/cancelled/unacknowledged = %v/%v/%v/%v, want %v/%v/%v/%v",
			got.Opened, got.Closed, got.Cancelled, got.Unacknowledged, want.opened, want.closed, want.cancelled, want.unacknowledged)
	}
	if !slices.EqualFunc(got.Schedule.Next, want.next, time.Time.Equal) {
		t.Errorf("Next = %v, want %v", got.Schedule.Next, want.next)
	}
	if !slices.Equal(got.Schedule.Sent, want.sent) {
		t.Errorf("Sent = %v, want %v", got.Schedule.Sent, want.sent)
	}
	if !got.Schedule.Detected.Equal(lcT0) {
		t.Errorf("Detected = %v, want %v", got.Schedule.Detected, lcT0)
	}
	if !got.Wake.Equal(want.wake) {
		t.Errorf("Wake = %v, want %v", got.Wake, want.wake)
	}
}

func updatedAt(now time.Time, status string) func(*Alert) {
	return func(a *Alert) {
		a.Updated = At(now)
		if status != "" {
			a.Status = status
		}
	}
}

func unacked(now time.Time) func(*Alert) {
	return func(a *Alert) {
		a.Updated = At(now)
		a.AcknowledgedUntil, a.AcknowledgementComment, a.AcknowledgingUsername = Time{}, "", ""
	}
}

func TestAdvance(t *testing.T) {
	two := lcRule([2]int{0, 10}, [2]int{15, 30}) // slots: #0 at 0,10,20,...; #1 at 15,45,75,...
	tests := []struct {
		name     string
		alert    Alert
		sched    Schedule
		rule     AlertRule
		silenced bool
		now      time.Time
		want     lcStep
	}{
		{name: "delay 0 opens and notifies at once",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcT0), []int{0}), rule: lcRule([2]int{0, 60}), now: lcT0,
			want: lcStep{alert: updatedAt(lcT0, StatusOpen), opened: true, notify: []int{0}, next: ts(lcM(60)), sent: []int{1}, wake: lcM(60)}},
		{name: "delay 5 keeps tracking until then",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(5)), []int{0}), rule: lcRule([2]int{5, 60}), now: lcM(4.99),
			want: lcStep{next: ts(lcM(5)), sent: []int{0}, wake: lcM(5)}},
		{name: "delay 5 passed opens and notifies",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(5)), []int{0}), rule: lcRule([2]int{5, 60}), now: lcM(5),
			want: lcStep{alert: updatedAt(lcM(5), StatusOpen), opened: true, notify: []int{0}, next: ts(lcM(65)), sent: []int{1}, wake: lcM(65)}},
		{name: "opens at the smallest delay; only the due notification is notified",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(0), lcM(15)), []int{0, 0}), rule: two, now: lcT0,
			want: lcStep{alert: updatedAt(lcT0, StatusOpen), opened: true, notify: []int{0}, next: ts(lcM(10), lcM(15)), sent: []int{1, 0}, wake: lcM(10)}},
		{name: "tracking with smallest delay 15 of two",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(20), lcM(15)), []int{0, 0}), rule: lcRule([2]int{20, 10}, [2]int{15, 30}), now: lcM(10),
			want: lcStep{next: ts(lcM(20), lcM(15)), sent: []int{0, 0}, wake: lcM(15)}},
		{name: "second notification's first notice at its own delay",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(20), lcM(15)), []int{2, 0}), rule: two, now: lcM(15),
			want: lcStep{alert: updatedAt(lcM(15), ""), notify: []int{1}, next: ts(lcM(20), lcM(45)), sent: []int{2, 1}, wake: lcM(20)}},
		{name: "both due in one late wake-up, one notice each",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(40), lcM(45)), []int{4, 1}), rule: two, now: lcM(46),
			want: lcStep{alert: updatedAt(lcM(46), ""), notify: []int{0, 1}, next: ts(lcM(50), lcM(75)), sent: []int{5, 2}, wake: lcM(50)}},
		{name: "repeat exactly at the interval",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(10),
			want: lcStep{alert: updatedAt(lcM(10), ""), notify: []int{0}, next: ts(lcM(20)), sent: []int{2}, wake: lcM(20)}},
		{name: "just before the repeat: nothing",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(10).Add(-time.Nanosecond),
			want: lcStep{next: ts(lcM(10)), sent: []int{1}, wake: lcM(10)}},
		{name: "late wake-up 3.5 intervals past due: one notice, next slot after now",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(45),
			want: lcStep{alert: updatedAt(lcM(45), ""), notify: []int{0}, next: ts(lcM(50)), sent: []int{2}, wake: lcM(50)}},
		{name: "cadence counts from detected plus delay",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(35)), []int{3}), rule: lcRule([2]int{5, 15}), now: lcM(36),
			want: lcStep{alert: updatedAt(lcM(36), ""), notify: []int{0}, next: ts(lcM(50)), sent: []int{4}, wake: lcM(50)}},
		{name: "intervalMin 0 never repeats",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(5)), []int{0}), rule: lcRule([2]int{5, 0}), now: lcM(5),
			want: lcStep{alert: updatedAt(lcM(5), ""), notify: []int{0}, next: ts(time.Time{}), sent: []int{1}, wake: time.Time{}}},
		{name: "acknowledged: nothing sent, wake at acknowledgedUntil",
			alert: lcAcked(StatusOpen, lcM(30)), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(20),
			want: lcStep{next: ts(lcM(10)), sent: []int{1}, wake: lcM(30)}},
		{name: "acknowledgement expires between slots: cleared, no notice, resume at next slot",
			alert: lcAcked(StatusOpen, lcM(35)), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(35),
			want: lcStep{alert: unacked(lcM(35)), unacknowledged: true, next: ts(lcM(40)), sent: []int{1}, wake: lcM(40)}},
		{name: "acknowledgement expires on a slot: that slot is due",
			alert: lcAcked(StatusOpen, lcM(40)), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(40),
			want: lcStep{alert: unacked(lcM(40)), unacknowledged: true, notify: []int{0}, next: ts(lcM(50)), sent: []int{2}, wake: lcM(50)}},
		{name: "first notice that fell due during the acknowledgement is sent at expiry",
			alert: lcAcked(StatusOpen, lcM(25)), sched: lcSched(ts(lcM(10), lcM(15)), []int{1, 0}), rule: two, now: lcM(25),
			want: lcStep{alert: unacked(lcM(25)), unacknowledged: true, notify: []int{1}, next: ts(lcM(30), lcM(45)), sent: []int{1, 1}, wake: lcM(30)}},
		{name: "acknowledged while tracking: opens at its time, wake is the earlier",
			alert: lcAcked(StatusTracking, lcM(30)), sched: lcSched(ts(lcM(5)), []int{0}), rule: lcRule([2]int{5, 10}), now: lcM(1),
			want: lcStep{next: ts(lcM(5)), sent: []int{0}, wake: lcM(5)}},
		{name: "acknowledged tracking alert opens without a notice",
			alert: lcAcked(StatusTracking, lcM(30)), sched: lcSched(ts(lcM(5)), []int{0}), rule: lcRule([2]int{5, 10}), now: lcM(5),
			want: lcStep{alert: updatedAt(lcM(5), StatusOpen), opened: true, next: ts(lcM(5)), sent: []int{0}, wake: lcM(30)}},
		{name: "silenced: no notice, due slot skipped to next after now",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(10), silenced: true,
			want: lcStep{silenced: []int{0}, next: ts(lcM(20)), sent: []int{1}, wake: lcM(20)}},
		{name: "silenced late wake-up skips every swallowed slot",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(47), silenced: true,
			want: lcStep{silenced: []int{0}, next: ts(lcM(50)), sent: []int{1}, wake: lcM(50)}},
		{name: "after the window: resume at the next due time, one notice",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(50)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(50),
			want: lcStep{alert: updatedAt(lcM(50), ""), notify: []int{0}, next: ts(lcM(60)), sent: []int{2}, wake: lcM(60)}},
		{name: "silenced: opens (tracking is never silenced) but the first notice waits",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcT0), []int{0}), rule: lcRule([2]int{0, 10}), now: lcT0, silenced: true,
			want: lcStep{alert: updatedAt(lcT0, StatusOpen), opened: true, silenced: []int{0}, next: ts(lcM(10)), sent: []int{0}, wake: lcM(10)}},
		{name: "silenced and acknowledged: acknowledgement wins, schedule untouched",
			alert: lcAcked(StatusOpen, lcM(30)), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(20), silenced: true,
			want: lcStep{next: ts(lcM(10)), sent: []int{1}, wake: lcM(30)}},
		{name: "acknowledgement expires while silenced: cleared, slots skipped",
			alert: lcAcked(StatusOpen, lcM(30)), sched: lcSched(ts(lcM(10), lcM(15)), []int{1, 0}), rule: two, now: lcM(30), silenced: true,
			want: lcStep{alert: unacked(lcM(30)), unacknowledged: true, silenced: []int{0, 1}, next: ts(lcM(40), lcM(45)), sent: []int{1, 0}, wake: lcM(40)}},
		{name: "closed alert: nothing",
			alert: lcAlert(StatusClosed), sched: lcSched(ts(time.Time{}), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(100),
			want: lcStep{next: ts(time.Time{}), sent: []int{1}}},
		{name: "cancelled alert: nothing",
			alert: lcAlert(StatusCancelled), sched: lcSched(ts(lcM(10)), []int{1}), rule: lcRule([2]int{0, 10}), now: lcM(100),
			want: lcStep{next: ts(lcM(10)), sent: []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.sched
			inNext, inSent := slices.Clone(in.Next), slices.Clone(in.Sent)
			got := Advance(tt.alert, tt.sched, tt.rule, tt.silenced, time.Minute, tt.now)
			checkStep(t, tt.alert, got, tt.want)
			if !slices.Equal(in.Next, inNext) || !slices.Equal(in.Sent, inSent) {
				t.Errorf("Advance modified its input schedule: %v %v", in.Next, in.Sent)
			}
		})
	}
}

func TestClear(t *testing.T) {
	closedAt := func(now time.Time) func(*Alert) {
		return func(a *Alert) { a.Status, a.Resolved, a.Updated = StatusClosed, At(now), At(now) }
	}
	tests := []struct {
		name     string
		alert    Alert
		sched    Schedule
		silenced bool
		now      time.Time
		want     lcStep
	}{
		{name: "while tracking: closed, resolved, no notice",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(5)), []int{0}), now: lcM(3),
			want: lcStep{alert: closedAt(lcM(3)), closed: true, next: ts(time.Time{}), sent: []int{0}}},
		{name: "while open: resolution only to notified ones",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(20), lcM(15)), []int{2, 0}), now: lcM(12),
			want: lcStep{alert: closedAt(lcM(12)), closed: true, resolve: []int{0}, next: ts(time.Time{}, time.Time{}), sent: []int{2, 0}}},
		{name: "while open, both notified",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(40), lcM(45)), []int{4, 1}), now: lcM(31),
			want: lcStep{alert: closedAt(lcM(31)), closed: true, resolve: []int{0, 1}, next: ts(time.Time{}, time.Time{}), sent: []int{4, 1}}},
		{name: "while acknowledged: resolution still sent",
			alert: lcAcked(StatusOpen, lcM(60)), sched: lcSched(ts(lcM(20), lcM(15)), []int{2, 0}), now: lcM(12),
			want: lcStep{alert: closedAt(lcM(12)), closed: true, resolve: []int{0}, next: ts(time.Time{}, time.Time{}), sent: []int{2, 0}}},
		{name: "while silenced: closed without a notice",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(20), lcM(15)), []int{2, 0}), now: lcM(12), silenced: true,
			want: lcStep{alert: closedAt(lcM(12)), closed: true, silenced: []int{0}, next: ts(time.Time{}, time.Time{}), sent: []int{2, 0}}},
		{name: "open but nothing sent yet (first notice silenced): no resolution",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(10)), []int{0}), now: lcM(5),
			want: lcStep{alert: closedAt(lcM(5)), closed: true, next: ts(time.Time{}), sent: []int{0}}},
		{name: "already closed: nothing",
			alert: lcAlert(StatusClosed), sched: lcSched(ts(time.Time{}), []int{1}), now: lcM(5),
			want: lcStep{next: ts(time.Time{}), sent: []int{1}}},
		{name: "cancelled: nothing",
			alert: lcAlert(StatusCancelled), sched: lcSched(ts(time.Time{}), []int{1}), now: lcM(5),
			want: lcStep{next: ts(time.Time{}), sent: []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkStep(t, tt.alert, Clear(tt.alert, tt.sched, tt.silenced, tt.now), tt.want)
		})
	}
}

func TestCancel(t *testing.T) {
	cancelledAt := func(now time.Time) func(*Alert) {
		return func(a *Alert) { a.Status, a.Updated = StatusCancelled, At(now) }
	}
	tests := []struct {
		name  string
		alert Alert
		sched Schedule
		now   time.Time
		want  lcStep
	}{
		{name: "open: cancelled, no notice",
			alert: lcAlert(StatusOpen), sched: lcSched(ts(lcM(20)), []int{2}), now: lcM(12),
			want: lcStep{alert: cancelledAt(lcM(12)), cancelled: true, next: ts(time.Time{}), sent: []int{2}}},
		{name: "tracking: cancelled",
			alert: lcAlert(StatusTracking), sched: lcSched(ts(lcM(5)), []int{0}), now: lcM(1),
			want: lcStep{alert: cancelledAt(lcM(1)), cancelled: true, next: ts(time.Time{}), sent: []int{0}}},
		{name: "acknowledged: cancelled, acknowledgement kept",
			alert: lcAcked(StatusOpen, lcM(60)), sched: lcSched(ts(lcM(20)), []int{2}), now: lcM(12),
			want: lcStep{alert: cancelledAt(lcM(12)), cancelled: true, next: ts(time.Time{}), sent: []int{2}}},
		{name: "closed: nothing",
			alert: lcAlert(StatusClosed), sched: lcSched(ts(time.Time{}), []int{2}), now: lcM(12),
			want: lcStep{next: ts(time.Time{}), sent: []int{2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkStep(t, tt.alert, Cancel(tt.alert, tt.sched, tt.now), tt.want)
		})
	}
}

func TestNewAlert(t *testing.T) {
	now := lcT0.Add(1500 * time.Millisecond) // sub-second: Created is truncated, Detected is not
	yes := true
	v := 2048.0
	rule := lcRule([2]int{0, 10}, [2]int{15, 30})
	tests := []struct {
		name string
		rule AlertRule
		obs  Observation
		want Alert
	}{
		{name: "condition",
			rule: rule,
			obs: Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h1", HostnameAndPort: "db1:27017", TypeName: "PRIMARY",
				ReplicaSetName: "rs0", ClusterID: "cid", ClusterName: "c0", ShardName: "s0", SourceTypeName: "REPLICA_SET",
				CurrentValue: &CurrentValue{Number: 2, Units: "RAW"}},
			want: Alert{ID: "a1", GroupID: "g1", AlertConfigID: "c1", EventTypeName: "HOST_DOWN", Status: StatusTracking,
				Created: At(now), Updated: At(now), HostID: "h1", HostnameAndPort: "db1:27017", ReplicaSetName: "rs0",
				ClusterID: "cid", ClusterName: "c0", ShardName: "s0", SourceTypeName: "REPLICA_SET",
				CurrentValue: &CurrentValue{Number: 2, Units: "RAW"}}},
		{name: "measurement",
			rule: AlertRule{Enabled: true, EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Notifications: rule.Notifications,
				MetricThreshold: &MetricThreshold{MetricName: "MEMORY_RESIDENT", Operator: "GREATER_THAN", Threshold: 1, Units: "GIGABYTES"}},
			obs: Observation{MetricName: "MEMORY_RESIDENT", Value: &v, Units: "MEGABYTES", HostID: "h1", HostnameAndPort: "db1:27017"},
			want: Alert{ID: "a1", GroupID: "g1", AlertConfigID: "c1", EventTypeName: "OUTSIDE_METRIC_THRESHOLD", Status: StatusTracking,
				Created: At(now), Updated: At(now), HostID: "h1", HostnameAndPort: "db1:27017", MetricName: "MEMORY_RESIDENT",
				CurrentValue: &CurrentValue{Number: 2048, Units: "MEGABYTES"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, s := NewAlert("a1", "g1", "c1", tt.rule, tt.obs, time.Minute, now)
			if !reflect.DeepEqual(a, tt.want) {
				t.Errorf("alert\n got %+v\nwant %+v", a, tt.want)
			}
			if tt.obs.CurrentValue != nil && a.CurrentValue == tt.obs.CurrentValue {
				t.Error("the alert shares currentValue with the observation")
			}
			want := Schedule{Detected: now, Next: ts(now, now.Add(15*time.Minute)), Sent: []int{0, 0}}
			if !s.Detected.Equal(want.Detected) || !slices.EqualFunc(s.Next, want.Next, time.Time.Equal) || !slices.Equal(s.Sent, want.Sent) {
				t.Errorf("schedule = %+v, want %+v", s, want)
			}
		})
	}
}

func TestLifecycleRefresh(t *testing.T) {
	now := lcM(7)
	yes := true
	v := 3.0
	withValue := func(n float64, u string) Alert {
		a := lcAlert(StatusOpen)
		a.CurrentValue = &CurrentValue{Number: n, Units: u}
		return a
	}
	tests := []struct {
		name  string
		alert Alert
		obs   Observation
		want  Alert
	}{
		{name: "new condition value", alert: withValue(2, "RAW"),
			obs:  Observation{EventTypeName: "TOO_MANY_ELECTIONS", Active: &yes, CurrentValue: &CurrentValue{Number: 5, Units: "RAW"}},
			want: func() Alert { a := withValue(5, "RAW"); a.Updated = At(now); return a }()},
		{name: "new measurement value", alert: withValue(2, "GIGABYTES"),
			obs:  Observation{MetricName: "MEMORY_RESIDENT", Value: &v, Units: "GIGABYTES"},
			want: func() Alert { a := withValue(3, "GIGABYTES"); a.Updated = At(now); return a }()},
		{name: "same value: unchanged", alert: withValue(3, "GIGABYTES"),
			obs: Observation{MetricName: "MEMORY_RESIDENT", Value: &v, Units: "GIGABYTES"}, want: withValue(3, "GIGABYTES")},
		{name: "no value reported: kept", alert: withValue(2, "RAW"),
			obs: Observation{EventTypeName: "HOST_DOWN", Active: &yes}, want: withValue(2, "RAW")},
		{name: "ended alert: unchanged", alert: func() Alert { a := withValue(2, "RAW"); a.Status = StatusClosed; return a }(),
			obs:  Observation{EventTypeName: "TOO_MANY_ELECTIONS", Active: &yes, CurrentValue: &CurrentValue{Number: 5, Units: "RAW"}},
			want: func() Alert { a := withValue(2, "RAW"); a.Status = StatusClosed; return a }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Refresh(tt.alert, tt.obs, now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestLifecycleTimeline drives one alert the way the engine does (calling Advance at each Wake)
// through an acknowledgement and a maintenance window, with a one-second minute, and checks
// every notice sent.
func TestLifecycleTimeline(t *testing.T) {
	const minute = time.Second
	sec := func(x float64) time.Time { return lcT0.Add(time.Duration(x * float64(time.Second))) }
	rule := lcRule([2]int{0, 10}, [2]int{15, 30})
	yes := true
	a, s := NewAlert("a1", "g1", "c1", rule, Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h1"}, minute, lcT0)
	ackUntil := sec(42)                // acknowledged at 21 until 42
	winFrom, winTo := sec(60), sec(85) // window silences [60, 85)

	type notice struct {
		at time.Time
		i  int
	}
	var got []notice
	var events []string
	now := lcT0
	for now.Before(sec(100)) {
		if now.Equal(sec(21)) {
			if _, err := a.Acknowledge(At(ackUntil), "on it", "jane", now); err != nil {
				t.Fatal(err)
			}
		}
		silenced := !now.Before(winFrom) && now.Before(winTo)
		st := Advance(a, s, rule, silenced, minute, now)
		a, s = st.Alert, st.Schedule
		for _, i := range st.Notify {
			got = append(got, notice{now, i})
		}
		if st.Opened {
			events = append(events, "opened")
		}
		if st.Unacknowledged {
			events = append(events, "unacknowledged")
		}
		next := st.Wake
		if next.IsZero() {
			t.Fatalf("open alert with nothing to wake for at %v", now)
		}
		// The engine also looks at the alert when an acknowledgement is made and when the
		// window starts or ends.
		for _, w := range []time.Time{sec(21), winFrom, winTo} {
			if w.After(now) && w.Before(next) {
				next = w
			}
		}
		now = next
	}
	want := []notice{
		{sec(0), 0}, {sec(10), 0}, {sec(15), 1}, {sec(20), 0},
		{sec(45), 1}, {sec(50), 0}, // after expiry at 42: next slots, no burst
		// window [60, 85): 60, 70, 75, 80 swallowed
		{sec(90), 0}, // resume at the next due time
	}
	if !slices.Equal(got, want) {
		t.Errorf("notices\n got %v\nwant %v", got, want)
	}
	if !slices.Equal(events, []string{"opened", "unacknowledged"}) {
		t.Errorf("events = %v", events)
	}
	st := Clear(a, s, false, sec(100))
	if !slices.Equal(st.Resolve, []int{0, 1}) || a.Status != StatusOpen || st.Alert.Status != StatusClosed || !st.Wake.IsZero() {
		t.Errorf("clear: %+v", st)
	}
}

// Wake of what a step left is the step's own Wake: an alert that is only refreshed (a
// re-report) or left untouched keeps the due time its last step gave it.
func TestWakeAgreesWithAdvance(t *testing.T) {
	rules := map[string]AlertRule{
		"at once, repeating": lcRule([2]int{0, 5}),
		"delayed":            lcRule([2]int{3, 5}),
		"two, one once":      lcRule([2]int{0, 0}, [2]int{2, 10}),
		"once only":          lcRule([2]int{0, 0}),
		"no notifications":   lcRule(),
	}
	alerts := map[string]Alert{
		"tracking":              lcAlert(StatusTracking),
		"open":                  lcAlert(StatusOpen),
		"tracking acknowledged": lcAcked(StatusTracking, lcM(20)),
		"open acknowledged":     lcAcked(StatusOpen, lcM(20)),
		"closed":                lcAlert(StatusClosed),
	}
	for rn, rule := range rules {
		for an, a := range alerts {
			_, s := NewAlert("a1", "g1", "c1", rule, Observation{EventTypeName: "HOST_DOWN", HostID: "h1"}, time.Minute, lcT0)
			for _, at := range []float64{0, 1, 2.5, 7, 12, 19, 21, 30} {
				st := Advance(a, s, rule, false, time.Minute, lcM(at))
				if got := Wake(st.Alert, st.Schedule); !got.Equal(st.Wake) {
					t.Errorf("%s, %s at %v min: Wake %s, the step's %s", rn, an, at, got, st.Wake)
				}
				a, s = st.Alert, st.Schedule
			}
		}
	}
}
