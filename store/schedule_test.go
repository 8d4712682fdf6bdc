package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// Schedules survive their binary form, whatever their times and target.
func TestScheduleForm(t *testing.T) {
	detected := time.UnixMilli(1_795_496_771_123)
	target := TargetID("host-1")
	for _, tc := range []struct {
		name   string
		s      herald.Schedule
		target string
	}{
		{"an hour to the next repeat", herald.Schedule{Detected: detected, Next: []time.Time{detected.Add(time.Hour)}, Sent: []int{1}}, target},
		{"nothing more to send", herald.Schedule{Detected: detected, Next: []time.Time{{}, {}}, Sent: []int{3, 0}}, target},
		{"next before detection", herald.Schedule{Detected: detected, Next: []time.Time{detected.Add(-time.Second)}, Sent: []int{0}}, target},
		{"next at detection", herald.Schedule{Detected: detected, Next: []time.Time{detected}, Sent: []int{0}}, target},
		{"many sends", herald.Schedule{Detected: detected, Next: []time.Time{detected.Add(48 * time.Hour)}, Sent: []int{1 << 20}}, target},
		{"no notifications", herald.Schedule{Detected: detected, Next: []time.Time{}}, target},
		{"a target of another form", herald.Schedule{Detected: detected, Next: []time.Time{detected}, Sent: []int{0}}, "host-1"},
		{"no target", herald.Schedule{Detected: detected, Next: []time.Time{detected}, Sent: []int{0}}, ""},
		{"before 1970", herald.Schedule{Detected: time.UnixMilli(-5000), Next: []time.Time{time.UnixMilli(-1)}, Sent: []int{0}}, target},
	} {
		b, err := encodeSchedule(tc.s, tc.target)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s, target, err := decodeSchedule(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(s, tc.s) || target != tc.target {
			t.Errorf("%s: got %+v %q, want %+v %q", tc.name, s, target, tc.s, tc.target)
		}
	}
}

// An open alert's schedule fits Redis's 32-byte size class (with the string's 4 bytes of
// header and end); its JSON took 80.
func TestScheduleFitsItsSizeClass(t *testing.T) {
	detected := time.Now()
	b, err := encodeSchedule(herald.Schedule{Detected: detected, Next: []time.Time{detected.Add(time.Hour)}, Sent: []int{1}}, TargetID("waiting-19470"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 28 {
		t.Errorf("%d bytes, want at most 28", len(b))
	}
}

// Schedules written as JSON, the form before, are still read.
func TestScheduleJSONStillRead(t *testing.T) {
	b, _ := json.Marshal(schedDoc{Detected: 1_795_496_771_123, Next: []int64{0, 1_795_500_371_123}, Sent: []int{2, 0}, Target: "t"})
	s, target, err := decodeSchedule(b)
	want := herald.Schedule{Detected: time.UnixMilli(1_795_496_771_123), Next: []time.Time{{}, time.UnixMilli(1_795_500_371_123)}, Sent: []int{2, 0}}
	if err != nil || !reflect.DeepEqual(s, want) || target != "t" {
		t.Errorf("got %+v %q %v, want %+v", s, target, err, want)
	}
}

// What is not a schedule is an error, never a schedule of garbage.
func TestScheduleMalformed(t *testing.T) {
	good, _ := encodeSchedule(herald.Schedule{Detected: time.Now(), Next: []time.Time{time.Now()}, Sent: []int{1}}, TargetID("x"))
	for name, b := range map[string][]byte{
		"empty":           {},
		"unknown form":    {0x07, 1, 2},
		"cut short":       good[:5],
		"no target kind":  good[:len(good)-13],
		"target too long": append(append([]byte{}, good...), 0),
		"huge count":      {scheduleForm, 2, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, _, err := decodeSchedule(b); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
