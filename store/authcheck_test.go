package store_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Outcome takes the checks in the order the separate calls made them: the throttle first,
// then the credential, then the nonce count.
func TestAuthCheckOutcome(t *testing.T) {
	for _, c := range []struct {
		check store.AuthCheck
		want  store.AuthOutcome
	}{
		{store.AuthCheck{Current: true, Advanced: true}, store.AuthOK},
		{store.AuthCheck{Refused: time.Second, Current: true, Advanced: true}, store.AuthThrottled},
		{store.AuthCheck{Refused: time.Second}, store.AuthThrottled},
		{store.AuthCheck{Advanced: true}, store.AuthChanged},
		{store.AuthCheck{}, store.AuthChanged},
		{store.AuthCheck{Current: true}, store.AuthReplayed},
	} {
		if got := c.check.Outcome(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.check, got, c.want)
		}
	}
}

// CheckAuth against a real Redis: one table row per outcome, each on a key or user kept as
// Credential read it, after something happened in the store; on one server (the counters and
// the credential in one MGET) and as on a Cluster (two, one a slot).
func TestCheckAuth(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		t.Run(map[bool]string{false: "one server", true: "as on a cluster"}[cluster], func(t *testing.T) {
			rdb, st := storeForm(t, cluster)
			mgets := &mgetCounter{}
			rdb.AddHook(mgets.hook())
			testCheckAuth(t, rdb, st, mgets, map[bool]int64{false: 1, true: 2}[cluster])
		})
	}
}

