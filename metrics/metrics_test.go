package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/apitest"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/metrics"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

const (
	alertsRoute = "/api/public/v1.0/groups/{groupId}/alerts"
	groupID     = "5f0000000000000000000abc"
)

// scrape serves h and scrapes it.
func scrape(t *testing.T, h http.Handler) exposition {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	return scrapeURL(t, srv.URL)
}

// scrapeURL reads the exposition at url over HTTP, as Prometheus does (no credentials), and
// checks it against the naming conventions (promlint).
func scrapeURL(t *testing.T, url string) exposition {
	t.Helper()
	resp, body := testkit.Get(t, url)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d\n%s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q", ct)
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "herald_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse the exposition: %v\n%s", err, body)
	}
	return exposition{fams, body}
}

type exposition struct {
	families map[string]*dto.MetricFamily
	text     string
}

// sample is the value of the series of name with exactly labels (an absent label is ""): a
// counter's or gauge's value, a histogram's count and sum. found is false without the series.
func (e exposition) sample(name string, labels map[string]string) (value, sum float64, found bool) {
	f := e.families[name]
	if f == nil {
		return 0, 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if !sameLabels(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), 0, true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), 0, true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum(), true
		}
	}
	return 0, 0, false
}

func sameLabels(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if want[k] != v {
			return false
		}
	}
	return true
}

// want fails t unless the series has value (and, for a histogram, sum).
func (e exposition) want(t *testing.T, name string, labels map[string]string, value float64, sum ...float64) {
	t.Helper()
	got, gotSum, ok := e.sample(name, labels)
	switch {
	case !ok:
		t.Errorf("no series %s %v in\n%s", name, labels, e.grep(name))
	case got != value:
		t.Errorf("%s %v = %v, want %v", name, labels, got, value)
	case len(sum) > 0 && (gotSum < sum[0]-1e-9 || gotSum > sum[0]+1e-9):
		t.Errorf("%s %v sum = %v, want %v", name, labels, gotSum, sum[0])
	}
}

