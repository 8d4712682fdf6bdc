package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Every listener hears each kick, in order; a closed listener's channel ends.
func TestKicksReachEveryListener(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	a, err := st.ListenKicks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.ListenKicks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"p1", "p2"} {
		if err := st.Kick(ctx, g); err != nil {
			t.Fatal(err)
		}
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