// testCheckAuth is TestCheckAuth's table on st, each check running wantMGETs MGETs.
func testCheckAuth(t *testing.T, rdb *redis.Client, st *store.Store, mgets *mgetCounter, wantMGETs int64) {
	ctx := context.Background()
	limits := store.AuthLimits{Window: time.Minute, PerPair: 2, PerAddress: 10, PerName: 10}
	const address = "192.0.2.1"
	newKey := func(t *testing.T, name string) herald.APIKey {
		k := herald.APIKey{ID: herald.NewID(time.Now()), PublicKey: name, OrgID: herald.NewID(time.Now()), HA1: "ha1",
			Roles: []herald.Role{{OrgID: "o", RoleName: herald.OrgReadOnly}}}
		if err := st.CreateAPIKey(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		return k
	}
	newUser := func(t *testing.T, name string) {
		u := herald.User{ID: herald.NewID(time.Now()), Username: name, HA1: "ha1"}
		if err := st.CreateUser(ctx, u, herald.Event{ID: herald.NewID(time.Now())}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// deleteDoc removes the document of id (whatever its collection), as a deletion would.
	deleteDoc := func(t *testing.T, id string) {
		keys, err := rdb.Keys(ctx, "*:"+id).Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("the document of %s: %v %v", id, keys, err)
		}
		rdb.Del(ctx, keys[0])
	}
	for _, c := range []struct {
		name   string
		user   bool                                                // the name is a user's (else a key's)
		then   func(t *testing.T, name string, c store.Credential) // what happens after it was kept
		count  uint64
		want   store.AuthOutcome
		thenNC uint64 // a count then refused as replayed (0: none), showing this check recorded it
	}{
		{name: "ok", count: 1, want: store.AuthOK, thenNC: 1},
		{name: "user ok", user: true, count: 1, want: store.AuthOK, thenNC: 1},
		{name: "replayed count", count: 5, want: store.AuthReplayed,
			then: func(t *testing.T, _ string, _ store.Credential) { advance(t, st, "n-replayed count", 5) }},
		{name: "throttled", count: 1, want: store.AuthThrottled, thenNC: 1,
			then: func(t *testing.T, name string, _ store.Credential) {
				for range limits.PerPair {
					if err := st.AuthFailed(ctx, name, address, limits); err != nil {
						t.Fatal(err)
					}
				}
			}},
		{name: "roles changed", count: 1, want: store.AuthChanged, thenNC: 1,
			then: func(t *testing.T, _ string, c store.Credential) {
				if _, err := st.AssignAPIKey(ctx, c.APIKey.ID, herald.NewID(time.Now()), []string{herald.GroupOwner}, herald.Event{ID: herald.NewID(time.Now())}, func(herald.APIKey) error { return nil }); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "key deleted", count: 1, want: store.AuthChanged,
			then: func(t *testing.T, _ string, c store.Credential) { deleteDoc(t, c.APIKey.ID) }},
		{name: "user deleted", user: true, count: 1, want: store.AuthChanged,
			then: func(t *testing.T, _ string, c store.Credential) { deleteDoc(t, c.User.ID) }},
		// A key is no longer created under a user's name, but one made before that rule, or
		// racing the user's creation, still shadows the user: its reference is written as
		// such a key's was.
		{name: "user shadowed by a key of that name", user: true, count: 1, want: store.AuthChanged,
			then: func(t *testing.T, name string, _ store.Credential) {
				k := newKey(t, name+"-k")
				if err := rdb.Rename(ctx, "herald:{keys}:pub:"+k.PublicKey, "herald:{keys}:pub:"+name).Err(); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "scripts flushed", count: 1, want: store.AuthOK, thenNC: 1,
			then: func(t *testing.T, _ string, _ store.Credential) { rdb.ScriptFlush(ctx) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "n-" + c.name
			if c.user {
				newUser(t, name)
			} else {
				newKey(t, name)
			}
			kept, err := st.Credential(ctx, name)
			if err != nil || kept.Version == "" {
				t.Fatalf("Credential: %+v %v", kept, err)
			}
			if c.then != nil {
				c.then(t, name, kept)
			}
			attempt := store.AuthAttempt{Name: name, Address: address, Limits: limits, Kept: kept, Nonce: name, Count: c.count, CountTTL: time.Minute}
			before := mgets.n.Load()
			check, err := st.CheckAuth(ctx, attempt)
			if err != nil {
				t.Fatal(err)
			}
			if n := mgets.n.Load() - before; n != wantMGETs {
				t.Errorf("the check ran %d MGETs, want %d", n, wantMGETs)
			}
			if got := check.Outcome(); got != c.want {
				t.Errorf("%+v: outcome %v, want %v", check, got, c.want)
			}
			if c.thenNC != 0 {
				if ok, err := st.NonceCounter().Advance(ctx, name, c.thenNC, time.Minute); err != nil || ok {
					t.Errorf("count %d advanced again (%v, %v): the check did not record it", c.thenNC, ok, err)
				}
			}
		})
	}
}

func advance(t *testing.T, st *store.Store, nonce string, nc uint64) {
	t.Helper()
	if ok, err := st.NonceCounter().Advance(context.Background(), nonce, nc, time.Minute); err != nil || !ok {
		t.Fatalf("advance %s to %d: %v %v", nonce, nc, ok, err)
	}
}

// mgetCounter counts the MGETs a client sends, alone or in pipelines (rdb.AddHook(mgets.hook())).
type mgetCounter struct{ n atomic.Int64 }

func (c *mgetCounter) hook() eachCommand {
	return func(cmd redis.Cmder) {
		if cmd.Name() == "mget" {
			c.n.Add(1)
		}
	}
}

// eachCommand is a hook that is called with each command a client sends, alone or in pipelines.
type eachCommand func(cmd redis.Cmder)

func (f eachCommand) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f eachCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { f(cmd); return next(ctx, cmd) }
}
func (f eachCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			f(cmd)
		}
		return next(ctx, cmds)
	}
}

// BenchmarkCheckAuth is a kept key's check (a request of bench's scenario 7 without its read),
// 64 callers at once as the API's requests are, on one server and as on a cluster: the time,
// this process's CPU and redis-server's (INFO cpu: parsing and answering included) per check.
//
//	go test ./store/ -run '^$' -bench CheckAuth -count 5
func BenchmarkCheckAuth(b *testing.B) {
	benchForms(b, func(b *testing.B, rdb *redis.Client, st *store.Store) {
		ctx := context.Background()
		k, kept := keptKey(b, st, "bench")
		limits := store.AuthLimits{Window: time.Minute, PerPair: 100, PerAddress: 100, PerName: 100}
		var nonces atomic.Int64
		var failed atomic.Int64
		report := cpuPerOp(b, rdb)
		b.SetParallelism(64 / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			a := store.AuthAttempt{Name: k.PublicKey, Address: "127.0.0.1", Limits: limits, Kept: kept,
				Nonce: fmt.Sprintf("n%d", nonces.Add(1)), CountTTL: time.Minute}
			for pb.Next() {
				a.Count++
				check, err := st.CheckAuth(ctx, a)
				if err != nil || check.Outcome() != store.AuthOK {
					failed.Add(1)
				}
			}
		})
		b.StopTimer()
		report()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of %d checks failed", n, b.N)
		}
	})
}