func (e exposition) grep(name string) string {
	var out []string
	for l := range strings.Lines(e.text) {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// The process's instruments are exposed under Herald's names and labels, with the values
// observed: route patterns (never paths), lower-case outcomes, lateness by task.
func TestProcessMetrics(t *testing.T) {
	m := metrics.New()
	m.ObserveRequest("GET", "GET "+alertsRoute, 200, 40*time.Millisecond)
	m.ObserveRequest("GET", "GET "+alertsRoute, 200, 60*time.Millisecond)
	m.ObserveRequest("POST", "POST /api/public/v1.0/groups/{groupId}/observations", 202, 10*time.Millisecond)
	m.ObserveRequest("GET", "/api/public/v1.0/groups/"+groupID+"/alerts", 401, time.Millisecond) // refused before routing
	m.ObserveRequest("BREW", "/no/such/"+groupID, 404, time.Millisecond)                         // a method of the client's own
	m.ObserveRequest("GET", "/healthz", 0, time.Millisecond)                                     // nothing written: 200
	m.Delivery("WEBHOOK", store.OutcomeDelivered, 30*time.Millisecond)
	m.Delivery("WEBHOOK", store.OutcomeDelivered, 30*time.Millisecond) // its series found before
	m.Delivery("WEBHOOK", store.OutcomeRetrying, 20*time.Millisecond)
	m.Delivery("PAGING", store.OutcomeRejected, 10*time.Millisecond)
	m.Lateness(2 * time.Second)
	m.Lateness(500 * time.Millisecond)
	m.SchedulerRun(scheduler.Run{Job: scheduler.JobReconcile, Lateness: -time.Millisecond, Outcome: scheduler.RunOK}) // a clock step: never negative

	e := scrape(t, m.Handler())
	e.want(t, "herald_api_requests_total", map[string]string{"route": alertsRoute, "method": "GET", "code": "200"}, 2)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "/api/public/v1.0/groups/{groupId}/observations", "method": "POST", "code": "202"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "unmatched", "method": "GET", "code": "401"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "unmatched", "method": "other", "code": "404"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "/healthz", "method": "GET", "code": "200"}, 1)
	e.want(t, "herald_api_request_duration_seconds", map[string]string{"route": alertsRoute, "method": "GET"}, 2, 0.1)
	e.want(t, "herald_deliveries_total", map[string]string{"kind": "WEBHOOK", "outcome": "delivered"}, 2)
	e.want(t, "herald_deliveries_total", map[string]string{"kind": "WEBHOOK", "outcome": "retrying"}, 1)
	e.want(t, "herald_deliveries_total", map[string]string{"kind": "PAGING", "outcome": "rejected"}, 1)
	e.want(t, "herald_delivery_duration_seconds", map[string]string{"kind": "WEBHOOK"}, 3, 0.08)
	e.want(t, "herald_schedule_lateness_seconds", map[string]string{"task": "alert"}, 2, 2.5)
	e.want(t, "herald_schedule_lateness_seconds", map[string]string{"task": "reconcile"}, 1, 0)
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if e.families[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
	if strings.Contains(e.text, groupID) {
		t.Errorf("an id from a request path became a label value:\n%s", e.grep("herald_api"))
	}
}

// A worker's reclaimer's runs are counted: the tasks it handed back or left to asynq, and its
// failures; every series exists at zero before the first.
func TestReclaimMetrics(t *testing.T) {
	m := metrics.New()
	e := scrape(t, m.Handler())
	e.want(t, "herald_tasks_reclaimed_total", map[string]string{"outcome": "requeued"}, 0)
	e.want(t, "herald_tasks_reclaimed_total", map[string]string{"outcome": "left"}, 0)
	e.want(t, "herald_task_reclaim_errors_total", nil, 0)
	m.Reclaimed(0, 0, nil)
	m.Reclaimed(3, 1, nil)
	m.Reclaimed(2, 0, errors.New("READONLY")) // what a run did before it failed still counts
	e = scrape(t, m.Handler())
	e.want(t, "herald_tasks_reclaimed_total", map[string]string{"outcome": "requeued"}, 5)
	e.want(t, "herald_tasks_reclaimed_total", map[string]string{"outcome": "left"}, 1)
	e.want(t, "herald_task_reclaim_errors_total", nil, 1)
}

// What the engine could not do and no caller hears of is counted by what, in series that
// exist at zero before the first.
func TestEngineErrorMetrics(t *testing.T) {
	m := metrics.New()
	e := scrape(t, m.Handler())
	for _, what := range dispatch.EngineErrors {
		e.want(t, "herald_engine_errors_total", map[string]string{"what": what}, 0)
	}
	m.EngineError(dispatch.ErrOutboxSetAside, 3)
	m.EngineError(dispatch.ErrLeaseRelease, 1)
	m.EngineError(dispatch.ErrLeaseRelease, 1)
	e = scrape(t, m.Handler())
	e.want(t, "herald_engine_errors_total", map[string]string{"what": dispatch.ErrOutboxSetAside}, 3)
	e.want(t, "herald_engine_errors_total", map[string]string{"what": dispatch.ErrLeaseRelease}, 2)
}

// Notices that waited for their target's slot, and notices told in a digest, are counted by
// kind, in series that exist at zero for every sender before the first.
func TestPacedMetrics(t *testing.T) {
	m := metrics.New()
	for name, count := range map[string]func(string){"herald_paced_total": m.Paced, "herald_digested_total": m.Digested} {
		e := scrape(t, m.Handler())
		for _, kind := range herald.Senders() {
			e.want(t, name, map[string]string{"kind": kind}, 0)
		}
		count("SMS")
		count("SMS")
		count("EMAIL")
		e = scrape(t, m.Handler())
		e.want(t, name, map[string]string{"kind": "SMS"}, 2)
		e.want(t, name, map[string]string{"kind": "EMAIL"}, 1)
		e.want(t, name, map[string]string{"kind": "WEBHOOK"}, 0)
	}
}

// Every scheduler job's runs are counted by how they ended, in series that exist at zero
// before the first: a retention that fails every hour shows without reading the log.
func TestSchedulerRunMetrics(t *testing.T) {
	m := metrics.New()
	e := scrape(t, m.Handler())
	for _, job := range scheduler.Jobs {
		for _, outcome := range scheduler.RunOutcomes {
			e.want(t, "herald_scheduler_runs_total", map[string]string{"job": job, "outcome": outcome}, 0)
		}
	}
	m.SchedulerRun(scheduler.Run{Job: scheduler.JobRetention, Lateness: time.Second, Outcome: scheduler.RunFailed})
	m.SchedulerRun(scheduler.Run{Job: scheduler.JobRetention, Outcome: scheduler.RunFailed})
	m.SchedulerRun(scheduler.Run{Job: scheduler.JobReconcile, Outcome: scheduler.RunOK})
	e = scrape(t, m.Handler())
	e.want(t, "herald_scheduler_runs_total", map[string]string{"job": scheduler.JobRetention, "outcome": scheduler.RunFailed}, 2)
	e.want(t, "herald_scheduler_runs_total", map[string]string{"job": scheduler.JobReconcile, "outcome": scheduler.RunOK}, 1)
	e.want(t, "herald_scheduler_runs_total", map[string]string{"job": scheduler.JobReconcile, "outcome": scheduler.RunFailed}, 0)
	e.want(t, "herald_schedule_lateness_seconds", map[string]string{"task": scheduler.JobRetention}, 2, 1)
}

// Deliveries counted at once from many goroutines (a sender's) are each counted, in their
// series, however often a series is found.
func TestDeliveriesCountedConcurrently(t *testing.T) {
	m := metrics.New()
	const senders, each = 8, 200
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for range each {
				m.Delivery([]string{"WEBHOOK", "EMAIL"}[i%2], store.OutcomeDelivered, time.Millisecond)
			}
		})
	}
	wg.Wait()
	e := scrape(t, m.Handler())
	for _, kind := range []string{"WEBHOOK", "EMAIL"} {
		e.want(t, "herald_deliveries_total", map[string]string{"kind": kind, "outcome": "delivered"}, senders/2*each)
		e.want(t, "herald_delivery_duration_seconds", map[string]string{"kind": kind}, senders/2*each, senders/2*each*0.001)
	}
}

