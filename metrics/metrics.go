package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/memo"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
)

// Metrics are one process's instruments, on a registry of Herald's own with the Go runtime's
// and the process's collectors. Safe for concurrent use.
type Metrics struct {
	registry         *prometheus.Registry
	requests         *prometheus.CounterVec
	requestDuration  *prometheus.HistogramVec
	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	lateness         *prometheus.HistogramVec
	reclaimed        *prometheus.CounterVec
	reclaimErrors    prometheus.Counter
	schedulerRuns    *prometheus.CounterVec
	engineErrors     *prometheus.CounterVec
	paced            *prometheus.CounterVec
	digested         *prometheus.CounterVec

	// series are the requests' series by route, method and status, and deliveryKinds the
	// deliveries' by kind and outcome, each found once: finding a series by its label values
	// hashes and looks them up, on every request and every delivery. Their keys are bounded
	// label sets, so the maps need no bound.
	series        memo.Map[requestSeriesKey, requestSeries]
	deliveryKinds memo.Map[deliverySeriesKey, deliverySeries]
}

// deliverySeriesKey is a delivery attempt's labels as Delivery is given them.
type deliverySeriesKey struct{ kind, outcome string }

// deliverySeries are a delivery attempt's series: its count and its duration.
type deliverySeries struct {
	deliveries prometheus.Counter
	duration   prometheus.Observer
}

// requestSeriesKey is a request's labels as ObserveRequest is given them (the route a mux
// pattern, a fixed path or a path: bounded by routeLabel before a key is kept).
type requestSeriesKey struct {
	route, method string
	status        int
}

// requestSeries are a request's series: its count and its duration.
type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// The task label of herald_schedule_lateness_seconds for the engine's due alerts; the
// scheduler's jobs use their names (reconcile, retention).
const TaskAlert = "alert"

// counterVec is a counter of name, explained by help, with a series per value of labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// histogramVec is a histogram of name, explained by help, in buckets, with a series per value
// of labels.
func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// New makes a process's instruments.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: counterVec("herald_api_requests_total",
			"API requests answered, by route pattern, method and status code.",
			"route", "method", "code"),
		requestDuration: histogramVec("herald_api_request_duration_seconds",
			"Time to answer an API request, by route pattern and method.",
			prometheus.DefBuckets,
			"route", "method"),
		deliveries: counterVec("herald_deliveries_total",
			"Delivery attempts, by notification kind and outcome (delivered, retrying, rejected, failed).",
			"kind", "outcome"),
		deliveryDuration: histogramVec("herald_delivery_duration_seconds",
			"Time one delivery attempt took, by notification kind.",
			// Services answer in tens of milliseconds; a sender gives up after 10 s.
			[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
			"kind"),
		lateness: histogramVec("herald_schedule_lateness_seconds",
			"How long after its due time scheduled work started: an alert's step (task=\"alert\") or a scheduler job.",
			// Due steps start within a second when workers keep up; a backlog shows as seconds
			// to minutes.
			[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
			"task"),
		reclaimed: counterVec("herald_tasks_reclaimed_total",
			"Tasks of dead workers whose lease ran out, handed back to their queue (requeued) or, reclaimed too often, left to asynq's recoverer (left).",
			"outcome"),
		reclaimErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_task_reclaim_errors_total",
			Help: "Runs of the worker's reclaimer of dead workers' tasks that failed (tried again a few seconds later).",
		}),
		schedulerRuns: counterVec("herald_scheduler_runs_total",
			"Runs of the leading scheduler's jobs (reconcile, retention), by how they ended: ok, failed (the run, or a part of its work; its log line says what; the next run tries again), interrupted (shutdown).",
			"job", "outcome"),
		engineErrors: counterVec("herald_engine_errors_total",
			"What the alert engine could not do and no caller hears of, by what: a project lease not given back (lease_release), outbox entries that could not be read and were set aside (outbox_set_aside), batches of observations that could not be read and were set aside (observations_set_aside), how a try of a notice went left unrecorded (notice_end).",
			"what"),
		paced: counterVec("herald_paced_total",
			"Notices that waited for their target's next slot (HERALD_PACE_<KIND>), by kind: a notification typeName, or EMAIL or SMS for a person.",
			"kind"),
		digested: counterVec("herald_digested_total",
			"Notices told in a digest with others rather than alone (HERALD_DIGEST_AFTER), by kind: EMAIL, SMS, CHAT_A, CHAT_B or CHAT_C.",
			"kind"),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.requestDuration, m.deliveries, m.deliveryDuration, m.lateness,
		m.reclaimed, m.reclaimErrors, m.schedulerRuns, m.engineErrors, m.paced, m.digested,
	)
	// Every kind's series exist from the start, at zero, so that rate() and alerts on absence
	// work before the first delivery: the kinds are the registry's senders (people are
	// reached through EMAIL and SMS), the outcomes those an attempt is made with.
	for _, kind := range herald.Senders() {
		for _, outcome := range store.AttemptOutcomes() {
			m.deliveries.WithLabelValues(kind, strings.ToLower(outcome))
		}
		m.deliveryDuration.WithLabelValues(kind)
		m.paced.WithLabelValues(kind)
		m.digested.WithLabelValues(kind)
	}
	for _, outcome := range reclaimOutcomes {
		m.reclaimed.WithLabelValues(outcome)
	}
	for _, what := range dispatch.EngineErrors {
		m.engineErrors.WithLabelValues(what)
	}
	for _, job := range scheduler.Jobs {
		for _, outcome := range scheduler.RunOutcomes {
			m.schedulerRuns.WithLabelValues(job, outcome)
		}
	}
	return m
}