// benchForms runs bench on one server and as on a cluster (AsCluster), each on a Redis of
// its own.
func benchForms(b *testing.B, bench func(b *testing.B, rdb *redis.Client, st *store.Store)) {
	for _, cluster := range []bool{false, true} {
		b.Run(map[bool]string{false: "one-server", true: "as-on-a-cluster"}[cluster], func(b *testing.B) {
			rdb, st := storeForm(b, cluster)
			bench(b, rdb, st)
		})
	}
}

// cpuPerOp starts measuring a benchmark's CPU: the returned func, called once the timer is
// stopped, reports this process's and redis-server's (INFO cpu: parsing and answering
// included) per operation since.
func cpuPerOp(b *testing.B, rdb *redis.Client) (report func()) {
	cpu0, redis0 := processCPU(b), storetest.RedisCPU(b, rdb)
	return func() {
		cpu, redis := processCPU(b)-cpu0, storetest.RedisCPU(b, rdb)-redis0
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(redis.Nanoseconds())/1e3/float64(b.N), "redis-µs/op")
	}
}

// processCPU is this process's CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A read given to CheckAuth reads what Fetch reads, on one server and as on a cluster (where
// the check's own reads are two MGETs): the project and its alert, an alert or a project
// missing, ids that are not ids.
func TestCheckAuthRead(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	mgets := &mgetCounter{}
	rdb.AddHook(mgets.hook())
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	proj, _ := herald.NewProject("prod", org.ID, nil, now)
	a := herald.Alert{ID: herald.NewID(now), GroupID: proj.ID, AlertConfigID: herald.NewID(now), EventTypeName: "HOST_DOWN",
		Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now), HostID: "h1", HostnameAndPort: "db1:27017"}
	k := herald.APIKey{ID: herald.NewID(now), PublicKey: "reader", OrgID: org.ID, HA1: "ha1",
		Roles: []herald.Role{{GroupID: proj.ID, RoleName: herald.GroupReadOnly}}}
	for _, err := range []error{st.CreateOrg(ctx, org, herald.Event{}), st.CreateProject(ctx, proj, nil, herald.Event{}),
		st.SaveAlert(ctx, a, false, ""), st.CreateAPIKey(ctx, k, nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	kept, err := st.Credential(ctx, k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	limits := store.AuthLimits{Window: time.Minute, PerPair: 10, PerAddress: 10, PerName: 10}
	nc := uint64(0)
	for _, c := range []struct{ name, groupID, alertID string }{
		{"both", proj.ID, a.ID},
		{"no such alert", proj.ID, herald.NewID(now)},
		{"alert id not an id", proj.ID, "x"},
		{"no such project", herald.NewID(now), a.ID},
		{"project id not an id", "x", a.ID},
	} {
		want := store.ReadProjectAlert(c.groupID, c.alertID)
		if err := st.Fetch(ctx, want); err != nil {
			t.Fatal(err)
		}
		wp, wfound, wa, werr := decoded(want)
		for _, cluster := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cluster=%v", c.name, cluster), func(t *testing.T) {
				s := store.New(rdb)
				wantMGETs := int64(2) // the check's, the read's
				if cluster {
					s.AsCluster()
					wantMGETs++
				}
				if !herald.ValidID(c.groupID) {
					wantMGETs-- // the read reads nothing
				}
				nc++
				r := store.ReadProjectAlert(c.groupID, c.alertID)
				before := mgets.n.Load()
				check, err := s.CheckAuth(ctx, store.AuthAttempt{Name: k.PublicKey, Address: "192.0.2.1", Limits: limits, Kept: kept,
					Nonce: "read-nonce", Count: nc, CountTTL: time.Minute}, r)
				if err != nil || check.Outcome() != store.AuthOK {
					t.Fatalf("CheckAuth: %+v %v", check, err)
				}
				if n := mgets.n.Load() - before; n != wantMGETs {
					t.Errorf("%d MGETs, want %d", n, wantMGETs)
				}
				p, found, got, err := decoded(r)
				if fmt.Sprint(p, found, got, err) != fmt.Sprint(wp, wfound, wa, werr) {
					t.Errorf("read with the check: %v %v %+v %v\nread alone: %v %v %+v %v", p, found, got, err, wp, wfound, wa, werr)
				}
				if c.name == "both" && (got.ID != a.ID || p.ID != proj.ID) {
					t.Errorf("read %s/%s, want %s/%s", p.ID, got.ID, proj.ID, a.ID)
				}
			})
		}
	}
}

