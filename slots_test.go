package herald

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The schedule's arithmetic over the whole range of time.Time, and the guard that keeps every
// step to one notice per notification per slot.

// Times are drawn from Unix seconds within ±2^62: some 146 billion years either way, all of
// time.Time's range but its far edges, where adding an interval saturates at the last time it
// holds and no later slot exists.
const slotSecRange = 1 << 62

// slotCase is one input of the properties: a detection, a notification, a minute, a time.
type slotCase struct {
	detected, now time.Time
	n             Notification
	minute        time.Duration
}

// slotCaseOf maps arbitrary numbers (the fuzzer's, or a random table's) onto a case: times
// within slotSecRange, delays and intervals of any int (stored configurations predate their
// bounds), a minute from 1 ns to an hour.
func slotCaseOf(detSec, nowSec int64, detNano, nowNano uint32, delay, interval int64, minute uint64) slotCase {
	bound := func(s int64) int64 { return s % slotSecRange }
	return slotCase{
		detected: time.Unix(bound(detSec), int64(detNano%1e9)).UTC(),
		now:      time.Unix(bound(nowSec), int64(nowNano%1e9)).UTC(),
		n:        Notification{TypeName: "EMAIL", DelayMin: int(delay), IntervalMin: int(interval)},
		minute:   time.Duration(minute%uint64(time.Hour)) + 1,
	}
}

// Reference arithmetic in math/big: nanoseconds since the Unix epoch, and n minutes
// saturating at the longest time.Duration, as the schedule defines them.
func bigNanos(t time.Time) *big.Int {
	b := big.NewInt(t.Unix())
	b.Mul(b, big.NewInt(int64(time.Second)))
	return b.Add(b, big.NewInt(int64(t.Nanosecond())))
}

func bigTime(ns *big.Int) time.Time {
	sec, nsec := new(big.Int).DivMod(ns, big.NewInt(int64(time.Second)), new(big.Int))
	return time.Unix(sec.Int64(), nsec.Int64()).UTC()
}

func bigMinutes(n int, minute time.Duration) *big.Int {
	if n <= 0 {
		return big.NewInt(0)
	}
	d := new(big.Int).Mul(big.NewInt(int64(n)), big.NewInt(int64(minute)))
	if d.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		return big.NewInt(math.MaxInt64)
	}
	return d
}

// refSlot is slotFrom computed in math/big: the first slot detected + delay + k×interval
// (k >= 0) at or after t, strictly after when strict; ok false when there is none.
func refSlot(c slotCase, t time.Time, strict bool) (slot time.Time, ok bool) {
	base := new(big.Int).Add(bigNanos(c.detected), bigMinutes(c.n.DelayMin, c.minute))
	tn := bigNanos(t)
	if cmp := base.Cmp(tn); cmp > 0 || (cmp == 0 && !strict) {
		return bigTime(base), true
	}
	iv := bigMinutes(c.n.IntervalMin, c.minute)
	if iv.Sign() == 0 {
		return time.Time{}, false
	}
	k, r := new(big.Int).DivMod(new(big.Int).Sub(tn, base), iv, new(big.Int))
	if strict || r.Sign() != 0 {
		k.Add(k, big.NewInt(1))
	}
	return bigTime(base.Add(base, k.Mul(k, iv))), true
}

// refLastSlot is the last slot at or before t; ok false when the first slot is after t.
func refLastSlot(c slotCase, t time.Time) (time.Time, bool) {
	base := new(big.Int).Add(bigNanos(c.detected), bigMinutes(c.n.DelayMin, c.minute))
	tn := bigNanos(t)
	if base.Cmp(tn) > 0 {
		return time.Time{}, false
	}
	iv := bigMinutes(c.n.IntervalMin, c.minute)
	if iv.Sign() == 0 {
		return bigTime(base), true
	}
	k := new(big.Int).Div(new(big.Int).Sub(tn, base), iv)
	return bigTime(base.Add(base, k.Mul(k, iv))), true
}

