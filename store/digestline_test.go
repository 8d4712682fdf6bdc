package store_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

var digestT0 = time.UnixMilli(1_800_000_000_000)

// The policy's verdicts: alone while the target took fewer than After messages in the window
// and nothing waits; else wait until the window allows one more; then claim, for a retry.
func TestDigestDecide(t *testing.T) {
	p := store.DigestPolicy{After: 3, Window: 5 * time.Minute}
	at := func(d time.Duration) time.Time { return digestT0.Add(d) }
	three := []time.Time{at(0), at(time.Second), at(2 * time.Second)}
	cases := []struct {
		name      string
		sent      []time.Time
		waiting   int
		claim     bool
		now       time.Time
		want      store.DigestVerdict
		wantUntil time.Time
	}{
		{"a quiet target: alone", nil, 0, false, at(0), store.DigestAlone, at(0)},
		{"under After: alone", three[:2], 0, false, at(3 * time.Second), store.DigestAlone, at(3 * time.Second)},
		{"After reached: wait for the oldest to leave the window", three, 0, false, at(3 * time.Second), store.DigestWait, at(5 * time.Minute)},
		{"a retry cannot claim before the window allows", three, 5, true, at(time.Minute), store.DigestWait, at(5 * time.Minute)},
		{"the window's edge: the oldest is out at exactly Window", three, 5, true, at(5 * time.Minute), store.DigestClaim, at(5 * time.Minute)},
		{"a millisecond before the edge: still waiting", three, 5, true, at(5*time.Minute - time.Millisecond), store.DigestWait, at(5 * time.Minute)},
		{"notices waiting: a new one waits behind them, window open", three[:1], 2, false, at(time.Minute), store.DigestWait, at(time.Minute)},
		{"notices waiting, window open, a retry: claim", three[:1], 2, true, at(time.Minute), store.DigestClaim, at(time.Minute)},
		{"leaving digest mode: nothing waits, the window emptied", three, 0, false, at(10 * time.Minute), store.DigestAlone, at(10 * time.Minute)},
		{"order of the sent times does not matter", []time.Time{at(2 * time.Second), at(0), at(time.Second)}, 0, false, at(3 * time.Second), store.DigestWait, at(5 * time.Minute)},
	}
	for _, c := range cases {
		v, until := p.Decide(c.sent, c.waiting, c.claim, c.now)
		if v != c.want || !until.Equal(c.wantUntil) {
			t.Errorf("%s: %v until %v, want %v until %v", c.name, v, until.Sub(digestT0), c.want, c.wantUntil.Sub(digestT0))
		}
	}
	if !(store.DigestPolicy{After: 0, Window: time.Minute}).Off() || (store.DigestPolicy{After: 3, Window: time.Minute}).Off() {
		t.Error("After 0 must turn digests off, and only it")
	}
	// Huge inputs: a long history and a huge line are decided at once.
	var many []time.Time
	for i := range 100000 {
		many = append(many, at(time.Duration(i)*time.Millisecond))
	}
	start := time.Now()
	v, until := p.Decide(many, 10000, true, at(100*time.Second))
	if v != store.DigestWait || !until.Equal(at(99997*time.Millisecond+5*time.Minute)) || time.Since(start) > time.Second {
		t.Errorf("100,000 sent: %v until %v in %v", v, until.Sub(digestT0), time.Since(start))
	}
}

