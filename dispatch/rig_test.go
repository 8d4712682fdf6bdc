package dispatch_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/dispatch/dispatchtest"
	"github.com/heraldhq/herald/internal/apiclient"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// rig is Herald end to end for a test: a real redis-server, the API over HTTP with digest
// auth, an engine worker, and a webhook receiver, all on 127.0.0.1.
type rig struct {
	t       *testing.T
	Store   *store.Store
	client  *apiclient.Client
	minute  time.Duration
	recv    *receiver
	project string
	worker  *dispatchtest.Worker
	faults  *faults
}

const webhookSecret = "s3cr3t-for-signing"

func newRig(t *testing.T, minute time.Duration) *rig { return newRigWith(t, minute, nil) }

// newMailRig is a rig with a minute of 200 ms whose EMAIL notices go to a real SMTP server on
// 127.0.0.1, returned with it; adjust (nil: none) adjusts the engine's configuration further.
func newMailRig(t *testing.T, adjust func(*dispatch.EngineConfig)) (*rig, *channelstest.SMTPServer) {
	t.Helper()
	mail := channelstest.NewSMTPServer(t)
	r := newRigWith(t, 200*time.Millisecond, func(c *dispatch.EngineConfig) {
		c.Notifiers["EMAIL"] = email.Notifier{Config: email.Config{Addr: mail.Addr, From: "herald@example.com"}}
		if adjust != nil {
			adjust(c)
		}
	})
	return r, mail
}

// newRigWith is newRig with the engine's configuration adjusted by adjust (after the rig's
// own: a WEBHOOK sender that reaches 127.0.0.1, a 2 s lease).
func newRigWith(t *testing.T, minute time.Duration, adjust func(*dispatch.EngineConfig)) *rig {
	t.Helper()
	log := zap.NewNop()
	if testing.Verbose() {
		log, _ = zap.NewDevelopment()
	}
	return newRigLogged(t, minute, log, adjust)
}

// newRigLogged is newRigWith with the API and the engine logging to log.
func newRigLogged(t *testing.T, minute time.Duration, log *zap.Logger, adjust func(*dispatch.EngineConfig)) *rig {
	t.Helper()
	rdb := storetest.Redis(t)
	fs := &faults{}
	rdb.AddHook(fs)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	t.Cleanup(func() { d.Close() })
	srv := apitest.Serve(t, st, d, log, api.Config{Minute: minute})
	k, priv := apitest.OwnerKey(t, st, "test")
	r := &rig{t: t, Store: st, client: apiclient.New(srv.URL+api.BasePath, k.PublicKey, priv, 10*time.Second),
		minute: minute, recv: newReceiver(t), faults: fs}
	r.worker = dispatchtest.StartWorker(t, st, d, func() dispatch.EngineConfig {
		cfg := dispatchtest.EngineConfig(minute, log)
		if adjust != nil {
			adjust(&cfg)
		}
		return cfg
	})
	org := r.do("POST", "/orgs", map[string]any{"name": "acme"}, 201)
	r.project = r.do("POST", "/groups", map[string]any{"name": "prod", "orgId": org["id"], "tags": []string{"prod"}}, 201)["id"].(string)
	// A new project starts with the default configurations (HOST_DOWN among them); each test
	// sets up its own.
	for _, c := range r.do("GET", "/groups/"+r.project+"/alertConfigs", nil, 200)["results"].([]any) {
		r.do("PATCH", "/groups/"+r.project+"/alertConfigs/"+c.(map[string]any)["id"].(string), map[string]any{"enabled": false}, 200)
	}
	return r
}

// ownStore is a store and a dispatcher on a Redis client of their own to the rig's server,
// with hook installed: for a worker whose commands a test cuts or holds, the rig's not. They
// close when the test ends.
func (r *rig) ownStore(hook redis.Hook) (*store.Store, *dispatch.Dispatcher) {
	opt := *r.Store.Redis().(*redis.Client).Options()
	rdb := redis.NewClient(&opt)
	r.t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(hook)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	r.t.Cleanup(func() { _ = d.Close() })
	return st, d
}

// do calls the API and checks the status; the body is returned decoded.
func (r *rig) do(method, path string, body any, want int) map[string]any {
	r.t.Helper()
	return r.client.Must(r.t, method, path, body, want)
}

// webhook is a WEBHOOK notification to the receiver.
func (r *rig) webhook(delayMin, intervalMin int) map[string]any {
	return map[string]any{"typeName": "WEBHOOK", "webhookUrl": r.recv.url(), "webhookSecret": webhookSecret,
		"delayMin": delayMin, "intervalMin": intervalMin}
}

// config creates an enabled configuration of the project and returns its id.
func (r *rig) config(body map[string]any) string {
	r.t.Helper()
	body["enabled"] = true
	return r.do("POST", "/groups/"+r.project+"/alertConfigs", body, 201)["id"].(string)
}