// checkSlotFrom: slotFrom is the exact slot of the cadence, after now (at or after it when not
// strict), never before it however far apart detection and now are.
func checkSlotFrom(t *testing.T, c slotCase) {
	t.Helper()
	for _, strict := range []bool{true, false} {
		got := slotFrom(c.detected, c.n, c.minute, c.now, strict)
		want, ok := refSlot(c, c.now, strict)
		if !ok {
			want = time.Time{}
		}
		if !got.Equal(want) {
			t.Fatalf("slotFrom(%v, delay %d, interval %d, minute %v, %v, strict %v) = %v, want %v",
				c.detected, c.n.DelayMin, c.n.IntervalMin, c.minute, c.now, strict, got, want)
		}
		if ok && (got.Before(c.now) || (strict && got.Equal(c.now))) {
			t.Fatalf("slotFrom(..., %v, strict %v) = %v, not after now", c.now, strict, got)
		}
	}
}

// checkAdvance: an OPEN alert whose notification is due at now, its last slot, is notified
// once; its next slot is after now and at least intervalMin after the slot just spent (or
// none, without repeats); another step at now sends nothing.
func checkAdvance(t *testing.T, c slotCase) {
	t.Helper()
	due, ok := refLastSlot(c, c.now)
	if !ok {
		return // not due yet: nothing to send
	}
	rule := AlertRule{Enabled: true, EventTypeName: "HOST_DOWN", Notifications: []Notification{c.n}}
	a := Alert{ID: "a1", Status: StatusOpen}
	s := Schedule{Detected: c.detected, Next: []time.Time{due}, Sent: []int{1}}
	st := Advance(a, s, rule, false, c.minute, c.now)
	if !slices.Equal(st.Notify, []int{0}) || st.Schedule.Sent[0] != 2 {
		t.Fatalf("%+v: due at %v, Notify %v Sent %v, want one notice", c, due, st.Notify, st.Schedule.Sent)
	}
	next := st.Schedule.Next[0]
	if iv := minutes(c.n.IntervalMin, c.minute); iv == 0 {
		if !next.IsZero() {
			t.Fatalf("%+v: a notification without repeats is due again at %v", c, next)
		}
	} else if !next.After(c.now) || next.Before(due.Add(iv)) {
		t.Fatalf("%+v: after the slot %v, the next is %v: not after now or sooner than %v later", c, due, next, iv)
	}
	if !st.Wake.IsZero() && !st.Wake.After(c.now) {
		t.Fatalf("%+v: wakes at %v, not after now", c, st.Wake)
	}
	if again := Advance(st.Alert, st.Schedule, rule, false, c.minute, c.now); len(again.Notify) != 0 {
		t.Fatalf("%+v: a second step at the same time notifies %v", c, again.Notify)
	}
}

// slotSeeds are the cases of the report and the edges: an alert from the year 1 and from
// 1700, delays and intervals that wrapped, detection and now far apart either way.
var slotSeeds = []struct {
	det, now        time.Time
	delay, interval int64
	minute          time.Duration
}{
	{time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), lcT0, 0, 60, time.Minute},
	{time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), lcT0, 0, 60, time.Minute},
	{time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC), lcT0, 0, 60, time.Minute},
	{lcT0, lcT0, 2147483647, 60, time.Minute},
	{lcT0, lcT0.Add(time.Hour), 0, 307445735, time.Minute},
	{lcT0, lcT0.Add(time.Hour), 0, math.MaxInt64, time.Hour},
	{lcT0, lcT0.Add(time.Hour), -5, -5, time.Minute},
	{time.Unix(-slotSecRange+1, 0), time.Unix(slotSecRange-1, 999999999), 0, 5, time.Nanosecond},
	{time.Unix(-slotSecRange+1, 0), time.Unix(slotSecRange-1, 0), 1, MaxIntervalMin, time.Hour},
	{time.Unix(slotSecRange-1, 0), time.Unix(-slotSecRange+1, 0), 0, 5, time.Minute},
}

