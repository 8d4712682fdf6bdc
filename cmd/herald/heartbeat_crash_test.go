package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// missedLog records when each heartbeat's HEARTBEAT_MISSED alert first reached the webhook.
type missedLog struct {
	mu     sync.Mutex
	opened map[string]time.Time
}

func (m *missedLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var alert map[string]any
	raw, _ := io.ReadAll(r.Body)
	if json.Unmarshal(raw, &alert) == nil && r.Header.Get("X-Vendor-Event") == "alert.open" && alert["eventTypeName"] == "HEARTBEAT_MISSED" {
		name, _ := alert["heartbeatName"].(string)
		m.mu.Lock()
		if _, seen := m.opened[name]; !seen {
			m.opened[name] = time.Now()
		}
		m.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

func (m *missedLog) copy() map[string]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]time.Time, len(m.opened))
	for k, v := range m.opened {
		out[k] = v
	}
	return out
}

// A worker killed as its heartbeats fall due: the other worker finds every miss, none early,
// each within the engine's failover time of its deadline.
func TestKilledWorkerStillFindsMissedHeartbeats(t *testing.T) {
	const (
		minute   = 500 * time.Millisecond
		beats    = 20
		failover = 15 * time.Second // a killed worker's projects resume within 10 s (faults/)
	)
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	srv := apitest.Serve(t, st, d, nil, api.Config{Minute: minute})
	missed := &missedLog{opened: map[string]time.Time{}}
	recv := httptest.NewServer(missed)
	defer recv.Close()
	call, p := apiCaller(t, st, srv.URL)
	call("POST", "/groups/"+p+"/alertConfigs", map[string]any{"eventTypeName": "HEARTBEAT_MISSED", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "WEBHOOK", "webhookUrl": recv.URL + "/hook", "delayMin": 0, "intervalMin": 60}}}, 201)

	url := storetest.URL(rdb)
	first := startWorkerProcess(t, url, minute)
	startWorkerProcess(t, url, minute)
	pings := map[string]string{}
	for i := range beats {
		name := fmt.Sprintf("job%02d", i)
		hb := call("POST", "/groups/"+p+"/heartbeats", map[string]any{"name": name, "periodMin": 2, "graceMin": 2}, 201)
		pings[name] = hb["pingUrl"].(string)
	}
	const silence = 4 * minute // periodMin and graceMin
	due := map[string]time.Time{}
	var last time.Time
	for name, u := range pings {
		sent := time.Now()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("ping: %d", resp.StatusCode)
		}
		due[name], last = sent.Add(silence), sent
	}
	deadline := last.Add(silence)
	// Kill the first worker just as the heartbeats fall due, with no chance to hand back.
	time.Sleep(time.Until(deadline.Add(-50 * time.Millisecond)))
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	var got map[string]time.Time
	for end := deadline.Add(failover); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got = missed.copy(); len(got) == beats {
			break
		}
	}
	if len(got) != beats {
		t.Fatalf("%d of %d missed heartbeats were notified within %s of their deadline", len(got), beats, failover)
	}
	var latest time.Duration
	for name, at := range got {
		if at.Before(due[name]) {
			t.Errorf("%s was notified %s before its deadline", name, due[name].Sub(at))
		}
		latest = max(latest, at.Sub(deadline))
	}
	t.Logf("every miss notified; the last %s after the last deadline", latest.Round(time.Millisecond))
}
