package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/apiclient"
	"github.com/heraldhq/herald/monitoring"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// topologyRig is Herald on one Redis topology, built as the roles build it (openStore,
// the dispatcher, startWorker, serveAPI), in this process: the API on a 127.0.0.1 port, one
// worker, and a webhook receiver.
type topologyRig struct {
	t        *testing.T
	st       *store.Store
	d        *dispatch.Dispatcher
	log      *zap.Logger
	client   *apiclient.Client
	hooks    *alertHooks
	hookURL  string
	slotErrs *storetest.SlotErrors
}

func newTopologyRig(t *testing.T, r redisSettings) *topologyRig { return newTopologyRigWith(t, r, nil) }

// newTopologyRigWith is newTopologyRig with the roles' settings adjusted by adjust.
func newTopologyRigWith(t *testing.T, r redisSettings, adjust func(*common)) *topologyRig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, closeStore, err := openStore(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	slotErrs := storetest.WatchSlotErrors(st.Redis())
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	c := common{Minute: 200 * time.Millisecond, Lease: 2 * time.Second, AllowPrivate: true, Concurrency: 10}
	if adjust != nil {
		adjust(&c)
	}
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	w, err := startWorker(ctx, st, d, c, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serveAPI(ctx, ln, st, d, log, c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serveAPI: %v", err)
		}
		w.Shutdown()
		d.Close()
		closeStore()
	})

	hooks := &alertHooks{byAlert: map[string]map[string]bool{}}
	recv := httptest.NewServer(hooks)
	t.Cleanup(recv.Close)
	k, priv := apitest.OwnerKey(t, st, "topology test")
	return &topologyRig{t: t, st: st, d: d, log: log, client: apiclient.New("http://"+ln.Addr().String()+api.BasePath, k.PublicKey, priv, 10*time.Second),
		hooks: hooks, hookURL: recv.URL + "/hook", slotErrs: slotErrs}
}

// do calls the API, checks the status, and returns the body decoded.
func (r *topologyRig) do(method, path string, body any, want int) map[string]any {
	r.t.Helper()
	return r.client.Must(r.t, method, path, body, want)
}

