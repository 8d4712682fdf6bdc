package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// reachRig opens and closes alerts of one project and drives their reach records.
type reachRig struct {
	t   testing.TB
	ctx context.Context
	rdb redis.UniversalClient
	st  *store.Store
	sc  store.Scope
	now time.Time
}

func newReachRig(t testing.TB) *reachRig {
	rdb, st, gid := newProject(t)
	r := &reachRig{t: t, ctx: context.Background(), rdb: rdb, st: st,
		sc: store.Scope{GroupID: gid}, now: time.UnixMilli(time.Now().UnixMilli())}
	if err := r.st.TrackReach(r.ctx, r.sc, r.now); err != nil {
		t.Fatal(err)
	}
	return r
}

// open commits an open alert created at created, as the engine does, and returns its id.
func (r *reachRig) open(created time.Time) string {
	r.t.Helper()
	a := herald.Alert{ID: herald.NewID(created), GroupID: r.sc.GroupID, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(created), Updated: herald.At(created), HostID: "h-" + created.String()}
	sched := herald.Schedule{Detected: created, Next: []time.Time{r.now.Add(time.Hour)}, Sent: []int{1}}
	c := store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: a.HostID, Scope: r.sc}, Wake: herald.Wake(a, sched)}
	if _, err := lease(r.t, r.st, r.sc.GroupID).Transact(r.ctx, r.sc, nil, func([]store.Tracked) ([]store.Change, error) { return []store.Change{c}, nil }); err != nil {
		r.t.Fatal(err)
	}
	return a.ID
}

// openMany commits n open alerts created at created at once and returns their ids.
func (r *reachRig) openMany(n int, created time.Time) []string {
	r.t.Helper()
	ids := make([]string, n)
	cs := make([]store.Change, n)
	for i := range cs {
		a := herald.Alert{ID: herald.NewID(created), GroupID: r.sc.GroupID, AlertConfigID: "c1", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(created), Updated: herald.At(created), HostID: fmt.Sprintf("h%d", i)}
		sched := herald.Schedule{Detected: created, Next: []time.Time{r.now.Add(time.Hour)}, Sent: []int{1}}
		ids[i], cs[i] = a.ID, store.Change{Tracked: store.Tracked{Alert: a, Schedule: sched, Target: a.HostID, Scope: r.sc}, Wake: herald.Wake(a, sched)}
	}
	if _, err := lease(r.t, r.st, r.sc.GroupID).Transact(r.ctx, r.sc, nil, func([]store.Tracked) ([]store.Change, error) { return cs, nil }); err != nil {
		r.t.Fatal(err)
	}
	return ids
}