// observe posts observations to the project.
func (r *rig) observe(items ...map[string]any) {
	r.t.Helper()
	r.do("POST", "/groups/"+r.project+"/observations", items, 202)
}

func hostDown(host string, active bool) map[string]any {
	return map[string]any{"eventTypeName": "HOST_DOWN", "active": active, "hostId": host, "hostnameAndPort": host + ".example.com:27017"}
}

// eventually polls cond until it holds or within passes; it reports whether it held.
var eventually = dispatchtest.Eventually

// alerts lists the project's alerts (newest first).
func (r *rig) alerts(query string) []map[string]any {
	r.t.Helper()
	res := r.do("GET", "/groups/"+r.project+"/alerts"+query, nil, 200)["results"].([]any)
	out := make([]map[string]any, len(res))
	for i, v := range res {
		out[i] = v.(map[string]any)
	}
	return out
}

// onlyAlert waits for the project to have exactly one alert and returns it.
func (r *rig) onlyAlert(status string) map[string]any {
	r.t.Helper()
	var got []map[string]any
	if !eventually(10*time.Second, func() bool {
		got = r.alerts("?status=" + status)
		return len(got) == 1
	}) {
		r.t.Fatalf("no single %s alert: %v\n%s", status, got, r.failedTasks())
	}
	return got[0]
}

// schedule is the engine's schedule of an active project alert.
func (r *rig) schedule(alertID string) herald.Schedule {
	r.t.Helper()
	s, err := r.Store.Schedule(context.Background(), store.Scope{GroupID: r.project}, alertID)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// delivery is one request the receiver got.
type delivery struct {
	At          time.Time
	Event       string
	Idempotency string
	SignatureOK bool
	Alert       map[string]any
}

// receiver is a webhook receiver that checks signatures and remembers what came.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
	// status, when set, answers instead of 200 (for the failure tests).
	status func(n int) int
	// respond, when set, answers the n-th request (status, headers) instead.
	respond func(n int, w http.ResponseWriter)
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mac := hmac.New(sha1.New, []byte(webhookSecret))
		mac.Write(body)
		d := delivery{At: time.Now(), Event: req.Header.Get("X-Vendor-Event"), Idempotency: req.Header.Get("Idempotency-Key"),
			SignatureOK: req.Header.Get("X-Vendor-Signature") == base64.StdEncoding.EncodeToString(mac.Sum(nil))}
		_ = json.Unmarshal(body, &d.Alert)
		rc.mu.Lock()
		rc.got = append(rc.got, d)
		n := len(rc.got)
		status, respond := rc.status, rc.respond
		rc.mu.Unlock()
		if respond != nil {
			respond(n, w)
		} else if status != nil {
			w.WriteHeader(status(n))
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/hook?team=ops" }

// failing makes the receiver answer status until the switch it returns is set, then 200.
func (rc *receiver) failing(status int) *atomic.Bool {
	fixed := new(atomic.Bool)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = func(int) int {
		if fixed.Load() {
			return 200
		}
		return status
	}
	return fixed
}

// waitEngineIdle waits until the engine's queue has no task waiting or running (the tasks of
// the rig's set-up done), so that what a test does next is the only work there is.
func (r *rig) waitEngineIdle(within time.Duration) {
	r.t.Helper()
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	var info *asynq.QueueInfo
	var err error
	if !eventually(within, func() bool {
		info, err = ins.GetQueueInfo(dispatch.QueueEngine)
		return err == nil && info.Pending == 0 && info.Active == 0 && info.Retry == 0
	}) {
		r.t.Fatalf("the engine's queue still busy after %s: %+v %v", within, info, err)
	}
}

// waitDeliveriesDrained waits until no delivery queue holds a task to run (waiting, running,
// scheduled or to retry): every delivery was tried for the last time, and a test may check
// that nothing more came.
func (r *rig) waitDeliveriesDrained(within time.Duration) {
	r.t.Helper()
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	left := ""
	if !eventually(within, func() bool {
		queues, err := ins.Queues() // those that ever held a task
		if err != nil {
			left = err.Error()
			return false
		}
		for _, q := range queues {
			if q == dispatch.QueueEngine {
				continue
			}
			info, err := ins.GetQueueInfo(q)
			if err != nil || info.Pending+info.Active+info.Scheduled+info.Retry > 0 {
				left = fmt.Sprintf("%s: %+v %v", q, info, err)
				return false
			}
		}
		return true
	}) {
		r.t.Fatalf("the delivery queues still hold tasks after %s: %s", within, left)
	}
}

// waitArchived waits for n dead letters (archived tasks) in queue and returns them.
func (r *rig) waitArchived(queue string, n int, within time.Duration) []*asynq.TaskInfo {
	r.t.Helper()
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	var archived []*asynq.TaskInfo
	if !eventually(within, func() bool {
		archived, _ = ins.ListArchivedTasks(queue)
		return len(archived) == n
	}) {
		r.t.Fatalf("%d dead letters in %s, want %d: %s", len(archived), queue, n, r.failedTasks())
	}
	return archived
}

func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// waitCount waits until the receiver got at least n deliveries and returns them.
func (rc *receiver) waitCount(t *testing.T, n int, within time.Duration) []delivery {
	t.Helper()
	var got []delivery
	if !eventually(within, func() bool { got = rc.deliveries(); return len(got) >= n }) {
		t.Fatalf("%d deliveries within %s, want %d: %+v", len(got), within, n, got)
	}
	return got
}

// failedTasks describes the engine's tasks waiting for a retry or archived, for a failure
// message.
func (r *rig) failedTasks() string {
	ins := asynq.NewInspectorFromRedisClient(r.Store.Redis())
	var b strings.Builder
	for q := range dispatch.DefaultQueues() {
		retry, _ := ins.ListRetryTasks(q)
		archived, _ := ins.ListArchivedTasks(q)
		for _, ti := range append(retry, archived...) {
			fmt.Fprintf(&b, "%s %s %s: %s\n", q, ti.Type, ti.State, ti.LastErr)
		}
	}
	return b.String()
}

// faults makes chosen Redis commands fail, as a Redis that times out would: the real server
// stays up, the client's command returns an error. Installed on every rig's client.
type faults struct {
	mu    sync.Mutex
	match func(name string, args []any) bool
	left  int  // failures still to inject
	hits  int  // failures injected
	after bool // a failing command runs first: its reply is lost, as on a timeout after Redis did it

	holdMatch func(name string, args []any) bool // pipelines with a matching command are held
	holdFor   time.Duration
	holdEnds  []time.Time // when each held pipeline was let go
}

// hold makes every pipeline with a command that matches wait d before it is sent, as a Redis
// that is slow to take it would.
func (f *faults) hold(d time.Duration, match func(name string, args []any) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holdMatch, f.holdFor = match, d
}

// released is when each held pipeline was let go, so far.
func (f *faults) released() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.holdEnds...)
}