// Handler serves the process's metrics in the Prometheus exposition formats, with cluster
// (the store's and the queues' gauges, read at each scrape) when given. A collector that fails
// leaves its metrics out of the scrape rather than failing it.
func (m *Metrics) Handler(cluster ...prometheus.Collector) http.Handler {
	gatherers := prometheus.Gatherers{m.registry}
	if len(cluster) > 0 {
		r := prometheus.NewRegistry()
		r.MustRegister(cluster...)
		gatherers = append(gatherers, r)
	}
	return promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveRequest counts an API request (api.Config.Observe). method is the request's; route
// is the mux pattern the request matched, "METHOD /path/{param}", or one of the fixed paths;
// anything else (a path no route matched, or a request refused before routing) counts as
// "unmatched", so that ids and typos in paths never become label values.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if status == 0 { // nothing written: net/http answered 200
		status = http.StatusOK
	}
	s := m.series.Get(requestSeriesKey{routeLabel(route), methodLabel(method), status}, 0, m.requestSeries)
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// requestSeries finds the series of a request's labels (k's route and method as labelled).
func (m *Metrics) requestSeries(k requestSeriesKey) requestSeries {
	return requestSeries{m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		m.requestDuration.WithLabelValues(k.route, k.method)}
}

// fixedPaths are the paths the API serves outside its mux, reported as they are.
var fixedPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/monitoring/": true}

// routeLabel is the route label of a route: the path of a mux pattern, a fixed path, or
// "unmatched".
func routeLabel(route string) string {
	if _, path, ok := strings.Cut(route, " "); ok {
		return path
	}
	if fixedPaths[route] {
		return route
	}
	return "unmatched"
}

// methodLabel is the method label of a request method: HTTP's own methods by name, any other
// as "other" (a client may send any token as its method; it must not become a label value).
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// Delivery counts one delivery attempt of kind (a notification typeName) and its duration;
// outcome is a store.Attempt outcome (DELIVERED, ...), reported in lower case.
func (m *Metrics) Delivery(kind, outcome string, d time.Duration) {
	s := m.deliveryKinds.Get(deliverySeriesKey{kind, outcome}, 0, m.deliverySeries)
	s.deliveries.Inc()
	s.duration.Observe(d.Seconds())
}

// deliverySeries finds the series of a delivery attempt's labels.
func (m *Metrics) deliverySeries(k deliverySeriesKey) deliverySeries {
	return deliverySeries{m.deliveries.WithLabelValues(k.kind, strings.ToLower(k.outcome)), m.deliveryDuration.WithLabelValues(k.kind)}
}

// Paced records a notice of kind that waits for its target's next slot.
func (m *Metrics) Paced(kind string) { m.paced.WithLabelValues(kind).Inc() }

// Digested records a notice of kind told in a digest with others.
func (m *Metrics) Digested(kind string) { m.digested.WithLabelValues(kind).Inc() }

// Lateness records how long after its due time an alert's step started.
func (m *Metrics) Lateness(d time.Duration) { m.observeLateness(TaskAlert, d) }

// SchedulerRun records a run of a scheduler job: how late it started, and how it ended.
func (m *Metrics) SchedulerRun(r scheduler.Run) {
	m.observeLateness(r.Job, r.Lateness)
	m.schedulerRuns.WithLabelValues(r.Job, r.Outcome).Inc()
}

// observeLateness records how long after its due time a run of scheduled work started.
func (m *Metrics) observeLateness(task string, d time.Duration) {
	m.lateness.WithLabelValues(task).Observe(max(d, 0).Seconds())
}

// EngineError counts what the engine could not do and no caller hears of.
func (m *Metrics) EngineError(what string, n int) {
	m.engineErrors.WithLabelValues(what).Add(float64(n))
}

// The outcomes of herald_tasks_reclaimed_total.
var reclaimOutcomes = []string{"requeued", "left"}

// Reclaimed counts one run of a worker's reclaimer: the tasks it handed back to their queue,
// those it left to asynq's recoverer, or its failure.
func (m *Metrics) Reclaimed(requeued, left int, err error) {
	m.reclaimed.WithLabelValues(reclaimOutcomes[0]).Add(float64(requeued))
	m.reclaimed.WithLabelValues(reclaimOutcomes[1]).Add(float64(left))
	if err != nil {
		m.reclaimErrors.Inc()
	}
}
