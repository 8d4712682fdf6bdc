package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Two sessions (of one process) never pass for each other: a session whose lease ran out and
// was taken cannot renew it or remove observations; the holder removes exactly the batch it
// read, and a batch it did not read stays.
func TestProjectLeaseIsPerSessionAndFenced(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	const g = "6b04e0000000000000000001"
	for _, b := range []string{"b1", "b2", "b3"} {
		if err := st.AppendObservations(ctx, g, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	first, ok, err := st.LockProject(ctx, g, 100*time.Millisecond)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok, _ := st.LockProject(ctx, g, time.Second); ok {
		t.Fatal("a second session took a held lease")
	}
	time.Sleep(150 * time.Millisecond)
	second, ok, err := st.LockProject(ctx, g, time.Second)
	if err != nil || !ok {
		t.Fatal("the lease did not run out", err)
	}
	if err := first.Extend(ctx, time.Second); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session renewed a lease another holds: %v", err)
	}
	if err := first.DropObservation(ctx, g, []byte("b1")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session removed observations without its lease: %v", err)
	}
	if err := second.DropObservation(ctx, g, []byte("b2")); err != nil { // not the head: nothing
		t.Fatal(err)
	}
	if err := second.DropObservation(ctx, g, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	got, err := st.PendingObservations(ctx, g, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != "b2" || string(got[1]) != "b3" {
		t.Errorf("left %q, want b2 b3", got)
	}
	// Setting a batch aside is fenced and takes only the head, as dropping one is.
	if err := first.SetObservationsAside(ctx, g, []byte("b2")); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first session set observations aside without its lease: %v", err)
	}
	if err := second.SetObservationsAside(ctx, g, []byte("b3")); err != nil { // not the head: nothing
		t.Fatal(err)
	}
	if aside, err := st.ObservationsAside(ctx, g); err != nil || len(aside) != 0 {
		t.Errorf("set aside %q (%v) by a session without the lease, or off the head", aside, err)
	}
	if err := second.SetObservationsAside(ctx, g, []byte("b2")); err != nil {
		t.Fatal(err)
	}
	if aside, err := st.ObservationsAside(ctx, g); err != nil || len(aside) != 1 || aside[0] != "b2" {
		t.Errorf("set aside %q (%v), want b2", aside, err)
	}
	if got, err := st.PendingObservations(ctx, g, 10); err != nil || len(got) != 1 || string(got[0]) != "b3" {
		t.Errorf("left %q (%v), want b3", got, err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
