package dispatch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A GROUP notification reaches every member of the project, however many: the one owner with
// an email address, the last of 10,001 owners (the others joined first and have none), is
// emailed, rather than left out past the first 10,000 read.
func TestGroupNotificationReachesEveryMember(t *testing.T) {
	if testing.Short() || !storetest.Real() {
		t.Skip("creates 10,001 users: under a second on redis-server, minutes on the embedded store (the store's paging is tested on both: TestUsersOfReadsEveryUserOnce)")
	}
	r, mail := newMailRig(t, nil)
	ctx := context.Background()
	owner := []herald.Role{{GroupID: r.project, RoleName: herald.GroupOwner}}
	create := func(i int, created time.Time, address string) error {
		u := herald.User{ID: herald.NewID(created), Username: fmt.Sprintf("owner%05d", i), EmailAddress: address,
			FirstName: "A", LastName: "B", Roles: owner, Created: herald.At(created)}
		ev := herald.NewEvent(herald.EventUserCreated, herald.Principal{}, herald.Scope{}, created)
		return r.Store.CreateUser(ctx, u, ev, nil)
	}
	const earlier = 10000
	joined := time.Now().Add(-time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < earlier; i += 8 {
				if err := create(i, joined, ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := create(earlier, time.Now(), "last@example.com"); err != nil {
		t.Fatal(err)
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.observe(hostDown("h1", true))
	id := r.onlyAlert("OPEN")["id"].(string)
	if !eventually(15*time.Second, func() bool { return len(mail.Mails()) >= 1 }) {
		t.Fatalf("the owner past the first 10,000 members got no mail: attempts %v\n%s", r.attemptsOf(id), r.failedTasks())
	}
	if ms := mail.Mails(); len(ms) != 1 || len(ms[0].To) != 1 || ms[0].To[0] != "last@example.com" {
		t.Errorf("mails %v, want one to last@example.com", ms)
	}
	if as := r.attemptsOf(id); hasAttempt(as, store.OutcomeDeadLetter, "") {
		t.Errorf("a dead letter though the owner was emailed: %v", as)
	}
}
