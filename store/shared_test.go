package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// roundTrips records the pipelines a client sends (their sizes); with hold, the first PING
// (holdRoundTrips') waits at the door until released, so that the callers that come meanwhile
// are sent together in the next one. A new connection's handshake is a pipeline too (HELLO),
// which must never be the one held: the command it opens the connection for would wait for a
// release that comes after it.
type roundTrips struct {
	hold     bool
	holding  bool          // the PING is held, or was
	held     chan struct{} // closed once the PING waits at the door
	released chan struct{}

	mu    sync.Mutex
	sizes []int
}

func watchRoundTrips(rdb redis.UniversalClient, hold bool) *roundTrips {
	r := &roundTrips{hold: hold, held: make(chan struct{}), released: make(chan struct{})}
	rdb.AddHook(r)
	return r
}

func (r *roundTrips) release() { close(r.released) }

// sent is the number of commands of each round trip so far: a pipeline's, or 1 for a command
// sent alone.
func (r *roundTrips) sent() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.sizes...)
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		r.sizes = append(r.sizes, 1)
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.mu.Lock()
		r.sizes = append(r.sizes, len(cmds))
		first := r.hold && !r.holding && len(cmds) == 1 && cmds[0].Name() == "ping"
		r.holding = r.holding || first
		r.mu.Unlock()
		if first {
			close(r.held)
			<-r.released
		}
		return next(ctx, cmds)
	}
}

// holdRoundTrips starts a round trip that waits at the door until r is released, and returns
// once it does: whoever calls meanwhile waits for the next one.
func holdRoundTrips(t *testing.T, st *store.Store, r *roundTrips) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- st.RunShared(context.Background(), redis.NewStatusCmd(context.Background(), "ping")) }()
	select {
	case <-r.held:
	case <-time.After(5 * time.Second):
		t.Fatal("the first round trip never reached Redis")
	}
	return done
}

// waitWaiting waits (bounded) until n callers wait for the next round trip.
func waitWaiting(t *testing.T, st *store.Store, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for st.SharedWaiting() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for the next round trip, want %d", st.SharedWaiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A caller is a goroutine running its own pipeline through the shared round trips.
type caller struct {
	cmds []redis.Cmder
	done chan error
}

func call(ctx context.Context, st *store.Store, cmds ...redis.Cmder) *caller {
	c := &caller{cmds: cmds, done: make(chan error, 1)}
	go func() { c.done <- st.RunShared(ctx, cmds...) }()
	return c
}

// result waits (bounded) for c's answer.
func (c *caller) result(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(within):
		t.Fatalf("a caller still waits after %s", within)
		return nil
	}
}

// Callers sent in one round trip each get their own commands' answers: one's WRONGTYPE and
// another's NOSCRIPT fail only them, and the others' commands ran and answered.
func TestSharedRoundTripFailsOnlyTheFailingCaller(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	trips := watchRoundTrips(rdb, true)
	st := store.New(rdb)
	rdb.HSet(ctx, "a-hash", "f", "v")
	rdb.Set(ctx, "a-string", "answer", 0)

	held := holdRoundTrips(t, st, trips)
	wrongType := call(ctx, st, redis.NewStringCmd(ctx, "get", "a-hash"), redis.NewIntCmd(ctx, "incr", "after-wrongtype"))
	noScript := call(ctx, st, redis.NewCmd(ctx, "evalsha", strings.Repeat("0", 40), 0))
	fine := call(ctx, st, redis.NewStringCmd(ctx, "get", "a-string"), redis.NewIntCmd(ctx, "incr", "fine"))
	waitWaiting(t, st, 3)
	trips.release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}

	if err := wrongType.result(t, 5*time.Second); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("the WRONGTYPE caller got %v", err)
	}
	if n, err := wrongType.cmds[1].(*redis.IntCmd).Result(); n != 1 || err != nil {
		t.Errorf("the WRONGTYPE caller's next command: %d, %v; want it run (1)", n, err)
	}
	if err := noScript.result(t, 5*time.Second); !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Errorf("the NOSCRIPT caller got %v", err)
	}
	if err := fine.result(t, 5*time.Second); err != nil {
		t.Errorf("a caller beside failing ones failed: %v", err)
	}
	if v := fine.cmds[0].(*redis.StringCmd).Val(); v != "answer" {
		t.Errorf("a caller beside failing ones read %q", v)
	}
	if n := fine.cmds[1].(*redis.IntCmd).Val(); n != 1 {
		t.Errorf("a caller beside failing ones counted %d", n)
	}
	// (A new connection's HELLO may go between: the held round trip keeps the first busy.)
	if got := trips.sent(); got[len(got)-1] != 5 {
		t.Errorf("pipelines sent (commands each): %v, want the last of 5: the three callers in one round trip", got)
	}
}

