package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// lastNotified is set from what the engine wrote when nothing changed since, and from a fresh
// read when something did (an acknowledgement through the API), which it never overwrites;
// and it never moves back.
func TestMarkNotified(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	gid := herald.NewID(time.Now())
	now := time.Now()
	mk := func() herald.Alert {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		return a
	}
	same, acked, unknown := mk(), mk(), mk()
	// The API acknowledges one after the engine wrote it.
	if _, err := st.UpdateAlert(ctx, false, gid, acked.ID, func(a *herald.Alert) ([]herald.Event, error) {
		_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	at := now.Add(2 * time.Second)
	err := st.MarkNotified(ctx, store.Scope{GroupID: gid},
		map[string]time.Time{same.ID: at, acked.ID: at, unknown.ID: at},
		map[string]herald.Alert{same.ID: same, acked.ID: acked})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{same.ID, acked.ID, unknown.ID} {
		a, err := st.Alert(ctx, gid, id)
		if err != nil {
			t.Fatal(err)
		}
		if !a.LastNotified.Equal(herald.At(at).Time) {
			t.Errorf("alert %s: lastNotified %s, want %s", id, a.LastNotified, herald.At(at))
		}
		if id == acked.ID && a.AcknowledgingUsername != "ann" {
			t.Errorf("the acknowledgement was overwritten: %+v", a)
		}
	}
	// An earlier delivery's time never moves it back.
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, map[string]time.Time{same.ID: now}, nil); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.Alert(ctx, gid, same.ID); !a.LastNotified.Equal(herald.At(at).Time) {
		t.Errorf("lastNotified moved back to %s", a.LastNotified)
	}
}