// FuzzSlots checks the schedule's arithmetic (slotFrom against math/big) and the step
// (Advance) over the whole range of time.Time. Its seeds run in go test.
func FuzzSlots(f *testing.F) {
	for _, s := range slotSeeds {
		f.Add(s.det.Unix(), s.now.Unix(), uint32(s.det.Nanosecond()), uint32(s.now.Nanosecond()), s.delay, s.interval, uint64(s.minute-1))
	}
	f.Fuzz(func(t *testing.T, detSec, nowSec int64, detNano, nowNano uint32, delay, interval int64, minute uint64) {
		c := slotCaseOf(detSec, nowSec, detNano, nowNano, delay, interval, minute)
		checkSlotFrom(t, c)
		checkAdvance(t, c)
	})
}

// TestSlotsOverTheWholeRange is FuzzSlots' properties over a random table: times anywhere in
// time.Time's range, and the spans of every scale between them.
func TestSlotsOverTheWholeRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2))
	for range 20_000 {
		det := rng.Int64() % slotSecRange * randSign(rng)
		now := det
		switch rng.IntN(3) { // far apart, within the span of a time.Duration, or close
		case 0:
			now = rng.Int64() % slotSecRange * randSign(rng)
		case 1:
			now += rng.Int64N(600*365*86400) - 300*365*86400
		case 2:
			now += rng.Int64N(30 * 86400)
		}
		delay, interval := rng.Int64N(MaxDelayMin+1), rng.Int64N(MaxIntervalMin+1)
		if rng.IntN(4) == 0 { // a stored configuration from before the bounds
			delay, interval = rng.Int64(), rng.Int64()
		}
		c := slotCaseOf(det, now, rng.Uint32(), rng.Uint32(), delay, interval, rng.Uint64())
		checkSlotFrom(t, c)
		checkAdvance(t, c)
	}
}

func randSign(rng *rand.Rand) int64 { return int64(rng.IntN(2)*2 - 1) }

// Part of the report: a delayMin meant as "never" opened the alert and notified the moment it
// was detected, and a large intervalMin repeated every 26 s, both wrapped. They saturate: the
// first notice waits (about 292 years, the longest delay there is), the repeat waits its
// interval.
func TestAdvanceWithHugeDelayAndInterval(t *testing.T) {
	never := lcRule([2]int{2147483647, 60})
	a, s := NewAlert("a1", "g1", "c1", never, Observation{EventTypeName: "HOST_DOWN", HostID: "h1"}, time.Minute, lcT0)
	st := Advance(a, s, never, false, time.Minute, lcT0)
	if st.Opened || len(st.Notify) != 0 || !st.Wake.After(lcT0.AddDate(200, 0, 0)) {
		t.Errorf("delayMin 2147483647: opened %v, Notify %v, wakes at %v; want still tracking for centuries", st.Opened, st.Notify, st.Wake)
	}

	for _, interval := range []int{307445735, math.MaxInt} {
		rule := lcRule([2]int{0, interval})
		a, s := NewAlert("a1", "g1", "c1", rule, Observation{EventTypeName: "HOST_DOWN", HostID: "h1"}, time.Minute, lcT0)
		st := Advance(a, s, rule, false, time.Minute, lcT0)
		if !slices.Equal(st.Notify, []int{0}) || !st.Schedule.Next[0].Equal(lcT0.Add(math.MaxInt64)) {
			t.Errorf("intervalMin %d: Notify %v, next %v; want one notice, the next after the longest interval", interval, st.Notify, st.Schedule.Next[0])
		}
	}
}

// An alert detected in the year 1 (as the report posted it) is notified once, and its next
// notice keeps the cadence, an hour ahead at most: today's step saturated the span and
// landed in the past, due again at every step.
func TestAdvanceDetectedCenturiesAgo(t *testing.T) {
	rule := lcRule([2]int{0, 60})
	for _, detected := range []time.Time{time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)} {
		a, s := NewAlert("a1", "g1", "c1", rule, Observation{EventTypeName: "HOST_DOWN", HostID: "h1"}, time.Minute, detected)
		now := lcT0.Add(90 * time.Second)
		st := Advance(a, s, rule, false, time.Minute, now)
		next := st.Schedule.Next[0]
		if !slices.Equal(st.Notify, []int{0}) || !next.After(now) || next.After(now.Add(time.Hour)) || next.Minute() != 0 {
			t.Errorf("detected %v: Notify %v, next %v; want one notice, next on the hour after %v", detected, st.Notify, next, now)
		}
		for range 3 {
			st = Advance(st.Alert, st.Schedule, rule, false, time.Minute, now)
			if len(st.Notify) != 0 {
				t.Fatalf("detected %v: notified again at the same time", detected)
			}
		}
	}
}