// Every delivery series exists from the start, at zero: each sender of the registry of kinds
// by each outcome an attempt can have, and each sender's duration histogram.
func TestDeliverySeriesStartAtZero(t *testing.T) {
	e := scrape(t, metrics.New().Handler())
	for _, kind := range herald.Senders() {
		for _, outcome := range store.AttemptOutcomes() {
			e.want(t, "herald_deliveries_total", map[string]string{"kind": kind, "outcome": strings.ToLower(outcome)}, 0)
		}
		e.want(t, "herald_delivery_duration_seconds", map[string]string{"kind": kind}, 0, 0)
	}
	if n, want := len(e.families["herald_deliveries_total"].GetMetric()), len(herald.Senders())*len(store.AttemptOutcomes()); n != want {
		t.Errorf("%d delivery series, want %d (senders × outcomes):\n%s", n, want, e.grep("herald_deliveries_total"))
	}
}

// The installation's gauges are read from Redis at each scrape: active alerts by scope and
// status, and every queue's tasks by state, zero for a queue that never had a task.
func TestClusterGauges(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	now := time.Now()
	p, _ := herald.NewProject("prod", "5f0000000000000000000001", nil, now)
	if err := st.CreateProject(ctx, p, nil, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: p.OrgID}, now)); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		status string
		global bool
	}{{herald.StatusOpen, false}, {herald.StatusOpen, false}, {herald.StatusTracking, false}, {herald.StatusClosed, false}, {herald.StatusOpen, true}} {
		alert := herald.Alert{ID: herald.NewID(now), GroupID: p.ID, AlertConfigID: "5f00000000000000000000c0",
			EventTypeName: "HOST_DOWN", Status: a.status, Created: herald.At(now), Updated: herald.At(now)}
		if err := st.SaveAlert(ctx, alert, a.global, ""); err != nil {
			t.Fatal(err)
		}
	}
	engine, webhook, paging := dispatch.QueueEngine, dispatch.DeliveryQueue("WEBHOOK"), dispatch.DeliveryQueue("PAGING")
	client := asynq.NewClientFromRedisClient(st.Redis())
	enqueue := func(queue string, opts ...asynq.Option) {
		t.Helper()
		if _, err := client.Enqueue(asynq.NewTask("test", nil), append(opts, asynq.Queue(queue))...); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(engine)
	enqueue(engine)
	enqueue(webhook, asynq.ProcessIn(time.Hour))
	enqueue(webhook)
	if _, err := asynq.NewInspectorFromRedisClient(st.Redis()).ArchiveAllPendingTasks(webhook); err != nil {
		t.Fatal(err)
	}

	m := metrics.New()
	e := scrape(t, m.Handler(metrics.NewCluster(st, []string{engine, webhook, paging}, zap.NewNop())))
	e.want(t, "herald_open_alerts", map[string]string{"scope": "project", "status": "open"}, 2)
	e.want(t, "herald_open_alerts", map[string]string{"scope": "project", "status": "tracking"}, 1)
	e.want(t, "herald_open_alerts", map[string]string{"scope": "global", "status": "open"}, 1)
	e.want(t, "herald_open_alerts", map[string]string{"scope": "global", "status": "tracking"}, 0)
	for _, q := range []struct {
		queue, state string
		n            float64
	}{
		{engine, "pending", 2}, {engine, "scheduled", 0}, {engine, "archived", 0},
		{webhook, "pending", 0}, {webhook, "scheduled", 1}, {webhook, "archived", 1}, {webhook, "active", 0}, {webhook, "retry", 0},
		{paging, "pending", 0}, {paging, "active", 0}, {paging, "scheduled", 0}, {paging, "retry", 0}, {paging, "archived", 0},
	} {
		e.want(t, "herald_queue_size", map[string]string{"queue": q.queue, "state": q.state}, q.n)
	}

	// The gauges follow Redis: a second scrape sees the next alert.
	alert := herald.Alert{ID: herald.NewID(now), GroupID: p.ID, AlertConfigID: "5f00000000000000000000c0",
		EventTypeName: "HOST_DOWN", Status: herald.StatusOpen, Created: herald.At(now), Updated: herald.At(now)}
	if err := st.SaveAlert(ctx, alert, false, ""); err != nil {
		t.Fatal(err)
	}
	scrape(t, m.Handler(metrics.NewCluster(st, []string{engine}, zap.NewNop()))).
		want(t, "herald_open_alerts", map[string]string{"scope": "project", "status": "open"}, 3)
}

