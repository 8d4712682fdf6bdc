package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A signed callback is taken once: the same one again is a replay, another service's or
// another signature is not.
func TestFirstCallback(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx := context.Background()
	for _, c := range []struct {
		service, id string
		want        bool
	}{
		{"chat-b", "v0=aa", true}, {"chat-b", "v0=aa", false}, {"chat-b", "v0=bb", true}, {"sms", "v0=aa", true},
	} {
		got, err := st.FirstCallback(ctx, c.service, c.id, time.Minute)
		if err != nil || got != c.want {
			t.Fatalf("FirstCallback(%s, %s) = %v, %v; want %v", c.service, c.id, got, err, c.want)
		}
	}
}

// The last notice texted to a number is kept for its ttl; one sent earlier that finishes
// later does not replace it.
func TestLastSMS(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx := context.Background()
	if _, ok, err := st.LastSMS(ctx, "+15551234567"); ok || err != nil {
		t.Fatalf("nothing texted: ok %v, %v", ok, err)
	}
	t0 := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	later := store.SMSNotice{GroupID: "5f0c6b1e2a3b4c5d6e7f8091", AlertID: "6a1b2c3d4e5f60718293a4b5", Sent: t0.Add(time.Minute)}
	earlier := store.SMSNotice{AlertID: "6a1b2c3d4e5f60718293a4b6", Global: true, Sent: t0}
	for _, n := range []store.SMSNotice{later, earlier} {
		if err := st.RememberSMS(ctx, "+15551234567", n, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := st.LastSMS(ctx, "+15551234567")
	if err != nil || !ok || got.AlertID != later.AlertID || got.GroupID != later.GroupID || got.Global || !got.Sent.Equal(later.Sent) {
		t.Fatalf("LastSMS = %+v %v %v, want %+v", got, ok, err, later)
	}
	if got, ok, _ := st.LastSMS(ctx, "15551234567"); !ok || got.AlertID != later.AlertID {
		t.Errorf("the number without + has %+v %v", got, ok)
	}
	if _, ok, _ := st.LastSMS(ctx, "+15550000000"); ok {
		t.Error("another number has a notice")
	}
	if err := st.RememberSMS(ctx, "+15559999999", earlier, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, ok, _ := st.LastSMS(ctx, "+15559999999"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the notice outlived its ttl")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