// close commits the alert's close, which ends its schedule.
func (r *reachRig) close(id string) {
	r.t.Helper()
	if _, err := lease(r.t, r.st, r.sc.GroupID).Transact(r.ctx, r.sc, []string{id}, func(ts []store.Tracked) ([]store.Change, error) {
		c := store.Change{Tracked: ts[0], PrevStatus: ts[0].Alert.Status}
		c.Tracked.Alert.Status = herald.StatusClosed
		c.Tracked.Alert.Resolved = herald.At(r.now)
		return []store.Change{c}, nil
	}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *reachRig) begin(id, target string, until time.Time) store.Try {
	r.t.Helper()
	got, err := r.st.BeginNotice(r.ctx, r.sc, id, target, "d-"+id, until)
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

func (r *reachRig) end(id, target string, try store.Try, reached bool) {
	r.t.Helper()
	if err := r.st.EndNotice(r.ctx, r.sc, id, target, "d-"+id, try, reached); err != nil {
		r.t.Fatal(err)
	}
}

// verdictNames are the close verdicts as a failed test names them.
var verdictNames = map[store.CloseVerdict]string{store.CloseSend: "send", store.CloseWait: "wait", store.CloseNeverOpened: "never opened"}

// wantVerdict checks the verdict on target's resolution of alert id now; what names the case.
func (r *reachRig) wantVerdict(what, id, target string, want store.CloseVerdict) {
	r.t.Helper()
	if got := r.verdict(id, target, r.now); got != want {
		r.t.Errorf("%s: %s, want %s", what, verdictNames[got], verdictNames[want])
	}
}

func (r *reachRig) verdict(id, target string, at time.Time) store.CloseVerdict {
	r.t.Helper()
	v, err := r.st.BeginClose(r.ctx, r.sc, id, target, at)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

// A resolution goes to a target only where something of its alert was tried, and a target
// with no record got nothing: its resolution is withheld, and nothing of the alert goes there
// after it. Each case is a sequence of what happened to one alert at target "0".
func TestResolutionFollowsTheOpening(t *testing.T) {
	r := newReachRig(t)
	const target = "0"
	for _, c := range []struct {
		name   string
		before func(id string) // while the alert is open
		want   store.CloseVerdict
	}{
		{"never tried (superseded, or its sender died first)", func(string) {}, store.CloseNeverOpened},
		{"reached at once", func(id string) { r.begin(id, target, time.Time{}) }, store.CloseSend},
		{"no answer came: may have reached", func(id string) {
			r.end(id, target, r.begin(id, target, time.Time{}), true)
		}, store.CloseSend},
		{"failed with an answer", func(id string) {
			r.end(id, target, r.begin(id, target, time.Time{}), false)
		}, store.CloseNeverOpened},
		{"failed, then its retry reached", func(id string) {
			r.end(id, target, r.begin(id, target, time.Time{}), false)
			r.end(id, target, r.begin(id, target, r.now.Add(time.Minute)), true)
		}, store.CloseSend},
		{"reached, then a repeat failed", func(id string) {
			r.begin(id, target, time.Time{})
			r.end(id, target, r.begin(id, target, time.Time{}), false)
		}, store.CloseSend},
		{"a retry under way", func(id string) {
			r.end(id, target, r.begin(id, target, time.Time{}), false)
			r.begin(id, target, r.now.Add(time.Minute))
		}, store.CloseWait},
		{"a retry whose sender died, its mark lapsed", func(id string) {
			r.end(id, target, r.begin(id, target, time.Time{}), false)
			r.begin(id, target, r.now.Add(-time.Second))
		}, store.CloseSend},
		{"another person's target reached", func(id string) { r.begin(id, "0:u2:EMAIL", time.Time{}) }, store.CloseNeverOpened},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := r.open(r.now)
			c.before(id)
			r.close(id)
			if got := r.verdict(id, target, r.now); got != c.want {
				t.Fatalf("verdict %v, want %v", got, c.want)
			}
			if got := r.begin(id, target, r.now.Add(time.Minute)); got.OK {
				t.Error("an opening or repeat was let through after the alert closed")
			}
		})
	}
}

// A resolution withheld stays withheld, and what was refused stays refused when the alert is
// retried after its close.
func TestWithheldResolutionEndsTheTarget(t *testing.T) {
	r := newReachRig(t)
	id := r.open(r.now)
	r.close(id)
	r.wantVerdict("verdict", id, "0", store.CloseNeverOpened)
	r.wantVerdict("asked again", id, "0", store.CloseNeverOpened)
}

// A retried opening checks, as it begins, that its alert is still open: once the close is
// committed, a retry that read the alert open before is refused, so that it never follows the
// resolution (a PAGING trigger after its resolve).
func TestRetryBegunAfterTheCloseIsRefused(t *testing.T) {
	r := newReachRig(t)
	id := r.open(r.now)
	first := r.begin(id, "0:u1:EMAIL", r.now.Add(time.Minute))
	if !first.OK || first.WasTried {
		t.Fatalf("first try: %+v", first)
	}
	r.end(id, "0:u1:EMAIL", first, true)
	r.close(id)
	if got := r.begin(id, "0:u2:EMAIL", r.now.Add(time.Minute)); got.OK {
		t.Error("the second person's opening was let through after the close")
	}
	r.wantVerdict("the first person's resolution", id, "0:u1:EMAIL", store.CloseSend)
	r.wantVerdict("the second person's resolution", id, "0:u2:EMAIL", store.CloseNeverOpened)
}

// A retry whose sender died mid-send, ended by the next run of its task (AbandonNotice): it
// may have reached the target, at once rather than once its time is up. Another delivery's
// try, or no try under way, is not ended.
func TestAbandonNotice(t *testing.T) {
	r := newReachRig(t)
	abandon := func(id, by string) bool {
		t.Helper()
		ok, err := r.st.AbandonNotice(r.ctx, r.sc, id, "0", by)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	id := r.open(r.now)
	r.end(id, "0", r.begin(id, "0", time.Time{}), false)
	r.begin(id, "0", r.now.Add(time.Minute))
	r.close(id)
	if abandon(id, "d-other") {
		t.Error("another delivery's try was ended")
	}
	r.wantVerdict("while the try is under way", id, "0", store.CloseWait)
	if !abandon(id, "d-"+id) {
		t.Error("the dead try was not ended")
	}
	if abandon(id, "d-"+id) {
		t.Error("a try that ended was ended again")
	}
	r.wantVerdict("after the dead try was ended", id, "0", store.CloseSend)
}

// A digest's openings begun by a run whose sender died, ended together by its next run
// (AbandonNotices): the tries of that digest only.
func TestAbandonNotices(t *testing.T) {
	r := newReachRig(t)
	a, b := r.open(r.now), r.open(r.now)
	r.begin(b, "1", r.now.Add(time.Minute)) // another delivery's try, at another target
	for _, id := range []string{a, b} {
		if _, err := r.st.BeginNotice(r.ctx, r.sc, id, "0", "dg", r.now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		r.close(id)
	}
	if err := r.st.AbandonNotices(r.ctx, []store.Reach{{Scope: r.sc, AlertID: a, Target: "0"}, {Scope: r.sc, AlertID: b, Target: "0"},
		{Scope: r.sc, AlertID: b, Target: "1"}}, "dg"); err != nil {
		t.Fatal(err)
	}
	r.wantVerdict("a's resolution", a, "0", store.CloseSend)
	r.wantVerdict("b's resolution", b, "0", store.CloseSend)
	r.wantVerdict("b's resolution at the target another delivery tries", b, "1", store.CloseWait)
}

// An alert created before its scope recorded every try (an older engine's) is read as that
// engine recorded it: no record, reached. One created since is not.
func TestReachOfAnOlderEnginesAlert(t *testing.T) {
	r := newReachRig(t)
	older := r.open(r.now.Add(-time.Hour))
	newer := r.open(r.now)
	r.close(older)
	r.close(newer)
	r.wantVerdict("an older engine's alert", older, "0", store.CloseSend)
	r.wantVerdict("an alert created since", newer, "0", store.CloseNeverOpened)
	// A scope no engine of this version has worked in yet: its first resolution records the
	// time, and alerts created before it are an older engine's.
	other := &reachRig{t: t, ctx: r.ctx, rdb: r.rdb, st: r.st, sc: store.Scope{GroupID: herald.NewID(r.now)}, now: r.now}
	id := other.open(r.now.Add(-time.Minute))
	other.close(id)
	other.wantVerdict("an alert of a scope never tracked", id, "0", store.CloseSend)
}

// A session's first try marks its target as BeginNotice does, and says whether something was
// tried there before.
func TestMarkTried(t *testing.T) {
	r := newReachRig(t)
	id := r.open(r.now)
	first, err := r.st.MarkTried(r.ctx, r.sc, id, "0")
	if err != nil || !first.OK || first.WasTried {
		t.Fatalf("first mark: %+v %v", first, err)
	}
	again, err := r.st.MarkTried(r.ctx, r.sc, id, "0")
	if err != nil || !again.WasTried {
		t.Fatalf("second mark: %+v %v", again, err)
	}
	r.end(id, "0", again, false) // a repeat that failed says nothing against the opening
	r.close(id)
	r.wantVerdict("verdict", id, "0", store.CloseSend)
}

// A digest's reach checks, made many at once, decide as one by one would, each for its own
// target, even when Redis has lost its scripts (SCRIPT FLUSH): an opening is refused once its
// alert closed; a resolution goes where its opening was tried, waits while a retry is under
// way, and is withheld where nothing was tried.
func TestReachChecksAtOnce(t *testing.T) {
	r := newReachRig(t)
	const target, digest = "0:u1:EMAIL", "dg"
	ids := r.openMany(6, r.now)
	r.begin(ids[1], target, time.Time{}) // tried before the digest
	r.close(ids[3])
	if err := r.rdb.ScriptFlush(r.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reaches := func(ids ...string) []store.Reach {
		var out []store.Reach
		for _, id := range ids {
			out = append(out, store.Reach{Scope: r.sc, AlertID: id, Target: target})
		}
		return out
	}
	opening := reaches(ids[:4]...)
	tries, errs, err := r.st.BeginNotices(r.ctx, opening, digest, r.now.Add(time.Minute))
	if err != nil {
		t.Fatal(err, errs)
	}
	if want := []store.Try{{OK: true}, {OK: true, WasTried: true}, {OK: true}, {}}; !slices.Equal(tries, want) {
		t.Fatalf("begun %+v, want %+v", tries, want)
	}
	// 0 reached; 1 and 2 failed with an answer: 1 was tried before, 2 takes its mark back.
	if failed, err := r.st.EndNotices(r.ctx, opening[:3], digest, tries[:3], []bool{true, false, false}); err != nil || failed != 0 {
		t.Fatalf("ending: %d failed: %v", failed, err)
	}
	r.end(ids[4], target, r.begin(ids[4], target, time.Time{}), false)
	r.begin(ids[4], target, r.now.Add(time.Minute)) // a retry under way
	for _, id := range ids[:6] {
		if id != ids[3] {
			r.close(id)
		}
	}
	vs, _, err := r.st.BeginCloses(r.ctx, reaches(ids...), r.now)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.CloseVerdict{store.CloseSend, store.CloseSend, store.CloseNeverOpened, store.CloseNeverOpened, store.CloseWait, store.CloseNeverOpened}
	for i := range want {
		if vs[i] != want[i] {
			t.Errorf("resolution %d: %s, want %s", i, verdictNames[vs[i]], verdictNames[want[i]])
		}
	}
}

// The reach checks of a digest of 10,000 notices: its openings begun and ended, and its
// resolutions, one by one (a round trip each) and at once (a round trip per reachBatch).
func BenchmarkDigestReach(b *testing.B) {
	const n = 10_000
	r := newReachRig(b)
	const target, digest = "0:u1:EMAIL", "dg"
	ids := r.openMany(n, r.now)
	rs := make([]store.Reach, n)
	for i, id := range ids {
		rs[i] = store.Reach{Scope: r.sc, AlertID: id, Target: target}
	}
	reached := make([]bool, n)
	until := r.now.Add(time.Minute)
	b.Run("openings one by one", func(b *testing.B) {
		for b.Loop() {
			for _, x := range rs {
				t, err := r.st.BeginNotice(r.ctx, x.Scope, x.AlertID, x.Target, digest, until)
				if err != nil || !t.OK {
					b.Fatal(t, err)
				}
				if err := r.st.EndNotice(r.ctx, x.Scope, x.AlertID, x.Target, digest, t, true); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("openings at once", func(b *testing.B) {
		for i := range reached {
			reached[i] = true
		}
		for b.Loop() {
			ts, _, err := r.st.BeginNotices(r.ctx, rs, digest, until)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.st.EndNotices(r.ctx, rs, digest, ts, reached); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("resolutions one by one", func(b *testing.B) {
		for b.Loop() {
			for _, x := range rs {
				if v, err := r.st.BeginClose(r.ctx, x.Scope, x.AlertID, x.Target, r.now); err != nil || v != store.CloseSend {
					b.Fatal(v, err)
				}
			}
		}
	})
	b.Run("resolutions at once", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := r.st.BeginCloses(r.ctx, rs, r.now); err != nil {
				b.Fatal(err)
			}
		}
	})
}