// Without Redis the installation's gauges are left out and the process's metrics still
// served.
func TestClusterGaugesWithoutRedis(t *testing.T) {
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	m := metrics.New()
	m.Delivery("EMAIL", store.OutcomeDelivered, time.Millisecond)
	h := m.Handler(metrics.NewCluster(st, []string{dispatch.QueueEngine}, zap.NewNop()))
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	e := scrape(t, h)
	e.want(t, "herald_deliveries_total", map[string]string{"kind": "EMAIL", "outcome": "delivered"}, 1)
	for _, name := range []string{"herald_open_alerts", "herald_queue_size"} {
		if e.families[name] != nil {
			t.Errorf("%s served without Redis:\n%s", name, e.grep(name))
		}
	}
}

// End to end: requests to the API, through its Observe hook, count under their route
// pattern, and the API serves the exposition at /metrics without authentication.
func TestAPIRequestsCountByRoute(t *testing.T) {
	st := store.New(storetest.Redis(t))
	m := metrics.New()
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	srv := apitest.Serve(t, st, d, nil, api.Config{Ready: st.Ping, Metrics: m.Handler(), Observe: m.ObserveRequest})
	key, private := apitest.OwnerKey(t, st, "metrics test")
	client := &http.Client{Transport: &digest.Transport{Username: key.PublicKey, Password: private}}
	get := func(path string, want int) {
		t.Helper()
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	get(api.BasePath+"/globalAlerts", 200) // the first request is challenged (401), then answered
	get(api.BasePath+"/globalAlerts", 200)
	get(api.BasePath+"/groups/"+groupID+"/alerts", 404) // no such project: still its route
	get("/healthz", 200)
	get("/metrics", 200)
	if resp, err := http.Head(srv.URL + "/readyz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /readyz: %v %v", resp, err)
	}

	e := scrapeURL(t, srv.URL+"/metrics")
	e.want(t, "herald_api_requests_total", map[string]string{"route": api.BasePath + "/globalAlerts", "method": "GET", "code": "200"}, 2)
	e.want(t, "herald_api_requests_total", map[string]string{"route": api.BasePath + "/groups/{groupId}/alerts", "method": "GET", "code": "404"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": api.BasePath + "/globalAlerts", "method": "GET", "code": "401"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "/healthz", "method": "GET", "code": "200"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "/metrics", "method": "GET", "code": "200"}, 1)
	e.want(t, "herald_api_requests_total", map[string]string{"route": "/readyz", "method": "HEAD", "code": "200"}, 1)
	e.want(t, "herald_api_request_duration_seconds", map[string]string{"route": api.BasePath + "/globalAlerts", "method": "GET"}, 3)
	if strings.Contains(e.text, groupID) {
		t.Errorf("an id from a request path became a label value:\n%s", e.grep("herald_api"))
	}
}
