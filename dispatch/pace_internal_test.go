package dispatch

import (
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Paces read as the settings write them, and anything else is refused; every pace reads back.
func TestParsePace(t *testing.T) {
	for _, c := range []struct {
		text string
		want store.Pace
		bad  bool
	}{
		{text: "off", want: store.Pace{}},
		{text: "1/s", want: store.Pace{Every: time.Second, Burst: 1}},
		{text: "1/s,burst=5", want: store.Pace{Every: time.Second, Burst: 5}},
		{text: "120/m", want: store.Pace{Every: 500 * time.Millisecond, Burst: 1}},
		{text: "5/h, burst=2", want: store.Pace{Every: 12 * time.Minute, Burst: 2}},
		{text: "", bad: true},
		{text: "fast", bad: true},
		{text: "0/s", bad: true},
		{text: "-1/s", bad: true},
		{text: "1/d", bad: true},
		{text: "1/s,burst=0", bad: true},
		{text: "1/s,5", bad: true},
		{text: "2000/s", bad: true}, // under a millisecond apart: Redis keeps milliseconds
	} {
		got, err := ParsePace(c.text)
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("ParsePace(%q) = %+v, %v; want %+v (bad: %v)", c.text, got, err, c.want, c.bad)
		}
	}
	for kind, p := range DefaultPaces {
		if back, err := ParsePace(FormatPace(p)); err != nil || back.Every != p.Every || (!p.Off() && back.Burst != max(p.Burst, 1)) {
			t.Errorf("%s's pace %+v is written %q, read back as %+v, %v", kind, p, FormatPace(p), back, err)
		}
	}
}

// Every kind with one target is in the table of paces (people are paced as EMAIL and SMS).
func TestEveryKindHasAPace(t *testing.T) {
	for _, k := range herald.Kinds() {
		if _, ok := DefaultPaces[k.Name]; !ok && k.People == nil {
			t.Errorf("kind %s has no default pace", k.Name)
		}
	}
}

// When a paced delivery's retry task is due: at a whole second before its slot, by a second
// at least, so that it starts in time to wait for the slot itself.
func TestPaceAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 300e6, time.UTC)
	for _, c := range []struct {
		wait time.Duration
		want time.Duration // from now's second
	}{
		{300 * time.Millisecond, -time.Second},
		{1500 * time.Millisecond, 0},
		{5 * time.Second, 4 * time.Second},
	} {
		at := paceAt(now, c.wait)
		slot := now.Add(c.wait)
		if want := now.Truncate(time.Second).Add(c.want); !at.Equal(want) || slot.Sub(at) > paceWaitMax || slot.Sub(at) < 0 {
			t.Errorf("paceAt(+%s) = %s, want %s, within %s before the slot", c.wait, at, want, paceWaitMax)
		}
	}
}
