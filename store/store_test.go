package store_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// newProject is a store on a Redis of the test's own, its client, and the id of a project
// that has nothing in it yet.
func newProject(tb testing.TB) (*redis.Client, *store.Store, string) {
	tb.Helper()
	rdb := storetest.Redis(tb)
	return rdb, store.New(rdb), herald.NewID(time.Now())
}

// storeForm is a store on a Redis of tb's own, on one server or as on a Cluster (AsCluster),
// and its client.
func storeForm(tb testing.TB, cluster bool) (*redis.Client, *store.Store) {
	tb.Helper()
	rdb := storetest.Redis(tb)
	st := store.New(rdb)
	if cluster {
		st.AsCluster()
	}
	return rdb, st
}

// newCluster is a store on a Redis Cluster of three masters of the test's own, its client, and
// the record of the slot errors its commands get.
func newCluster(t *testing.T) (*redis.ClusterClient, *store.Store, *storetest.SlotErrors) {
	t.Helper()
	cl := storetest.StartCluster(t, 3)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, Protocol: store.Protocol})
	t.Cleanup(func() { _ = rdb.Close() })
	slotErrs := storetest.WatchSlotErrors(rdb)
	return rdb, store.New(rdb), slotErrs
}

func newConfig(groupID string, now time.Time) herald.AlertConfig {
	return herald.AlertConfig{ID: herald.NewID(now), GroupID: groupID, Created: herald.At(now), Updated: herald.At(now),
		AlertRule: herald.AlertRule{EventTypeName: "HOST_DOWN", Matchers: []herald.Matcher{},
			Notifications: []herald.Notification{{TypeName: "EMAIL", IntervalMin: 5, Fields: map[string]string{"emailAddress": "a@example.com"}}}}}
}

// createConfig stores a new configuration of project gid, created at now, and returns it.
func createConfig(t *testing.T, st *store.Store, gid string, now time.Time) herald.AlertConfig {
	t.Helper()
	c := newConfig(gid, now)
	if err := st.CreateAlertConfig(context.Background(), c, herald.NewEvent(herald.EventAlertConfigAdded, herald.Principal{}, herald.Scope{GroupID: gid}, now)); err != nil {
		t.Fatal(err)
	}
	return c
}