// The store's step decides as the policy does, step by step, and keeps the line's state: a
// notice sent alone stays alone on its retry, a waiting one keeps its place, a claimed one
// stays claimed; the claimer's retry finds its own digest.
func TestDigestStepFollowsThePolicy(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	p := store.DigestPolicy{After: 3, Window: time.Minute}
	line := store.DigestLine(store.PaceKey("EMAIL", "ana@example.com"), herald.NewID(digestT0))
	var sent []time.Time
	waiting, alone := map[string]bool{}, map[string]bool{}
	steps := []struct {
		id    string
		at    time.Duration
		claim bool
		want  store.DigestVerdict
	}{
		{"a", 0, false, store.DigestAlone},
		{"b", time.Second, false, store.DigestAlone},
		{"a", 2 * time.Second, true, store.DigestAlone}, // a's retry
		{"c", 2 * time.Second, false, store.DigestAlone},
		{"d", 3 * time.Second, false, store.DigestWait},
		{"e", 4 * time.Second, false, store.DigestWait},
		{"d", 30 * time.Second, true, store.DigestWait},  // too soon
		{"f", 61 * time.Second, false, store.DigestWait}, // the window allows, but d and e wait
		{"e", 61 * time.Second, true, store.DigestClaim},
		{"d", 62 * time.Second, true, store.DigestClaimed},
		{"e", 63 * time.Second, true, store.DigestClaimed}, // the claimer's retry
		{"g", 63 * time.Second, false, store.DigestAlone},  // a, b, c left the window: the digest is one
		{"h", 63 * time.Second, false, store.DigestAlone},
		{"i", 64 * time.Second, false, store.DigestWait},
		{"i", 200 * time.Second, false, store.DigestWait},  // a first try never claims
		{"j", 200 * time.Second, true, store.DigestClaim},  // a retry joins and claims
		{"k", 400 * time.Second, false, store.DigestAlone}, // nothing waits, the window is empty
	}
	for i, s := range steps {
		now := digestT0.Add(s.at)
		turn, err := st.DigestStep(ctx, line, s.id, "entry "+s.id, p, s.claim, time.Hour, now)
		if err != nil {
			t.Fatal(err)
		}
		if turn.Verdict != s.want {
			t.Fatalf("step %d (%s at %v): %v, want %v", i, s.id, s.at, turn.Verdict, s.want)
		}
		// The model: the policy over what was sent and what waits (a retry of a notice sent
		// alone, or claimed, is the line's state, not the policy's).
		if !alone[s.id] && turn.Verdict != store.DigestClaimed {
			v, until := p.Decide(sent, len(waiting), s.claim, now)
			if v != turn.Verdict || (v == store.DigestWait && !until.Equal(turn.Until)) {
				t.Fatalf("step %d: the script said %v until %v, the policy %v until %v", i, turn.Verdict, turn.Until.Sub(digestT0), v, until.Sub(digestT0))
			}
		}
		switch turn.Verdict {
		case store.DigestAlone:
			if !alone[s.id] {
				sent = append(sent, now)
			}
			alone[s.id] = true
		case store.DigestWait:
			waiting[s.id] = true
		case store.DigestClaim:
			if turn.Digest != store.DigestID(s.id) || turn.Count != len(waiting)+btoi(!waiting[s.id]) {
				t.Fatalf("step %d: claim %+v, want digest %s of %d", i, turn, store.DigestID(s.id), len(waiting)+1)
			}
			sent, waiting = append(sent, now), map[string]bool{}
		case store.DigestClaimed:
			if turn.Digest != store.DigestID("e") {
				t.Fatalf("step %d: claimed by %s, want e's digest %s", i, turn.Digest, store.DigestID("e"))
			}
		}
	}
	claim, err := st.DigestClaim(ctx, line, store.DigestID("e"))
	if err != nil || len(claim) != 3 || claim["d"] != "entry d" || claim["f"] != "entry f" {
		t.Fatalf("e's claim %v (%v), want d, e and f", claim, err)
	}
	if !herald.ValidID(store.DigestID("e")) {
		t.Fatal("a digest id must be an id")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// 10,000 notices waiting for one target, stepped concurrently: one claim takes them all, each
// exactly once; every other finds itself claimed by that digest; withdrawing a claimed one
// names the digest, and a waiting one leaves the line.
func TestDigestClaimIsAtomicAndBounded(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	p := store.DigestPolicy{After: 1, Window: time.Minute}
	line := store.DigestLine(store.PaceKey("SMS", "+15550100"), herald.NewID(digestT0))
	if turn, err := st.DigestStep(ctx, line, "first", "x", p, false, time.Hour, digestT0); err != nil || turn.Verdict != store.DigestAlone {
		t.Fatalf("first: %+v %v", turn, err)
	}
	const n = 10000
	concurrently(n, func(id string) {
		turn, err := st.DigestStep(ctx, line, id, "entry "+id, p, false, time.Hour, digestT0.Add(time.Second))
		if err != nil || turn.Verdict != store.DigestWait || !turn.Until.Equal(digestT0.Add(time.Minute)) {
			t.Errorf("%s: %+v %v", id, turn, err)
		}
	})
	// Every waiting one's retry runs once the window allows, concurrently: one claims.
	now := digestT0.Add(time.Minute)
	var mu sync.Mutex
	claims := map[string]int{}
	claimed := 0
	concurrently(n, func(id string) {
		turn, err := st.DigestStep(ctx, line, id, "entry "+id, p, true, time.Hour, now)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			t.Error(err)
		case turn.Verdict == store.DigestClaim:
			claims[turn.Digest] = turn.Count
		case turn.Verdict == store.DigestClaimed:
			claimed++
		default:
			t.Errorf("%s: %+v", id, turn)
		}
	})
	if len(claims) != 1 || claimed != n-1 {
		t.Fatalf("claims %v and %d claimed, want one claim and %d claimed", claims, claimed, n-1)
	}
	for id, count := range claims {
		if count != n {
			t.Fatalf("the claim stands for %d notices, want %d", count, n)
		}
		entries, err := st.DigestClaim(ctx, line, id)
		if err != nil || len(entries) != n || entries["n9999"] != "entry n9999" {
			t.Fatalf("the claim holds %d entries (%v)", len(entries), err)
		}
		if d, err := st.DigestWithdraw(ctx, line, "n17"); err != nil || d != id {
			t.Fatalf("withdrawing a claimed notice: %q %v, want the digest %s", d, err, id)
		}
	}
	// A later notice waits (the digest took the window's one message), and can leave the line.
	if turn, err := st.DigestStep(ctx, line, "late", "y", p, false, time.Hour, now.Add(time.Second)); err != nil || turn.Verdict != store.DigestWait {
		t.Fatalf("late: %+v %v", turn, err)
	}
	if d, err := st.DigestWithdraw(ctx, line, "late"); err != nil || d != "" {
		t.Fatalf("withdrawing a waiting notice: %q %v", d, err)
	}
	if turn, err := st.DigestStep(ctx, line, "later", "z", p, false, time.Hour, now.Add(2*time.Minute)); err != nil || turn.Verdict != store.DigestAlone || !turn.Stopped {
		t.Fatalf("nothing waits, the window is empty: %+v %v, want alone, the target no longer digested", turn, err)
	}
	if _, err := st.DigestStep(ctx, "herald:{g:x}:alerts", "a", "e", p, true, time.Hour, now); err == nil {
		t.Fatal("a key that is not a digest line was used as one")
	}
}

// concurrently runs f for n ids ("n0", "n1", ...), 16 at once.
func concurrently(n int, f func(id string)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f("n" + strconv.Itoa(i))
		}()
	}
	wg.Wait()
}

