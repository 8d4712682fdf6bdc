package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// TestMain lets the test binary play a role in a child process, so that a test can kill a
// real worker process (HERALD_TEST_ROLE=worker runs `herald worker`), or be herald itself,
// main and its exit code included (HERALD_TEST_ARGS="worker --help" runs `herald worker --help`).
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("HERALD_TEST_ARGS"); ok { // herald itself: see runHerald
		os.Args = append([]string{"herald"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	if role := os.Getenv("HERALD_TEST_ROLE"); role != "" {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		if err := run(ctx, []string{role}, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startWorkerProcess starts `herald worker` as a child process on redisURL.
func startWorkerProcess(t *testing.T, redisURL string, minute time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HERALD_TEST_ROLE=worker", "HERALD_REDIS_URL="+redisURL,
		"HERALD_MINUTE="+minute.String(), "HERALD_ENGINE_LEASE=2s", "HERALD_ALLOW_PRIVATE_TARGETS=true",
		"HERALD_LOG_LEVEL=warn", "HERALD_METRICS_LISTEN=")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// noticeLog is a webhook receiver remembering, per alert, which notices came.
type noticeLog struct {
	mu    sync.Mutex
	seqs  map[string]map[int]int // alert -> notice number -> times received
	total int
}

func (n *noticeLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key") // <alert>-<notification>-<seq>
	parts := strings.Split(key, "-")
	seq, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || len(parts) != 3 {
		http.Error(w, "bad key", 400)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seqs[parts[0]] == nil {
		n.seqs[parts[0]] = map[int]int{}
	}
	n.seqs[parts[0]][seq]++
	n.total++
}

// complete reports whether every one of alerts got notices 1..k without a gap, and how many
// notices came twice.
func (n *noticeLog) complete(alerts, k int) (bool, int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	dups := 0
	for _, s := range n.seqs {
		for _, c := range s {
			dups += c - 1
		}
	}
	if len(n.seqs) < alerts {
		return false, dups
	}
	for _, s := range n.seqs {
		for i := 1; i <= k; i++ {
			if s[i] == 0 {
				return false, dups
			}
		}
	}
	return true, dups
}

// gaps describes alerts whose notices have a hole below their highest.
func (n *noticeLog) gaps() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for a, s := range n.seqs {
		top := 0
		for i := range s {
			top = max(top, i)
		}
		for i := 1; i < top; i++ {
			if s[i] == 0 {
				fmt.Fprintf(&b, "%s lacks notice %d of %d; ", a, i, top)
			}
		}
	}
	return b.String()
}

// Killing the worker process mid-run and starting another loses no alert and no due notice:
// every alert, including those observed while no worker ran, gets every notice in order.
// apiCaller calls the API at base as a global owner, failing t on any other status than
// the one wanted, and makes a project to call it about.
func apiCaller(t *testing.T, st *store.Store, base string) (call func(method, path string, body any, want int) map[string]any, project string) {
	k, priv := apitest.OwnerKey(t, st, "t")
	client := &http.Client{Transport: &digest.Transport{Username: k.PublicKey, Password: priv}, Timeout: 10 * time.Second}
	call = func(method, path string, body any, want int) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+api.BasePath+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	org := call("POST", "/orgs", map[string]any{"name": "acme"}, 201)["id"]
	return call, call("POST", "/groups", map[string]any{"name": "prod", "orgId": org}, 201)["id"].(string)
}

func TestKilledWorkerLosesNothing(t *testing.T) {
	const minute = 200 * time.Millisecond // intervalMin 5 = 1 s
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	srv := apitest.Serve(t, st, d, nil, api.Config{})
	log := &noticeLog{seqs: map[string]map[int]int{}}
	recv := httptest.NewServer(log)
	defer recv.Close()
	call, p := apiCaller(t, st, srv.URL)
	for _, c := range call("GET", "/groups/"+p+"/alertConfigs", nil, 200)["results"].([]any) {
		call("PATCH", "/groups/"+p+"/alertConfigs/"+c.(map[string]any)["id"].(string), map[string]any{"enabled": false}, 200)
	}
	call("POST", "/groups/"+p+"/alertConfigs", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": recv.URL + "/hook", "delayMin": 0, "intervalMin": 5}}}, 201)
	observe := func(from, to int) {
		var items []map[string]any
		for i := from; i < to; i++ {
			items = append(items, map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": fmt.Sprintf("h%d", i)})
		}
		call("POST", "/groups/"+p+"/observations", items, 202)
	}

	url := storetest.URL(rdb)
	first := startWorkerProcess(t, url, minute)
	observe(0, 40)
	wait := func(alerts, k int, within time.Duration) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if ok, _ := log.complete(alerts, k); ok {
				return true
			}
		}
		return false
	}
	if !wait(40, 2, 15*time.Second) {
		t.Fatalf("the first worker did not deliver: %d notices; %s", log.total, log.gaps())
	}
	// Kill it in the middle of its work, with no chance to hand anything back.
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	observe(40, 60) // accepted while no worker runs
	startWorkerProcess(t, url, minute)
	if !wait(60, 5, 30*time.Second) {
		t.Fatalf("after the restart, notices are missing: %d notices; %s", log.total, log.gaps())
	}
	if g := log.gaps(); g != "" {
		t.Errorf("gaps: %s", g)
	}
	_, dups := log.complete(60, 1)
	t.Logf("%d notices, %d delivered twice (at-least-once)", log.total, dups)
}