// Checks whose callers leave mid-way (their ctx cancelled at once) beside checks that wait:
// every check that waited comes to what its count says (a new count OK, the same again
// replayed), though the commands of finished checks are used again by the next (and those of
// checks left mid-way must not be, their round trip writing into them still).
func TestCheckAuthBesideCallersThatLeave(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	k, kept := keptKey(t, st, "leaving")
	limits := store.AuthLimits{Window: time.Minute, PerPair: 100, PerAddress: 100, PerName: 100}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := store.AuthAttempt{Name: k.PublicKey, Address: "127.0.0.1", Limits: limits, Kept: kept,
				Nonce: fmt.Sprint("leaving-", g), CountTTL: time.Minute}
			for a.Count = 1; a.Count <= 150; a.Count++ {
				if a.Count%3 == 0 { // a caller that leaves: its count may or may not be recorded
					cctx, cancel := context.WithCancel(ctx)
					go cancel()
					_, _ = st.CheckAuth(cctx, a)
					continue
				}
				for _, want := range []store.AuthOutcome{store.AuthOK, store.AuthReplayed} {
					if check, err := st.CheckAuth(ctx, a); err != nil || check.Outcome() != want {
						t.Errorf("%s, count %d: %+v (%v), %v; want %v", a.Nonce, a.Count, check, check.Outcome(), err, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// keptKey is a new API key named name, and its credential as an API process keeps it.
func keptKey(tb testing.TB, st *store.Store, name string) (herald.APIKey, store.Credential) {
	tb.Helper()
	ctx := context.Background()
	k := herald.APIKey{ID: herald.NewID(time.Now()), PublicKey: name, OrgID: herald.NewID(time.Now()), HA1: "ha1",
		Roles: []herald.Role{{OrgID: "o", RoleName: herald.OrgReadOnly}}}
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		tb.Fatal(err)
	}
	kept, err := st.Credential(ctx, k.PublicKey)
	if err != nil {
		tb.Fatal(err)
	}
	return k, kept
}

// decoded is what r read, decoded.
func decoded(r *store.ProjectAlertRead) (herald.Project, bool, herald.Alert, error) {
	found, err := r.Decode()
	return *r.Project(), found, *r.Alert(), err
}
