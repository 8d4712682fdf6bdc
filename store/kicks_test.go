package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Each batch queued is announced to every listener, by its project; a batch refused for a
// full backlog is not (nothing was queued), and a closed listener's channel ends.
func TestKicksAnnounceQueuedBatches(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	st.LimitObservationBacklog(10)
	a, err := st.ListenKicks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.ListenKicks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendObservations(ctx, "p1", []byte(`[1]`)); err != nil {
		t.Fatal(err)
	}
	var full *herald.Error
	if err := st.AppendObservations(ctx, "p1", []byte(`[1,2,3,4,5,6,7,8,9]`)); !errors.As(err, &full) || full.Code != herald.CodeObservationBacklogFull {
		t.Fatalf("a batch past the backlog: %v", err)
	}
	if err := st.AppendObservations(ctx, "p2", []byte(`[2]`)); err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]*store.Kicks{"a": a, "b": b} {
		for _, want := range []string{"p1", "p2"} {
			select {
			case got := <-k.C():
				if got != want {
					t.Errorf("listener %s heard %q, want %q", name, got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("listener %s heard no kick for %s", name, want)
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, open := <-a.C():
		if open {
			t.Error("a closed listener heard a kick")
		}
	case <-time.After(5 * time.Second):
		t.Error("a closed listener's channel stays open")
	}
	_ = b.Close()
}