// A caller whose ctx ends while it waits returns at once; nothing of it is sent, and the
// callers beside it and after it still get their answers.
func TestSharedRoundTripCancelledCaller(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	trips := watchRoundTrips(rdb, true)
	st := store.New(rdb)

	held := holdRoundTrips(t, st, trips)
	cctx, cancel := context.WithCancel(ctx)
	gone := call(cctx, st, redis.NewIntCmd(ctx, "incr", "gone"))
	stays := call(ctx, st, redis.NewIntCmd(ctx, "incr", "stays"))
	waitWaiting(t, st, 2)
	cancel()
	if err := gone.result(t, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v", err)
	}
	select {
	case err := <-stays.done:
		t.Fatalf("a caller returned (%v) before its round trip was sent", err)
	default:
	}
	trips.release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := stays.result(t, 5*time.Second); err != nil || stays.cmds[0].(*redis.IntCmd).Val() != 1 {
		t.Errorf("the caller beside a cancelled one: %v, %d", err, stays.cmds[0].(*redis.IntCmd).Val())
	}
	if n, err := rdb.Exists(ctx, "gone").Result(); n != 0 || err != nil {
		t.Errorf("the cancelled caller's command ran (%d, %v)", n, err)
	}
	// The caller that left is told its round trip is over without the sender waiting for it
	// to listen: the callers after get their answers, again and again (the trips of callers
	// that listened being used again).
	for i := range 5 {
		after := call(ctx, st, redis.NewIntCmd(ctx, "incr", "after"))
		if err := after.result(t, 5*time.Second); err != nil || after.cmds[0].(*redis.IntCmd).Val() != int64(i+1) {
			t.Fatalf("caller %d after the one that left: %v, %d", i, err, after.cmds[0].(*redis.IntCmd).Val())
		}
	}
}

// Redis killed while a round trip is in flight: every caller in it gets an error within a
// bound (the client's retries), none hangs, and later callers get one at once.
func TestSharedRoundTripRedisKilled(t *testing.T) {
	if os.Getenv("HERALD_TEST_REDIS_URL") != "" {
		t.Skip("kills its redis-server: not one other tests share (HERALD_TEST_REDIS_URL)")
	}
	if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("CI") == "" {
		t.Skip("kills a redis-server process, and the embedded store is none (CI runs this with redis-server)")
	}
	ctx := context.Background()
	rdb := storetest.Redis(t)
	trips := watchRoundTrips(rdb, true)
	st := store.New(rdb)
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	pid := infoInt(t, info, "process_id")

	held := holdRoundTrips(t, st, trips)
	// The blocked BLPOP keeps the round trip in flight (its later replies unread) until the
	// server dies.
	before := call(ctx, st, redis.NewIntCmd(ctx, "incr", "before"))
	blocked := call(ctx, st, redis.NewStringSliceCmd(ctx, "blpop", "nothing", 2))
	after := make([]*caller, 20)
	for i := range after {
		after[i] = call(ctx, st, redis.NewIntCmd(ctx, "incr", fmt.Sprint("after", i)))
	}
	waitWaiting(t, st, 2+len(after))
	trips.release()
	<-held
	waitBlocked(t, rdb.Options())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = before.result(t, 10*time.Second) // it ran before Redis died: an answer or an error
	if err := blocked.result(t, 10*time.Second); err == nil {
		t.Error("the blocked caller got no error from a dead Redis")
	}
	for i, c := range after {
		if err := c.result(t, 10*time.Second); err == nil {
			t.Errorf("caller %d got no error from a dead Redis", i)
		}
	}
	t.Logf("every caller answered %s after the kill", time.Since(start).Round(time.Millisecond))
	late := call(ctx, st, redis.NewStatusCmd(ctx, "ping"))
	if err := late.result(t, 10*time.Second); err == nil {
		t.Error("a caller after the kill got no error")
	}
}