// held holds cmds if one of them matches, and says when it let them go.
func (f *faults) held(cmds []redis.Cmder) {
	f.mu.Lock()
	match, d := f.holdMatch, f.holdFor
	f.mu.Unlock()
	if match == nil || !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return match(c.Name(), c.Args()) }) {
		return
	}
	time.Sleep(d)
	f.mu.Lock()
	f.holdEnds = append(f.holdEnds, time.Now())
	f.mu.Unlock()
}

var errInjected = errors.New("i/o timeout (injected)")

// fail makes the next n commands that match fail.
func (f *faults) fail(n int, match func(name string, args []any) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.match, f.left, f.after = match, n, false
}

// failAfter makes the next n commands that match run and then fail, as a Redis that did them
// and whose answer timed out would.
func (f *faults) failAfter(n int, match func(name string, args []any) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.match, f.left, f.after = match, n, true
}

// ranFirst says whether failing commands run first (failAfter).
func (f *faults) ranFirst() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.after
}

// injected is how many failures were injected so far.
func (f *faults) injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *faults) hit(cmds ...redis.Cmder) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left <= 0 {
		return false
	}
	for _, c := range cmds {
		if f.match(c.Name(), c.Args()) {
			f.left--
			f.hits++
			return true
		}
	}
	return false
}

func (f *faults) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *faults) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.hit(cmd) {
			if f.ranFirst() {
				_ = next(ctx, cmd)
			}
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}

func (f *faults) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f.held(cmds)
		if f.hit(cmds...) {
			if f.ranFirst() {
				_ = next(ctx, cmds)
			}
			for _, c := range cmds {
				c.SetErr(errInjected)
			}
			return errInjected
		}
		return next(ctx, cmds)
	}
}

// onDoneOutbox matches the removal of entries from an outbox (DoneOutbox): the store's fenced
// script EVALSHA sha 2 <holder> <outbox> <token> <entry>..., whose entries are notices (JSON)
// where a claim of the outbox has numbers.
func onDoneOutbox(name string, args []any) bool {
	k, _ := argAt(args, 4).(string)
	e, _ := argAt(args, 6).(string)
	return name == "evalsha" && strings.HasSuffix(k, ":outbox") && (strings.HasPrefix(e, "{") || strings.HasPrefix(e, "["))
}

// onKey matches commands named name (lower case) whose first key contains part.
func onKey(name, part string) func(string, []any) bool {
	return func(n string, args []any) bool {
		if n != name || len(args) < 2 {
			return false
		}
		k, _ := args[1].(string)
		return strings.Contains(k, part)
	}
}