// A line's keys share its target's slot: its steps and claims work on a Redis Cluster.
func TestDigestLineOnCluster(t *testing.T) {
	ctx := context.Background()
	_, st, slotErrs := newCluster(t)
	p := store.DigestPolicy{After: 1, Window: time.Minute}
	for target := range 5 {
		line := store.DigestLine(store.PaceKey("EMAIL", fmt.Sprintf("p%d@example.com", target)), herald.NewID(digestT0))
		for i, step := range []struct {
			id    string
			claim bool
			at    time.Duration
			want  store.DigestVerdict
		}{{"a", false, 0, store.DigestAlone}, {"b", false, 0, store.DigestWait}, {"b", true, time.Minute, store.DigestClaim}, {"b", true, time.Minute, store.DigestClaimed}} {
			turn, err := st.DigestStep(ctx, line, step.id, "e", p, step.claim, time.Hour, digestT0.Add(step.at))
			if err != nil || turn.Verdict != step.want {
				t.Fatalf("target %d step %d: %+v %v", target, i, turn, err)
			}
		}
		if entries, err := st.DigestClaim(ctx, line, store.DigestID("b")); err != nil || len(entries) != 1 {
			t.Fatalf("claim: %v %v", entries, err)
		}
		if _, err := st.DigestWithdraw(ctx, line, "b"); err != nil {
			t.Fatal(err)
		}
	}
	if errs := slotErrs.Errors(); len(errs) > 0 {
		t.Errorf("slot errors: %v", errs)
	}
}

// A notice let go alone stays alone on a retry that comes after the window (Redis paused, a
// worker stalled): with others waiting then, it would otherwise go into their digest and be
// told twice.
func TestDigestAloneStaysAloneAfterTheWindow(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	p := store.DigestPolicy{After: 1, Window: time.Minute}
	line := store.DigestLine(store.PaceKey("EMAIL", "ana@example.com"), herald.NewID(digestT0))
	step := func(id string, claim bool, at time.Duration) store.DigestTurn {
		t.Helper()
		turn, err := st.DigestStep(ctx, line, id, "entry "+id, p, claim, time.Hour, digestT0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return turn
	}
	if turn := step("first", false, 0); turn.Verdict != store.DigestAlone {
		t.Fatalf("first: %+v, want alone", turn)
	}
	if turn := step("second", false, time.Second); turn.Verdict != store.DigestWait {
		t.Fatalf("second: %+v, want to wait", turn)
	}
	if turn := step("first", true, 2*time.Minute); turn.Verdict != store.DigestAlone {
		t.Fatalf("first's retry after the window: %+v, want alone again", turn)
	}
	if turn := step("second", true, 2*time.Minute); turn.Verdict != store.DigestClaim || turn.Count != 1 {
		t.Fatalf("second after the window: %+v, want a claim of itself alone", turn)
	}
}
