package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// polledAlert is a store with a project and its open alert, read by ReadProjectAlert as the
// polled endpoint reads it.
func polledAlert(t *testing.T) (*store.Store, herald.Project, herald.Alert) {
	t.Helper()
	st := store.New(storetest.Redis(t))
	ctx, now := context.Background(), time.Now()
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	proj, _ := herald.NewProject("prod", org.ID, []string{"db"}, now)
	a := herald.Alert{ID: herald.NewID(now), GroupID: proj.ID, AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: "h1", HostnameAndPort: "db1:27017",
		Tags: []string{"a"}, CurrentValue: &herald.CurrentValue{Number: 2, Units: "RAW"}}
	for _, err := range []error{st.CreateOrg(ctx, org, herald.Event{}), st.CreateProject(ctx, proj, nil, herald.Event{}),
		st.SaveAlert(ctx, a, false, "")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return st, proj, a
}

// readPolled reads alert id of project gid as the polled endpoint does.
func readPolled(t *testing.T, st *store.Store, gid, id string) *store.ProjectAlertRead {
	t.Helper()
	r := store.ReadProjectAlert(gid, id)
	if err := st.Fetch(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if found, err := r.Decode(); !found || err != nil {
		t.Fatalf("read %s/%s: found %v, %v", gid, id, found, err)
	}
	return r
}

// A polled alert's documents, unchanged since the last read, are not decoded again: a read
// that finds what it read before decodes without allocating.
func TestPolledReadDecodesUnchangedDocumentsOnce(t *testing.T) {
	st, proj, a := polledAlert(t)
	readPolled(t, st, proj.ID, a.ID) // the first read decodes
	r := readPolled(t, st, proj.ID, a.ID)
	if allocs := testing.AllocsPerRun(100, func() { _, _ = r.Decode() }); allocs > 0 {
		t.Errorf("%v allocations a decode of documents decoded before, want none", allocs)
	}
	if got := *r.Alert(); got.ID != a.ID || got.HostnameAndPort != a.HostnameAndPort || got.CurrentValue.Number != 2 || r.Project().Name != proj.Name {
		t.Errorf("read %+v of %+v", got, *r.Project())
	}
}

// What a polled read answers follows every change of the alert: an acknowledgement (its
// document), a notification (its reach hash), and another alert of the same project is
// never answered for it.
func TestPolledReadFollowsChanges(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	st, proj, a := polledAlert(t)
	other := a
	other.ID, other.HostID = herald.NewID(now), "h2"
	if err := st.SaveAlert(ctx, other, false, ""); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := readPolled(t, st, proj.ID, a.ID).Alert(); got.AcknowledgingUsername != "" || !got.LastNotified.IsZero() {
			t.Fatalf("before any change: %+v", got)
		}
	}
	if _, err := st.UpdateAlert(ctx, false, proj.ID, a.ID, func(a *herald.Alert) ([]herald.Event, error) {
		_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if got := readPolled(t, st, proj.ID, a.ID).Alert(); got.AcknowledgingUsername != "ann" || got.AcknowledgementComment != "on it" {
		t.Errorf("after the acknowledgement: %+v", got)
	}
	at := herald.At(now.Add(3 * time.Second))
	if err := st.MarkNotified(ctx, store.Scope{GroupID: proj.ID}, map[string]time.Time{a.ID: at.Time}); err != nil {
		t.Fatal(err)
	}
	if got := readPolled(t, st, proj.ID, a.ID).Alert(); !got.LastNotified.Equal(at.Time) || got.AcknowledgingUsername != "ann" {
		t.Errorf("after the notification: %+v, want lastNotified %s", got, at)
	}
	if got := readPolled(t, st, proj.ID, other.ID).Alert(); got.ID != other.ID || got.HostID != "h2" || got.AcknowledgingUsername != "" || !got.LastNotified.IsZero() {
		t.Errorf("the other alert: %+v", got)
	}
}

// A page of a project's alerts comes with each one's lastNotified in the round trip of its
// documents: two round trips in all (the index, then the documents), as before lastNotified
// moved out of the documents.
func TestAlertPageReadsLastNotifiedWithTheDocuments(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	rdb, st, gid := newProject(t)
	notified := map[string]time.Time{}
	var ids []string
	for i := range 4 {
		a := herald.Alert{ID: herald.NewID(now), GroupID: gid, AlertConfigID: "c", EventTypeName: "HOST_DOWN",
			Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, a, false, ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		if i%2 == 0 {
			notified[a.ID] = now.Add(time.Duration(i+1) * time.Minute)
		}
	}
	if err := st.MarkNotified(ctx, store.Scope{GroupID: gid}, notified); err != nil {
		t.Fatal(err)
	}
	trips := watchRoundTrips(rdb, false)
	for _, f := range []store.AlertFilter{{}, {Status: herald.StatusOpen}} {
		before := len(trips.sent())
		page, total, err := st.Alerts(ctx, gid, f, store.Page{Limit: 10})
		if err != nil || total != len(ids) || len(page) != len(ids) {
			t.Fatalf("status %q: %d of %d, %v", f.Status, len(page), total, err)
		}
		if n := len(trips.sent()) - before; n != 2 {
			t.Errorf("status %q: %d round trips, want 2", f.Status, n)
		}
		for _, a := range page {
			want, ok := notified[a.ID]
			if ok != !a.LastNotified.IsZero() || (ok && !a.LastNotified.Equal(herald.At(want).Time)) {
				t.Errorf("status %q: alert %s lastNotified %s, want %s", f.Status, a.ID, a.LastNotified, want)
			}
		}
	}
}

// A polled read's encoding of its alert is made once for the same documents, lastNotified and
// tag, and again once any of them changed: what is answered is always the encoding of the
// alert as read.
func TestPolledReadKeepsItsEncodingUntilAChange(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	st, proj, a := polledAlert(t)
	made := 0
	encode := func(a *herald.Alert) ([]byte, error) {
		made++
		return json.Marshal(a)
	}
	check := func(what, tag string, wantMade int) {
		t.Helper()
		r := readPolled(t, st, proj.ID, a.ID)
		got, err := r.Encoded(tag, encode)
		want, _ := json.Marshal(r.Alert())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %s (%v), want %s", what, got, err, want)
		}
		if made != wantMade {
			t.Errorf("%s: %d encodings in all, want %d", what, made, wantMade)
		}
	}
	check("first read", "x", 1)
	check("the same again", "x", 1)
	check("another tag", "y", 2)
	check("the first tag again", "x", 3)
	if err := st.MarkNotified(ctx, store.Scope{GroupID: proj.ID}, map[string]time.Time{a.ID: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	check("after a notification", "x", 4)
	check("unchanged since", "x", 4)
	if _, err := st.UpdateAlert(ctx, false, proj.ID, a.ID, func(a *herald.Alert) ([]herald.Event, error) {
		_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	check("after an acknowledgement", "x", 5)
}
