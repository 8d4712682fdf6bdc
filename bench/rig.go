package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/channels"
	_ "github.com/heraldhq/herald/channels/registry" // the kinds the API and the engine know
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/apiclient"
	"github.com/heraldhq/herald/store"
)

// rig is Herald end to end in this process, wired as dispatch's end-to-end tests wire it: the
// API on 127.0.0.1 over HTTP with digest authentication, a dispatcher, an engine whose WEBHOOK
// sender may reach loopback, a worker, and a webhook receiver. It has one project, whose only
// enabled alert configuration is HOST_DOWN with one WEBHOOK notification to the receiver.
type rig struct {
	store      *store.Store
	dispatcher *dispatch.Dispatcher
	worker     *dispatch.Worker
	stopAPI    func()
	api        apiClient
	basic      string // an Authorization header of Basic credentials, as Prometheus sends them
	recv       *receiver
	org        string // the organization of the rig's projects
	project    string
}

// webhookNotification is the timing of the rig's one notification, in minutes of the rig.
type webhookNotification struct {
	DelayMin, IntervalMin int
}

// startRig starts Herald on rdb with minute as the length of a minute of delayMin and
// intervalMin, and sets up its project with notification n.
func startRig(ctx context.Context, rdb *redis.Client, minute time.Duration, concurrency int, n webhookNotification) (*rig, error) {
	st := store.New(rdb)
	r := &rig{store: st, dispatcher: dispatch.NewDispatcher(st, herald.SystemClock{})}
	ok := false
	defer func() {
		if !ok {
			r.stop()
		}
	}()
	if err := r.startAPI(ctx); err != nil {
		return nil, err
	}
	engine := dispatch.NewEngine(st, r.dispatcher, dispatch.EngineConfig{Minute: minute, Lease: 30 * time.Second,
		Notifiers: map[string]channels.Notifier{"WEBHOOK": webhook.Notifier{Client: channels.NewHTTPClient(true, 10*time.Second)}}})
	r.worker = dispatch.NewWorker(engine, dispatch.WorkerConfig{Concurrency: concurrency})
	if err := r.worker.Start(); err != nil {
		return nil, err
	}
	recv, err := startReceiver(0)
	if err != nil {
		return nil, err
	}
	r.recv = recv
	if err := r.setUpProject(ctx, n); err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

// startAPI serves the API and makes a global owner key for the rig's client.
func (r *rig) startAPI(ctx context.Context) error {
	a, err := api.New(ctx, r.store, r.dispatcher, zap.NewNop(), api.Config{BasicOverHTTP: true})
	if err != nil {
		return err
	}
	base, stop, err := serveLoopback(a)
	if err != nil {
		return err
	}
	r.stopAPI = stop
	key, private := api.NewAPIKey("bench", "", []herald.Role{{RoleName: herald.GlobalOwner}}, time.Now())
	if err := r.store.CreateAPIKey(ctx, key, nil); err != nil {
		return err
	}
	r.basic = "Basic " + base64.StdEncoding.EncodeToString([]byte(key.PublicKey+":"+private))
	r.api = apiClient{base: base + api.BasePath,
		http: &http.Client{Transport: &digest.Transport{Username: key.PublicKey, Password: private}, Timeout: time.Minute}}
	return nil
}

// setUpProject creates the rig's project, disables the default configurations a project
// starts with, and adds the HOST_DOWN configuration with notification n.
func (r *rig) setUpProject(ctx context.Context, n webhookNotification) error {
	return r.setUpProjectWith(ctx, r.webhook(n))
}

// setUpProjectWith is setUpProject with notifications (as the API takes them) in the HOST_DOWN
// configuration.
func (r *rig) setUpProjectWith(ctx context.Context, notifications ...any) error {
	var org struct{ ID string }
	if err := r.api.call(ctx, "POST", "/orgs", map[string]any{"name": "bench"}, http.StatusCreated, &org); err != nil {
		return err
	}
	var err error
	r.org = org.ID
	r.project, err = r.addProjectWith(ctx, org.ID, "bench", notifications...)
	return err
}

// webhook is notification n to the rig's receiver, as the API takes it.
func (r *rig) webhook(n webhookNotification) any {
	return map[string]any{"typeName": "WEBHOOK", "webhookUrl": r.recv.URL, "delayMin": n.DelayMin, "intervalMin": n.IntervalMin}
}

// addProject creates a project of organization orgID whose only enabled configuration is
// HOST_DOWN with notification n, and returns its id.
func (r *rig) addProject(ctx context.Context, orgID, name string, n webhookNotification) (string, error) {
	return r.addProjectWith(ctx, orgID, name, r.webhook(n))
}

// addProjectWith is addProject with notifications (as the API takes them).
func (r *rig) addProjectWith(ctx context.Context, orgID, name string, notifications ...any) (string, error) {
	var project struct{ ID string }
	if err := r.api.call(ctx, "POST", "/groups", map[string]any{"name": name, "orgId": orgID}, http.StatusCreated, &project); err != nil {
		return "", err
	}
	var defaults struct{ Results []struct{ ID string } }
	if err := r.api.call(ctx, "GET", "/groups/"+project.ID+"/alertConfigs?itemsPerPage=500", nil, http.StatusOK, &defaults); err != nil {
		return "", err
	}
	for _, c := range defaults.Results {
		if err := r.api.call(ctx, "PATCH", "/groups/"+project.ID+"/alertConfigs/"+c.ID, map[string]any{"enabled": false}, http.StatusOK, nil); err != nil {
			return "", err
		}
	}
	return project.ID, r.api.call(ctx, "POST", "/groups/"+project.ID+"/alertConfigs", map[string]any{
		"eventTypeName": "HOST_DOWN", "enabled": true, "notifications": notifications,
	}, http.StatusCreated, nil)
}

// stop stops what the rig started; the worker hands back what it has not finished.
func (r *rig) stop() {
	if r.worker != nil {
		r.worker.Shutdown()
	}
	if r.stopAPI != nil {
		r.stopAPI()
	}
	if r.recv != nil {
		r.recv.stop()
	}
	_ = r.dispatcher.Close()
}

// observeHosts reports HOST_DOWN active (or cleared) for hosts <prefix>-0 … <prefix>-(n-1), in
// requests of batch observations spread evenly over spread (0: each as soon as the last one was
// accepted).
func (r *rig) observeHosts(ctx context.Context, prefix string, n, batch int, active bool, spread time.Duration) error {
	requests := (n + batch - 1) / batch
	start := time.Now()
	for i := range requests {
		if err := sleepUntil(ctx, start.Add(spread*time.Duration(i)/time.Duration(requests))); err != nil {
			return err
		}
		obs := hostsDown(prefix, i*batch, min((i+1)*batch, n), active)
		if err := r.api.call(ctx, "POST", "/groups/"+r.project+"/observations", obs, http.StatusAccepted, nil); err != nil {
			return err
		}
	}
	return nil
}

// waitIdle waits until the engine has nothing to do now: no task waiting to run, running, or
// waiting for a retry (a tick scheduled for later is fine).
func (r *rig) waitIdle(ctx context.Context, within time.Duration) error {
	ins := asynq.NewInspectorFromRedisClient(r.store.Redis())
	lists := []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){ins.ListPendingTasks, ins.ListActiveTasks, ins.ListRetryTasks}
	err := poll(ctx, within, func() (bool, error) {
		for q := range dispatch.DefaultQueues() {
			for _, list := range lists {
				tasks, err := list(q, asynq.PageSize(1))
				if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
					return false, err
				}
				if len(tasks) > 0 {
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the engine did not settle: %w", err)
	}
	return nil
}

// apiClient calls the API with digest authentication.
type apiClient struct {
	base string
	http *http.Client
}

// call sends body (JSON, when not nil), checks that the answer has status want, and decodes it
// into out (when not nil).
func (c apiClient) call(ctx context.Context, method, path string, body any, want int, out any) error {
	return (&apiclient.Client{Base: c.base, HTTP: c.http}).Do(ctx, method, path, body, want, out)
}