// Concurrent read-modify-writes of one document all land: none overwrites another.
func TestUpdateLosesNoConcurrentChange(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	c := createConfig(t, st, gid, time.Now())
	const writers = 16
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.UpdateAlertConfig(ctx, gid, c.ID, func(c *herald.AlertConfig) ([]herald.Event, error) {
				c.Notifications[0].DelayMin++
				return []herald.Event{herald.NewEvent(herald.EventAlertConfigChanged, herald.Principal{}, herald.Scope{GroupID: gid}, time.Now())}, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := st.AlertConfig(ctx, gid, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Notifications[0].DelayMin != writers {
		t.Fatalf("delayMin %d after %d increments", got.Notifications[0].DelayMin, writers)
	}
	_, n, err := st.Events(ctx, store.EventScope{GroupID: gid}, store.EventFilter{EventType: herald.EventAlertConfigChanged}, store.Page{Limit: 100})
	if err != nil || n != writers {
		t.Fatalf("%d change events, want %d (%v)", n, writers, err)
	}
}

// A change that fails writes nothing, not even its event.
func TestFailedUpdateWritesNothing(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	c := createConfig(t, st, gid, time.Now())
	_, err := st.UpdateAlertConfig(ctx, gid, c.ID, func(c *herald.AlertConfig) ([]herald.Event, error) {
		c.Enabled = true
		return nil, herald.InvalidAttribute("x", "no")
	})
	if herald.ErrorOf(err) == nil {
		t.Fatalf("the change's error comes back: %v", err)
	}
	got, _ := st.AlertConfig(ctx, gid, c.ID)
	if got.Enabled {
		t.Error("a failed change was written")
	}
}

// Items created in the same second page in creation order, each exactly once.
func TestPagingWithinOneSecond(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	now := time.Now()
	var ids []string
	for range 7 {
		ids = append(ids, createConfig(t, st, gid, now).ID)
	}
	var got []string
	for off := 0; off < 7; off += 3 {
		page, total, err := st.AlertConfigs(ctx, gid, store.Page{Offset: off, Limit: 3})
		if err != nil || total != 7 {
			t.Fatalf("total %d, %v", total, err)
		}
		for _, c := range page {
			got = append(got, c.ID)
		}
	}
	if len(got) != 7 {
		t.Fatalf("%d items over the pages", len(got))
	}
	for i := range ids {
		if got[i] != ids[i] {
			t.Fatalf("order %v, want %v", got, ids)
		}
	}
}

// Every key the store writes carries a Redis Cluster hash tag, and a project's keys carry its
// own, so that its transactions stay on one slot.
func TestEveryKeyIsHashTagged(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	now := time.Now()
	who := herald.Principal{APIKeyID: "k", PublicKey: "pub"}
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	if err := st.CreateOrg(ctx, org, herald.NewEvent(herald.EventOrgCreated, who, herald.Scope{}, now)); err != nil {
		t.Fatal(err)
	}
	p := herald.Project{ID: herald.NewID(now), Name: "prod", OrgID: org.ID, Created: herald.At(now)}
	if err := st.CreateProject(ctx, p, []herald.AlertConfig{newConfig(p.ID, now)}, herald.NewEvent(herald.EventGroupCreated, who, herald.Scope{OrgID: org.ID}, now)); err != nil {
		t.Fatal(err)
	}
	a := herald.Alert{ID: herald.NewID(now), GroupID: p.ID, AlertConfigID: "c", EventTypeName: "HOST_DOWN", Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
	if err := st.SaveAlert(ctx, a, false, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveAlert(ctx, a, true, ""); err != nil {
		t.Fatal(err)
	}
	w := herald.MaintenanceWindow{ID: herald.NewID(now), GroupID: p.ID, StartDate: herald.At(now), EndDate: herald.At(now.Add(time.Hour)), AlertTypeNames: []string{"HOST"}}
	if err := st.CreateWindow(ctx, w, herald.NewEvent(herald.EventWindowAdded, who, p.Scope(), now)); err != nil {
		t.Fatal(err)
	}
	if err := st.RegisterHosts(ctx, p.ID, []herald.Host{{ID: "h1", GroupID: p.ID, LastSeen: herald.At(now)}}, map[string][]string{"h1": {"data"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.NonceCounter().Advance(ctx, "n", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	tagged := regexp.MustCompile(`^herald:\{[^{}]+\}:`)
	projectTag := "{g:" + p.ID + "}"
	var inProject int
	for _, k := range keys {
		if !tagged.MatchString(k) {
			t.Errorf("key %q has no hash tag", k)
		}
		if regexp.MustCompile(`^herald:\{g:`).MatchString(k) && !regexp.MustCompile(`^herald:`+regexp.QuoteMeta(projectTag)).MatchString(k) {
			t.Errorf("key %q of another project", k)
		}
		if regexp.MustCompile(regexp.QuoteMeta(projectTag)).MatchString(k) {
			inProject++
		}
	}
	if inProject < 6 {
		t.Errorf("only %d keys under the project's tag: %v", inProject, keys)
	}
}

// The store's clients in tests speak the protocol production's do (store.Protocol), on the
// wire where the server tells (redis-server; the embedded store has no CLIENT INFO): a
// script's or a map's reply is read here as it is there.
func TestTestClientsSpeakTheStoresProtocol(t *testing.T) {
	for name, rdb := range map[string]*redis.Client{"redis": storetest.Redis(t), "embedded": storetest.Embedded(t)} {
		if p := rdb.Options().Protocol; p != store.Protocol {
			t.Errorf("%s: the client is set to RESP%d, want RESP%d", name, p, store.Protocol)
		}
		info, err := rdb.ClientInfo(context.Background()).Result()
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown subcommand") {
			continue // the embedded store
		} else if err != nil {
			t.Fatalf("%s: CLIENT INFO: %v", name, err)
		}
		if info.Resp != store.Protocol {
			t.Errorf("%s: the connection speaks RESP%d, want RESP%d", name, info.Resp, store.Protocol)
		}
	}
}