// waitBlocked waits (bounded) until the Redis at o has a client blocked (the BLPOP).
func waitBlocked(t *testing.T, o *redis.Options) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// A connection of its own: the store's client is busy with the round trip.
		c := redis.NewClient(&redis.Options{Network: o.Network, Addr: o.Addr})
		info, err := c.Info(context.Background(), "clients").Result()
		_ = c.Close()
		if err == nil && infoInt(t, info, "blocked_clients") > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the round trip's BLPOP never blocked")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func infoInt(t *testing.T, info, field string) int {
	t.Helper()
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// Many concurrent callers each get exactly their own values, in fewer round trips than
// callers.
func TestSharedRoundTripsManyCallers(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	trips := watchRoundTrips(rdb, false)
	st := store.New(rdb)
	const n = 500
	pairs := make([]any, 0, 2*n)
	for i := range n {
		pairs = append(pairs, fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	if err := rdb.MSet(ctx, pairs...).Err(); err != nil {
		t.Fatal(err)
	}
	before := len(trips.sent())
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			get, incr := redis.NewStringCmd(ctx, "get", fmt.Sprint("k", i)), redis.NewIntCmd(ctx, "incrby", fmt.Sprint("c", i), i)
			<-start
			if err := st.RunShared(ctx, get, incr); err != nil {
				errs <- err
				return
			}
			if get.Val() != fmt.Sprint("v", i) || incr.Val() != int64(i) {
				errs <- fmt.Errorf("caller %d read %q and counted %d", i, get.Val(), incr.Val())
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sent := len(trips.sent()) - before
	t.Logf("%d callers in %d round trips", n, sent)
	if sent >= n {
		t.Errorf("%d callers took %d round trips: none was shared", n, sent)
	}
}

// CheckAuth after Redis lost its scripts, by many callers at once (their round trips shared):
// each caller's count is recorded by its own fallback, once.
func TestCheckAuthSharedAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	k := herald.APIKey{ID: herald.NewID(time.Now()), PublicKey: "shared", OrgID: herald.NewID(time.Now()), HA1: "ha1",
		Roles: []herald.Role{{OrgID: "o", RoleName: herald.OrgReadOnly}}}
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	kept, err := st.Credential(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	limits := store.AuthLimits{Window: time.Minute, PerPair: 2, PerAddress: 10, PerName: 10}
	attempt := func(i int) store.AuthAttempt {
		return store.AuthAttempt{Name: "shared", Address: "192.0.2.1", Limits: limits, Kept: kept,
			Nonce: fmt.Sprint("nonce", i), Count: 1, CountTTL: time.Minute}
	}
	rdb.ScriptFlush(ctx)
	const n = 64
	outcomes := make([]store.AuthOutcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var check store.AuthCheck
			check, errs[i] = st.CheckAuth(ctx, attempt(i))
			outcomes[i] = check.Outcome()
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || outcomes[i] != store.AuthOK {
			t.Errorf("caller %d: %v, %v; want AuthOK", i, outcomes[i], errs[i])
		}
		if check, err := st.CheckAuth(ctx, attempt(i)); err != nil || check.Outcome() != store.AuthReplayed {
			t.Errorf("caller %d's count again: %v, %v; want AuthReplayed", i, check.Outcome(), err)
		}
	}
}

// failingTrips fails every pipeline as a whole with err, answering none of its commands (as
// a hook, or a connection lost before any reply, does).
type failingTrips struct{ err error }

func (f failingTrips) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f failingTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f failingTrips) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(context.Context, []redis.Cmder) error { return f.err }
}

// A round trip that fails as a whole fails every caller in it with its error, not with empty
// answers.
func TestSharedRoundTripFailedAsAWhole(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	lost := errors.New("connection lost")
	rdb.AddHook(failingTrips{lost})
	st := store.New(rdb)
	callers := make([]*caller, 10)
	for i := range callers {
		callers[i] = call(ctx, st, redis.NewIntCmd(ctx, "incr", fmt.Sprint("c", i)), redis.NewStringCmd(ctx, "get", "x"))
	}
	for i, c := range callers {
		if err := c.result(t, 5*time.Second); !errors.Is(err, lost) {
			t.Errorf("caller %d got %v, want the round trip's error", i, err)
		}
	}
}
