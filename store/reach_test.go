package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A resolution goes to a target only after an opening reached it: it waits while one is being
// sent, is let through once one reached (or may have), and is withheld (and withholds any
// later opening) when nothing did.
func TestResolutionFollowsTheOpening(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
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
		ok, err := st.BeginNotice(ctx, sc, alert, target, until)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	// Reached: the resolution goes, and again on its retry.
	begin("a1", "0", now.Add(time.Minute))
	if v := verdict("a1", "0", now); v != store.CloseWait {
		t.Errorf("while the opening is being sent: %v, want wait", v)
	}
	if err := st.EndNotice(ctx, sc, "a1", "0", true); err != nil {
		t.Fatal(err)
	}
	if v := verdict("a1", "0", now); v != store.CloseSend {
		t.Errorf("after the opening reached the target: %v, want send", v)
	}
	if v := verdict("a1", "0", now); v != store.CloseSend {
		t.Errorf("the resolution's retry: %v, want send", v)
	}
	if begin("a1", "0", now.Add(time.Minute)) {
		t.Error("an opening retried after the resolution went was let through")
	}

	// Failed with an answer: nothing reached the target; no resolution, no opening after it.
	begin("a2", "0", now.Add(time.Minute))
	if err := st.EndNotice(ctx, sc, "a2", "0", false); err != nil {
		t.Fatal(err)
	}
	if v := verdict("a2", "0", now); v != store.CloseNeverOpened {
		t.Errorf("after the opening failed: %v, want never opened", v)
	}
	if begin("a2", "0", now.Add(time.Minute)) {
		t.Error("an opening retried after the alert ended unseen was let through")
	}

	// A sender that died mid-send: once its time is up, the opening may have reached the target.
	begin("a3", "0", now.Add(time.Second))
	if v := verdict("a3", "0", now.Add(2*time.Second)); v != store.CloseSend {
		t.Errorf("after a sender died mid-send: %v, want send", v)
	}

	// Targets are apart: one person's opening says nothing of another's.
	begin("a4", "0:u1:EMAIL", now.Add(time.Minute))
	_ = st.EndNotice(ctx, sc, "a4", "0:u1:EMAIL", true)
	if v := verdict("a4", "0:u2:EMAIL", now); v != store.CloseNeverOpened {
		t.Errorf("another person's target: %v, want never opened", v)
	}
}
