package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// UsersOf reads every user a notification of a project may reach, over as many pages as it
// takes, each once: a member of both the project and its organization is one user, and a
// global owner is among them.
func TestUsersOfReadsEveryUserOnce(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	now := time.Now()
	p := herald.Project{ID: herald.NewID(now), OrgID: herald.NewID(now)}
	want := map[string]bool{}
	add := func(i int, roles ...herald.Role) {
		u := herald.User{ID: herald.NewID(now), Username: fmt.Sprintf("u%05d", i), Roles: roles, Created: herald.At(now.Add(time.Duration(i) * time.Second))}
		if err := st.CreateUser(ctx, u, herald.Event{ID: herald.NewID(now)}, nil); err != nil {
			t.Fatal(err)
		}
		want[u.ID] = true
	}
	const n = 2500 // two and a half pages of the project's list
	for i := range n {
		add(i, herald.Role{GroupID: p.ID, RoleName: herald.GroupReadOnly})
	}
	add(n, herald.Role{GroupID: p.ID, RoleName: herald.GroupOwner}, herald.Role{OrgID: p.OrgID, RoleName: herald.OrgOwner})
	add(n+1, herald.Role{RoleName: herald.GlobalOwner})
	got, err := st.UsersOf(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, u := range got {
		if seen[u.ID] || !want[u.ID] {
			t.Errorf("user %s (%s) read twice, or not one of the project's", u.ID, u.Username)
		}
		seen[u.ID] = true
	}
	if len(seen) != len(want) {
		t.Errorf("%d users read, want %d", len(seen), len(want))
	}
}
