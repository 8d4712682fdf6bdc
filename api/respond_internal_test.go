package api

import (
	"bytes"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// An alert's answer, encoded with its links in one go, is the alert as marshal writes it with
// its self link spliced in, as every other resource's answer is.
func TestAlertAnswerIsTheAlertWithItsLinks(t *testing.T) {
	now := herald.At(time.Unix(1_800_000_000, 0))
	a := herald.Alert{ID: herald.NewID(now.Time), GroupID: herald.NewID(now.Time), AlertConfigID: "c1", EventTypeName: "PROMETHEUS_ALERT",
		Status: herald.StatusOpen, Created: now, Updated: now, LastNotified: now, HumanReadable: `<b>"disk" & more</b>` + "\n",
		Labels: herald.Labels{"alertname": "Disk", "job": "<api>"}, CurrentValue: &herald.CurrentValue{Number: 1.5, Units: "RAW"}}
	for _, self := range []string{"http://127.0.0.1:8080" + BasePath + alertPath(a), "http://h/?a=1&b=<2>", ""} {
		b, err := marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		want := b
		if self != "" {
			links, err := marshal([]Link{{Href: self, Rel: "self"}})
			if err != nil {
				t.Fatal(err)
			}
			want = append(append(append(b[:len(b)-1:len(b)-1], `,"links":`...), links...), '}')
		}
		for _, v := range []any{a, &a} {
			got, err := withLinks(v, self)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%T, self %q: %v\n got %s\nwant %s", v, self, err, got, want)
			}
		}
	}
}