// results is the results of a list, checking that totalCount says at least n.
func (r *topologyRig) results(path string, n int) []map[string]any {
	r.t.Helper()
	body := r.do("GET", path, nil, 200)
	if total, _ := body["totalCount"].(float64); int(total) < n {
		r.t.Fatalf("GET %s: totalCount %v, want at least %d: %v", path, body["totalCount"], n, body)
	}
	var out []map[string]any
	for _, v := range body["results"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// project creates an organization and a project in it, with only a HOST_DOWN configuration
// enabled, whose WEBHOOK repeats every 5 minutes (1 s here).
func (r *topologyRig) project() (orgID, groupID, configID string) {
	r.t.Helper()
	orgID = r.do("POST", "/orgs", map[string]any{"name": "acme"}, 201)["id"].(string)
	groupID = r.do("POST", "/groups", map[string]any{"name": "prod", "orgId": orgID, "tags": []string{"prod"}}, 201)["id"].(string)
	for _, c := range r.results("/groups/"+groupID+"/alertConfigs", 1) {
		r.do("PATCH", "/groups/"+groupID+"/alertConfigs/"+c["id"].(string), map[string]any{"enabled": false}, 200)
	}
	configID = r.do("POST", "/groups/"+groupID+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": r.hookURL, "delayMin": 0, "intervalMin": 5}}}, 201)["id"].(string)
	return orgID, groupID, configID
}

func hostDownItem(host string, active bool) map[string]any {
	return map[string]any{"eventTypeName": "HOST_DOWN", "active": active, "hostId": host, "hostnameAndPort": host + ":27017",
		"disks": []any{map[string]any{"partitionName": "data"}}}
}

// alertHooks is a webhook receiver remembering the deliveries of each alert, by Idempotency-Key
// (<alert>-<notification>-<notice number, or "close">).
type alertHooks struct {
	mu      sync.Mutex
	byAlert map[string]map[string]bool
}

func (h *alertHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	alert, _, ok := strings.Cut(key, "-")
	if !ok {
		http.Error(w, "no Idempotency-Key", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byAlert[alert] == nil {
		h.byAlert[alert] = map[string]bool{}
	}
	h.byAlert[alert][key] = true
}

// notices is how many different notices each alert got.
func (h *alertHooks) notices() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for a, keys := range h.byAlert {
		out[a] = len(keys)
	}
	return out
}

// closed reports whether the alert's resolution notice came.
func (h *alertHooks) closed(alertID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key := range h.byAlert[alertID] {
		if strings.HasSuffix(key, "-close") {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds, failing the test after within.
func (r *topologyRig) waitFor(what string, within time.Duration, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("waited %s for %s; notices by alert: %v", within, what, r.hooks.notices())
		}
	}
}

// checkMonitoring has asynqmon, on the store's client as the API serves it, list Herald's
// queues and describe the Redis it runs on.
func (r *topologyRig) checkMonitoring() {
	r.t.Helper()
	mon := monitoring.New(r.st.Redis(), true)
	get := func(path string) []byte {
		rec := httptest.NewRecorder()
		mon.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			r.t.Fatalf("asynqmon GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	var queues struct {
		Queues []struct {
			Queue string `json:"queue"`
		} `json:"queues"`
	}
	if err := json.Unmarshal(get("/monitoring/api/queues"), &queues); err != nil {
		r.t.Fatal(err)
	}
	var names []string
	for _, q := range queues.Queues {
		names = append(names, q.Queue)
	}
	if !slices.Contains(names, dispatch.QueueEngine) {
		r.t.Errorf("asynqmon lists queues %v, without %q", names, dispatch.QueueEngine)
	}
	get("/monitoring/api/redis_info")
}

// createOrgWithAdmin runs herald admin create-org on the Redis the environment names, as an
// operator would, and returns the organization's id.
func createOrgWithAdmin(t *testing.T, env map[string]string) string {
	t.Helper()
	for _, name := range []string{"HERALD_REDIS_URL", "HERALD_REDIS_SENTINELS", "HERALD_REDIS_MASTER", "HERALD_REDIS_CLUSTER"} {
		t.Setenv(name, env[name])
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"admin", "create-org", "--name", "made by herald admin"}, &out, &errOut); err != nil {
		t.Fatalf("herald admin create-org: %v\n%s", err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// On a master watched by three sentinels, Herald opens an alert from an observation and
// delivers its webhook; after a failover, the repeats of that alert go on and a new
// observation gets its alert and webhook, with the same clients.
func TestRedisSentinelTopology(t *testing.T) {
	started := time.Now()
	s := storetest.StartSentinel(t)
	t.Logf("master, replica and sentinels ready in %s", time.Since(started).Round(time.Millisecond))
	r := newTopologyRig(t, redisSettings{RedisSentinels: strings.Join(s.Addrs, ","), RedisMaster: s.MasterName})
	_, groupID, _ := r.project()
	r.do("GET", "/orgs/"+createOrgWithAdmin(t, map[string]string{"HERALD_REDIS_SENTINELS": strings.Join(s.Addrs, ","),
		"HERALD_REDIS_MASTER": s.MasterName}), nil, 200)

	r.do("POST", "/groups/"+groupID+"/observations", []any{hostDownItem("h1", true)}, 202)
	var first string
	r.waitFor("an alert's first two notices", 15*time.Second, func() bool {
		for a, n := range r.hooks.notices() {
			first = a
			return n >= 2
		}
		return false
	})
	r.checkMonitoring()

	before, failing := s.Master(), time.Now()
	after := s.Failover()
	t.Logf("failover: master %s -> %s in %s", before, after, time.Since(failing).Round(time.Millisecond))
	heard := r.hooks.notices()[first]
	r.do("POST", "/groups/"+groupID+"/observations", []any{hostDownItem("h2", true)}, 202)
	r.waitFor("a second alert's notice and two more of the first", 30*time.Second, func() bool {
		n := r.hooks.notices()
		return len(n) == 2 && n[first] >= heard+2
	})
	t.Logf("delivering again %s after the failover began", time.Since(failing).Round(time.Millisecond))
	r.checkMonitoring()
}

// On a Redis Cluster of three masters, every part of Herald works: the API's store paths
// (organizations, projects, configurations project and global, integrations, maintenance
// windows, users, keys, events, hosts), the engine (observations, alerts project and global,
// acknowledgement, deliveries, closing), the scheduler's reconcile and retention, and
// asynqmon; and no command crosses hash slots.
func TestRedisClusterTopology(t *testing.T) {
	cl := storetest.StartCluster(t, 3)
	r := newTopologyRig(t, redisSettings{RedisCluster: strings.Join(cl.Addrs, ",")})
	orgID, groupID, configID := r.project()
	g := "/groups/" + groupID

	// The API's store paths.
	r.do("GET", "/orgs/"+orgID, nil, 200)
	r.do("GET", "/orgs/"+createOrgWithAdmin(t, map[string]string{"HERALD_REDIS_CLUSTER": strings.Join(cl.Addrs, ",")}), nil, 200)
	r.do("GET", g, nil, 200)
	if got := r.do("GET", g+"/alertConfigs?itemsPerPage=2&pageNum=2", nil, 200)["results"].([]any); len(got) != 2 {
		t.Errorf("second page of configurations: %d, want 2", len(got))
	}
	r.do("GET", g+"/alertConfigs/"+configID, nil, 200)
	r.do("PUT", g+"/integrations/WEBHOOK", map[string]any{"type": "WEBHOOK", "url": r.hookURL, "secret": "s3cret"}, 200)
	r.results(g+"/integrations", 1)
	global := r.do("POST", "/globalAlertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true, "forAllGroups": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": r.hookURL, "delayMin": 0, "intervalMin": 60}}}, 201)["id"].(string)
	r.results("/globalAlertConfigs", 1)
	mw := r.do("POST", g+"/maintenanceWindows", map[string]any{"alertTypeNames": []string{"REPLICA_SET"},
		"startDate": "2030-01-01T00:00:00Z", "endDate": "2030-01-01T02:00:00Z"}, 200)["id"].(string)
	r.do("PATCH", g+"/maintenanceWindows/"+mw, map[string]any{"description": "upgrade"}, 201)
	r.results(g+"/maintenanceWindows", 1)
	user := r.do("POST", "/users", map[string]any{"username": "jane", "password": "correct horse battery", "emailAddress": "jane@example.com",
		"firstName": "Jane", "lastName": "Doe", "roles": []any{map[string]any{"roleName": "GROUP_OWNER", "groupId": groupID}}}, 201)["id"].(string)
	r.do("GET", "/users/"+user, nil, 200)
	r.do("POST", "/orgs/"+orgID+"/apiKeys", map[string]any{"desc": "ci", "roles": []string{"ORG_MEMBER"}}, 201)
	r.results("/admin/apiKeys", 1)
	ev := r.results(g+"/events?eventType=ALERT_CONFIG_ADDED_AUDIT", 1)[0]["id"].(string)
	r.do("GET", g+"/events/"+ev, nil, 200)
	r.results("/globalEvents", 1)

	// The engine: an observation opens a project and a global alert, each delivered.
	r.do("POST", g+"/observations", []any{hostDownItem("h1", true)}, 202)
	r.waitFor("a project and a global alert's notices", 15*time.Second, func() bool { return len(r.hooks.notices()) == 2 })
	r.do("GET", g+"/hosts/h1/disks/data", nil, 200)
	alert := r.results(g+"/alerts?status=OPEN", 1)[0]["id"].(string)
	r.results(g+"/alertConfigs/"+configID+"/alerts", 1)
	r.results("/globalAlerts?status=OPEN", 1)
	r.results("/globalAlertConfigs/"+global+"/alerts", 1)
	r.do("PATCH", g+"/alerts/"+alert, map[string]any{"acknowledgedUntil": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"acknowledgementComment": "on it"}, 200)
	r.results(g+"/alerts/"+alert+"/deliveries", 1)
	r.results(g+"/deliveries", 2)
	r.do("POST", g+"/observations", []any{hostDownItem("h1", false)}, 202)
	r.waitFor("the cleared condition to close the alert with a resolution notice", 15*time.Second, func() bool {
		return r.do("GET", g+"/alerts/"+alert, nil, 200)["status"] == "CLOSED" && r.hooks.closed(alert)
	})
	r.do("DELETE", "/globalAlertConfigs/"+global, nil, 204)
	r.do("DELETE", g+"/integrations/WEBHOOK", nil, 204)
	r.do("DELETE", g+"/maintenanceWindows/"+mw, nil, 204)

	// The scheduler, with a retention short enough that the closed alert and every event go.
	time.Sleep(2 * time.Second) // times are kept to the second
	sch, err := startScheduler(r.st, r.d, periodic{ReconcileInterval: 200 * time.Millisecond, Retention: time.Second}, r.log)
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Shutdown()
	var runs map[string]scheduler.Run
	r.waitFor("the scheduler's first reconcile and retention runs", 15*time.Second, func() bool {
		runs = sch.LastRuns()
		return len(runs) == 2
	})
	for name, run := range runs {
		if run.Err != nil || run.Counts["failed"] != 0 {
			t.Errorf("%s: %v, counts %v", name, run.Err, run.Counts)
		}
	}
	if c := runs[scheduler.JobRetention].Counts; c["alerts"] < 1 || c["events"] < 1 {
		t.Errorf("retention deleted %v, want the closed alert and the events", c)
	}
	if c := runs[scheduler.JobReconcile].Counts; c["projects"] != 1 {
		t.Errorf("reconcile looked at %v, want 1 project", c)
	}

	r.checkMonitoring()
	if errs := r.slotErrs.Errors(); len(errs) > 0 {
		t.Errorf("%d commands crossed hash slots, e.g. %s", len(errs), errs[0])
	}
}

// The settings name exactly one Redis, completely.
func TestRedisTopologySettings(t *testing.T) {
	for _, c := range []struct {
		r    redisSettings
		want string // the start of the error; "" for none
		kind string // the client newClient makes
	}{
		{redisSettings{RedisURL: "redis://127.0.0.1:6379/2"}, "", "*redis.Client"},
		{redisSettings{RedisURL: "unix:///run/redis.sock"}, "", "*redis.Client"},
		{redisSettings{RedisURL: "redis://127.0.0.1:6379/2?protocol=3"}, "", "*redis.Client"}, // the store's protocol all the same
		{redisSettings{RedisSentinels: "10.0.0.1:26379, 10.0.0.2:26379", RedisMaster: "herald"}, "", "*redis.Client"},
		{redisSettings{RedisCluster: "10.0.0.1:6379,10.0.0.2:6379"}, "", "*redis.ClusterClient"},
		{redisSettings{RedisCluster: "10.0.0.1:6379"}, "", "*redis.ClusterClient"},
		{redisSettings{}, "no Redis named", ""},
		{redisSettings{RedisURL: "redis://a:1", RedisCluster: "b:2"}, "name one Redis", ""},
		{redisSettings{RedisURL: "redis://a:1", RedisMaster: "m"}, "name one Redis", ""},
		{redisSettings{RedisSentinels: "a:1"}, "a Redis Sentinel setup needs both", ""},
		{redisSettings{RedisMaster: "m"}, "a Redis Sentinel setup needs both", ""},
		{redisSettings{RedisSentinels: "a:1,b", RedisMaster: "m"}, `HERALD_REDIS_SENTINELS: "b" is not host:port`, ""},
		{redisSettings{RedisCluster: "a:1,,b:2"}, `HERALD_REDIS_CLUSTER: "" is not host:port`, ""},
		{redisSettings{RedisURL: "http://a:1"}, "HERALD_REDIS_URL:", ""},
		{redisSettings{RedisURL: "redis://a:1", redisPassword: "p"}, "HERALD_REDIS_PASSWORD is for Sentinel and Cluster", ""},
	} {
		conn, err := c.r.connector()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.r, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want %q", c.r, err, c.want)
		case err == nil:
			rdb := conn.newClient()
			if got := fmt.Sprintf("%T", rdb); got != c.kind {
				t.Errorf("%+v: %s, want %s", c.r, got, c.kind)
			}
			protocol := -1
			switch rdb := rdb.(type) {
			case *redis.Client:
				protocol = rdb.Options().Protocol
			case *redis.ClusterClient:
				protocol = rdb.Options().Protocol
			}
			if protocol != store.Protocol {
				t.Errorf("%+v: the client speaks RESP%d, want the store's RESP%d", c.r, protocol, store.Protocol)
			}
			_ = rdb.Close()
		}
	}
}