// guardSlots repairs a step that would send a second notice in a slot, whatever made it.
func TestGuardSlots(t *testing.T) {
	rule := lcRule([2]int{0, 10}, [2]int{0, 0}) // #0 repeats every 10 minutes; #1 never repeats
	now := lcM(25)
	due := ts(lcM(20), lcM(0))
	step := func(notify, silenced []int, next []time.Time, sent []int) Step {
		return Step{Notify: notify, Silenced: silenced, Schedule: Schedule{Detected: lcT0, Next: next, Sent: sent}, Wake: earliest(next)}
	}
	for _, c := range []struct {
		name   string
		in     Step
		due    []time.Time
		notify []int
		next   []time.Time
		sent   []int
		wake   time.Time
	}{
		{"a correct step is kept", step([]int{0}, nil, ts(lcM(30), time.Time{}), []int{3, 1}), due,
			[]int{0}, ts(lcM(30), time.Time{}), []int{3, 1}, lcM(30)},
		{"next slot in the past (the flood)", step([]int{0}, nil, ts(lcM(-1e6), time.Time{}), []int{3, 1}), due,
			[]int{0}, ts(lcM(35), time.Time{}), []int{3, 1}, lcM(35)},
		{"next slot now", step([]int{0}, nil, ts(now, time.Time{}), []int{3, 1}), due,
			[]int{0}, ts(lcM(35), time.Time{}), []int{3, 1}, lcM(35)},
		{"next slot sooner than an interval after the one spent", step([]int{0}, nil, ts(lcM(26), time.Time{}), []int{3, 1}), due,
			[]int{0}, ts(lcM(35), time.Time{}), []int{3, 1}, lcM(35)},
		{"a notification without repeats due again", step([]int{1}, nil, ts(lcM(30), lcM(24)), []int{2, 2}), due,
			[]int{1}, ts(lcM(30), time.Time{}), []int{2, 2}, lcM(30)},
		{"a notice of a slot not due is dropped", step([]int{0, 1}, nil, ts(lcM(40), time.Time{}), []int{4, 2}), ts(lcM(30), lcM(0)),
			[]int{1}, ts(lcM(40), time.Time{}), []int{3, 2}, lcM(40)},
		{"a silenced slot must move on too", step(nil, []int{0}, ts(lcM(20), time.Time{}), []int{3, 1}), due,
			nil, ts(lcM(35), time.Time{}), []int{3, 1}, lcM(35)},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := Step{Notify: slices.Clone(c.in.Notify), Schedule: Schedule{Next: slices.Clone(c.in.Schedule.Next), Sent: slices.Clone(c.in.Schedule.Sent)}}
			got := guardSlots(c.in, c.due, rule, time.Minute, now)
			if !slices.Equal(got.Notify, c.notify) || !slices.EqualFunc(got.Schedule.Next, c.next, time.Time.Equal) ||
				!slices.Equal(got.Schedule.Sent, c.sent) || !got.Wake.Equal(c.wake) {
				t.Errorf("Notify %v Next %v Sent %v Wake %v\nwant   %v      %v      %v      %v",
					got.Notify, got.Schedule.Next, got.Schedule.Sent, got.Wake, c.notify, c.next, c.sent, c.wake)
			}
			if !slices.Equal(c.in.Notify, before.Notify) || !slices.Equal(c.in.Schedule.Sent, before.Schedule.Sent) ||
				!slices.EqualFunc(c.in.Schedule.Next, before.Schedule.Next, time.Time.Equal) {
				t.Errorf("the guard changed its input")
			}
		})
	}
}
