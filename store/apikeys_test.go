package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Whether a caller may change a key's roles in a project depends on the roles the key holds
// there (a project's user administrator may not touch an owner's), so AssignAPIKey judges the
// key as it is written. Here the key is raised to owner between the judgement of the key as
// first read and the write (by a second caller, from inside the first judgement): the
// transaction is tried again on the raised key, judged again, and refused; the owner's grant
// stands and no event of the refused change is recorded.
func TestAssignAPIKeyJudgesTheKeyAsWritten(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx, now := context.Background(), time.Now()
	org, project := herald.NewID(now), herald.NewID(now)
	k := herald.APIKey{ID: herald.NewID(now), PublicKey: "racedkey", OrgID: org, Desc: "deploy", Created: herald.At(now),
		Roles: []herald.Role{{OrgID: org, RoleName: herald.OrgReadOnly}}}
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	errOutranks := errors.New("the key outranks the caller")
	var judged []bool // whether each judgement saw the key as an owner of the project
	raised := false
	userAdmin := func(k herald.APIKey) error {
		owner := slices.Contains(k.Roles, herald.Role{GroupID: project, RoleName: herald.GroupOwner})
		judged = append(judged, owner)
		if !raised { // an owner raises the key while this caller's change is under way
			raised = true
			if _, err := st.AssignAPIKey(ctx, k.ID, project, []string{herald.GroupOwner}, herald.Event{ID: herald.NewID(now)},
				func(herald.APIKey) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if owner {
			return errOutranks
		}
		return nil
	}
	_, err := st.AssignAPIKey(ctx, k.ID, project, []string{herald.GroupReadOnly}, herald.Event{ID: herald.NewID(now)}, userAdmin)
	if !errors.Is(err, errOutranks) {
		t.Fatalf("the user administrator's change: %v, want it refused as the key outranks it", err)
	}
	if !slices.Equal(judged, []bool{false, true}) {
		t.Errorf("judgements saw the key as owner: %v, want [false true] (judged again on the raised key)", judged)
	}
	got, err := st.APIKey(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []herald.Role{{OrgID: org, RoleName: herald.OrgReadOnly}, {GroupID: project, RoleName: herald.GroupOwner}}
	if !slices.Equal(got.Roles, want) {
		t.Errorf("roles after the race: %v, want the owner's grant to stand: %v", got.Roles, want)
	}
	evs, _, err := st.Events(ctx, store.EventScope{GroupID: project}, store.EventFilter{}, store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Errorf("%d events in the project, want 1 (the owner's grant; the refused change records none)", len(evs))
	}
}

// A user and an API key share one namespace at login (a key of a user's name shadows the
// user, who could never sign in again): a user is not created under a key's public key, nor a
// key under a user's name, and the name refused stays free in its own kind (its reservation is
// given back).
func TestUsersAndKeysDoNotShareNames(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx, now := context.Background(), time.Now()
	key := herald.APIKey{ID: herald.NewID(now), PublicKey: "sharedname", Created: herald.At(now),
		Roles: []herald.Role{{RoleName: herald.GlobalOwner}}}
	if err := st.CreateAPIKey(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	err := st.CreateUser(ctx, herald.User{ID: herald.NewID(now), Username: "sharedname", HA1: "ha1"}, herald.Event{ID: herald.NewID(now)}, nil)
	if !isConflict(err) {
		t.Errorf("a user named like a key: %v, want a conflict", err)
	}
	if _, ok, err := st.UserByUsername(ctx, "sharedname"); ok || err != nil {
		t.Errorf("the refused user's name is taken by a user (%v, %v): its reservation was not given back", ok, err)
	}

	user := herald.User{ID: herald.NewID(now), Username: "someone", HA1: "ha1"}
	if err := st.CreateUser(ctx, user, herald.Event{ID: herald.NewID(now)}, nil); err != nil {
		t.Fatal(err)
	}
	err = st.CreateAPIKey(ctx, herald.APIKey{ID: herald.NewID(now), PublicKey: "someone", Created: herald.At(now)}, nil)
	if !isConflict(err) {
		t.Errorf("a key named like a user: %v, want a conflict", err)
	}
	if _, ok, err := st.APIKeyByPublicKey(ctx, "someone"); ok || err != nil {
		t.Errorf("the refused key's public key is taken by a key (%v, %v): its reservation was not given back", ok, err)
	}
	if got, ok, err := st.UserByUsername(ctx, "someone"); !ok || err != nil || got.ID != user.ID {
		t.Errorf("the user after a key of its name was refused: %+v, %v, %v", got, ok, err)
	}
}

func isConflict(err error) bool {
	e := herald.ErrorOf(err)
	return e != nil && e.Kind == herald.KindConflict
}
