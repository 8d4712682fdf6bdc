package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A resolution goes to a target only after the opening reached it: it waits while a retry is
// under way, goes once an opening or repeat reached the target (or may have), and is withheld
// (withholding any later opening) when the opening failed and nothing reached it since. A
// target whose opening reached it at once leaves nothing in Redis.
func TestResolutionFollowsTheOpening(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	sc := store.Scope{GroupID: "6b04e0000000000000000002"}
	now := time.Now()
	verdict := func(alert, target string, at time.Time) store.CloseVerdict {
		t.Helper()
		v, err := st.BeginClose(ctx, sc, alert, target, at)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	begin := func(alert, target string, until time.Time) bool {
		t.Helper()
		ok, err := st.BeginNotice(ctx, sc, alert, target, "d-"+alert, until)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	end := func(alert, target string, reached, opening bool) {
		t.Helper()
		if err := st.EndNotice(ctx, sc, alert, target, reached, opening); err != nil {
			t.Fatal(err)
		}
	}

	// Reached at once: nothing recorded, the resolution goes.
	if v := verdict("a0", "0", now); v != store.CloseSend {
		t.Errorf("after an opening that reached the target at once: %v, want send", v)
	}

	// The opening failed; its retry is under way, then reaches the target.
	end("a1", "0", false, true)
	begin("a1", "0", now.Add(time.Minute))
	if v := verdict("a1", "0", now); v != store.CloseWait {
		t.Errorf("while the opening's retry is under way: %v, want wait", v)
	}
	end("a1", "0", true, true)
	if v := verdict("a1", "0", now); v != store.CloseSend {
		t.Errorf("after the retry reached the target: %v, want send", v)
	}

	// The opening failed and nothing reached the target: no resolution, no opening after it.
	end("a2", "0", false, true)
	if v := verdict("a2", "0", now); v != store.CloseNeverOpened {
		t.Errorf("after the opening failed: %v, want never opened", v)
	}
	if begin("a2", "0", now.Add(time.Minute)) {
		t.Error("an opening retried after the alert ended unseen was let through")
	}

	// A failed repeat says nothing against an opening that reached the target; a repeat that
	// reaches it after a failed opening opens it there.
	end("a3", "0", false, false)
	if v := verdict("a3", "0", now); v != store.CloseSend {
		t.Errorf("after a failed repeat: %v, want send", v)
	}
	end("a4", "0", false, true)
	end("a4", "0", true, false)
	if v := verdict("a4", "0", now); v != store.CloseSend {
		t.Errorf("after a repeat reached the target: %v, want send", v)
	}

	// A retry whose sender died mid-send: once its time is up, it may have reached the target.
	end("a5", "0", false, true)
	begin("a5", "0", now.Add(time.Second))
	if v := verdict("a5", "0", now.Add(2*time.Second)); v != store.CloseSend {
		t.Errorf("after a sender died mid-retry: %v, want send", v)
	}

	// A retry whose sender died mid-send, ended by the next run of its task (AbandonNotice):
	// it may have reached the target, at once rather than once its time is up. Another
	// delivery's try, or no try under way, is not ended.
	abandon := func(alert, target, by string) bool {
		t.Helper()
		ok, err := st.AbandonNotice(ctx, sc, alert, target, by)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	end("a7", "0", false, true)
	begin("a7", "0", now.Add(time.Minute))
	if abandon("a7", "0", "d-other") {
		t.Error("another delivery's try was ended")
	}
	if v := verdict("a7", "0", now); v != store.CloseWait {
		t.Errorf("while another delivery's try is under way: %v, want wait", v)
	}
	if !abandon("a7", "0", "d-a7") {
		t.Error("the dead try was not ended")
	}
	if v := verdict("a7", "0", now); v != store.CloseSend {
		t.Errorf("after the dead try was ended: %v, want send", v)
	}
	end("a8", "0", false, true) // failed and ended: no try under way
	if abandon("a8", "0", "d-a8") {
		t.Error("a try that ended was ended again")
	}
	if v := verdict("a8", "0", now); v != store.CloseNeverOpened {
		t.Errorf("after the opening failed, with no try under way: %v, want never opened", v)
	}
	// A mark an older worker wrote names no delivery: it is left to lapse.
	if err := rdb.HSet(ctx, "herald:{g:"+sc.GroupID+"}:reach:a9", "0#s", now.Add(time.Minute).UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	if abandon("a9", "0", "d-a9") {
		t.Error("an older worker's mark was ended")
	}
	if v := verdict("a9", "0", now); v != store.CloseWait {
		t.Errorf("while an older worker's try is under way: %v, want wait", v)
	}

	// Targets are apart: one person's failed opening says nothing of another's.
	end("a6", "0:u1:EMAIL", false, true)
	if v := verdict("a6", "0:u2:EMAIL", now); v != store.CloseSend {
		t.Errorf("another person's target: %v, want send", v)
	}

	// Only failures cost memory: a0, a3 left no key.
	for _, a := range []string{"a0", "a3"} {
		if n, _ := rdb.Exists(ctx, "{g:"+sc.GroupID+"}:reach:"+a).Result(); n != 0 {
			t.Errorf("alert %s left a key though everything reached its target", a)
		}
	}
}
