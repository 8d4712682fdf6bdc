package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// An Alertmanager notification carries its alerts; each is told apart by its instance label,
// and one that comes again is a duplicate (the receiver counts it once).
func TestAlertmanagerKeys(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"one alert", `{"version":"4","alerts":[{"labels":{"alertname":"HostDown","instance":"am-1"}}]}`, []string{"am-1"}},
		{"two alerts", `{"alerts":[{"labels":{"instance":"a"}},{"labels":{"instance":"b"}}]}`, []string{"a", "b"}},
		{"none", `{"alerts":[]}`, []string{}},
		{"undecodable", `not json`, []string{"undecodable"}},
	} {
		if got := alertmanagerKeys([]byte(c.body), nil); !slices.Equal(got, c.want) {
			t.Errorf("%s: keys %q, want %q", c.name, got, c.want)
		}
	}
}

func TestKeyedReceiverCountsEachAlertOnce(t *testing.T) {
	r, err := startKeyedReceiver(0, alertmanagerKeys)
	if err != nil {
		t.Fatal(err)
	}
	defer r.stop()
	for _, body := range []string{
		`{"alerts":[{"labels":{"instance":"a"}},{"labels":{"instance":"b"}}]}`,
		`{"alerts":[{"labels":{"instance":"b"}}]}`, // b again: a duplicate
		`{"alerts":[{"labels":{"instance":"c"}}]}`,
	} {
		resp, err := http.Post(r.URL, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	distinct, duplicates := r.counts()
	if distinct != 3 || duplicates != 1 {
		t.Errorf("distinct %d, duplicates %d; want 3 and 1", distinct, duplicates)
	}
}

// Each storm's figures are judged against their targets; Alertmanager missing is reported as
// not measured, with why, and judged neither way.
func TestStormFigures(t *testing.T) {
	herald := stormRun{rate: 10_000, took: time.Second, afterLast: 900 * time.Millisecond, peakRSS: 100 << 20, redisGrew: 1000 * 10_000}
	verdicts := func(figs []figure) map[string]verdict {
		out := map[string]verdict{}
		for _, f := range figs {
			out[f.Name[strings.Index(f.Name, ": ")+2:]] = f.Result
		}
		return out
	}
	for _, c := range []struct {
		name  string
		h, am stormRun
		amErr error
		want  map[string]verdict
	}{
		{"every target met", herald, stormRun{rate: 3000}, nil, map[string]verdict{
			"Herald ÷ Alertmanager": pass, "Herald duplicate notifications": pass, "last report → last first notice": pass,
			"Herald peak RSS, api + worker": pass, "Redis memory per open alert": pass}},
		{"ratio under 2.5", herald, stormRun{rate: 4001}, nil, map[string]verdict{"Herald ÷ Alertmanager": miss}},
		{"a duplicate", stormRun{rate: 1, duplicates: 1}, stormRun{rate: 1}, nil, map[string]verdict{"Herald duplicate notifications": miss}},
		{"late", stormRun{rate: 1, afterLast: 21 * time.Second}, stormRun{rate: 1}, nil, map[string]verdict{"last report → last first notice": miss}},
		{"too much memory", stormRun{rate: 1, peakRSS: 251 << 20, redisGrew: 1537 * 10_000}, stormRun{rate: 1}, nil,
			map[string]verdict{"Herald peak RSS, api + worker": miss, "Redis memory per open alert": miss}},
		{"no Alertmanager", herald, stormRun{}, errNoAlertmanager, map[string]verdict{"Herald ÷ Alertmanager": noTarget}},
	} {
		figs := stormFigures(10_000, []stormRound{{h: c.h, am: c.am}}, "Alertmanager 0.28.1", c.amErr)
		got := verdicts(figs)
		for name, want := range c.want {
			if v, ok := got[name]; !ok || v != want {
				t.Errorf("%s: %q is %v, want %v (figures %+v)", c.name, name, v, want, figs)
			}
		}
		if c.amErr != nil && !strings.Contains(figs[1].Value, "not measured: "+c.amErr.Error()) {
			t.Errorf("%s: Alertmanager's figure %q does not say why it was not measured", c.name, figs[1].Value)
		}
	}
}

// Over rounds, the ratio is the median round's, every round's ratio is shown, and what has a
// target is judged at its worst round.
func TestStormFiguresOfRounds(t *testing.T) {
	round := func(h, am float64) stormRound {
		return stormRound{h: stormRun{rate: h, afterLast: time.Second, peakRSS: 100 << 20, redisGrew: 1000 * 10_000}, am: stormRun{rate: am}}
	}
	rounds := []stormRound{round(10_000, 5000), round(10_000, 3000), round(10_000, 4500)} // 2.00, 3.33, 2.22
	rounds[0].h.duplicates = 1                                                            // a round that is not the median
	rounds[1].h.redisGrew = 1600 * 10_000
	figs := stormFigures(10_000, rounds, "Alertmanager 0.28.1", nil)
	byName := map[string]figure{}
	for _, f := range figs {
		byName[f.Name[strings.Index(f.Name, ": ")+2:]] = f
	}
	if f := byName["Herald ÷ Alertmanager"]; !strings.HasPrefix(f.Value, "2.222× (median of 3 rounds: 2.00, 3.33, 2.22)") || f.Result != miss {
		t.Errorf("ratio: %+v, want the median round's 2.22×, each round's, and a miss", f)
	}
	if f := byName["Alertmanager 0.28.1 → notifications/s"]; !strings.HasPrefix(f.Value, "4500 /s") {
		t.Errorf("Alertmanager's rate %q, want the median round's", f.Value)
	}
	if f := byName["Herald duplicate notifications"]; f.Value != "1" || f.Result != miss {
		t.Errorf("duplicates %+v, want the worst round's 1, a miss", f)
	}
	if f := byName["Redis memory per open alert"]; !strings.HasPrefix(f.Value, "1600 B") || f.Result != miss {
		t.Errorf("Redis per alert %+v, want the worst round's 1600 B, a miss", f)
	}
}

func TestIntList(t *testing.T) {
	var l intList
	if err := l.Set("10000, 100000"); err != nil || !slices.Equal(l, intList{10_000, 100_000}) || l.String() != "10000,100000" {
		t.Errorf("Set: %v %v %q", l, err, l.String())
	}
	if err := l.Set("10k"); err == nil {
		t.Error("10k accepted as a count")
	}
}

func TestProcStatusOfThisProcess(t *testing.T) {
	hwm, err := procStatus(os.Getpid(), "VmHWM")
	if err != nil || hwm < 1<<20 {
		t.Errorf("VmHWM of this process: %d, %v", hwm, err)
	}
	if _, err := procStatus(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("a missing field read without an error")
	}
	if cpu, err := procCPU(os.Getpid()); err != nil || cpu < 0 {
		t.Errorf("CPU time of this process: %s, %v", cpu, err)
	}
}

var errNoAlertmanager = errors.New("no alertmanager binary")

// Scenario 7 in rounds: the ratio and rates are the median round's, with each round's ratio;
// p99 and CPU a request, which have targets, are the worst round's.
func TestReadFiguresOfRounds(t *testing.T) {
	round := func(plainRate, heraldRate int, p99 time.Duration, cpu time.Duration) readRound {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = time.Millisecond
		}
		lat[99] = p99
		return readRound{
			plain:  loadResult{ok: plainRate, took: time.Second},
			herald: loadResult{ok: heraldRate, took: time.Second, latencies: lat},
			apiCPU: cpu * time.Duration(heraldRate),
		}
	}
	rounds := []readRound{
		round(30_000, 12_000, 12*time.Millisecond, 40*time.Microsecond), // 0.40, the worst p99
		round(30_000, 16_500, 5*time.Millisecond, 120*time.Microsecond), // 0.55, the most CPU
		round(30_000, 15_300, 6*time.Millisecond, 50*time.Microsecond),  // 0.51, the median
	}
	byName := map[string]figure{}
	for _, f := range readFigures(rounds, 10*time.Second) {
		byName[f.Name] = f
	}
	if f := byName["7. Herald ÷ plain handler"]; f.Value != "0.510× (median of 3 rounds: 0.40, 0.55, 0.51)" || f.Result != pass {
		t.Errorf("ratio %+v, want the median round's 0.51×, each round's, and a pass", f)
	}
	if f := byName["7. GET alert with Digest, Herald → req/s"]; !strings.HasPrefix(f.Value, "15300 /s") {
		t.Errorf("Herald's rate %q, want the median round's", f.Value)
	}
	if f := byName["7. Herald p99"]; f.Value != "12ms" || f.Result != miss {
		t.Errorf("p99 %+v, want the worst round's 12ms, a miss", f)
	}
	if f := byName["7. Herald CPU/request (API + Redis)"]; !strings.HasPrefix(f.Value, "120µs") || f.Result != miss {
		t.Errorf("CPU a request %+v, want the worst round's 120µs, a miss", f)
	}
}

// The links figure is the median round's rate with links over without, judged at 0.9.
func TestLinksFigure(t *testing.T) {
	rounds := []stormRound{
		{h: stormRun{rate: 100}, links: stormRun{rate: 95}},
		{h: stormRun{rate: 100}, links: stormRun{rate: 50}},
		{h: stormRun{rate: 100}, links: stormRun{rate: 92}},
	}
	f := linksFigure(10_000, rounds)
	if !strings.HasPrefix(f.Value, "0.920×") || f.Result != judge(true) {
		t.Errorf("median of 0.95, 0.50, 0.92: %+v", f)
	}
	f = linksFigure(10_000, rounds[1:2])
	if f.Result != judge(false) {
		t.Errorf("0.5 is a miss: %+v", f)
	}
}
