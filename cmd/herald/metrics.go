package main

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/metrics"
	"github.com/heraldhq/herald/store"
)

// processMetrics are this process's instruments: one registry whichever roles the process
// runs (herald dev runs them all, and serves them at the API's /metrics).
var processMetrics = sync.OnceValue(metrics.New)

// clusterMetrics are the installation's gauges (active alerts, queue sizes), read from st at
// each scrape.
func clusterMetrics(st *store.Store, log *zap.Logger) *metrics.Cluster {
	return metrics.NewCluster(st, slices.Collect(maps.Keys(dispatch.DefaultQueues())), log.Named("metrics"))
}

// The default addresses of a worker's and a scheduler's /metrics, /healthz and /readyz: apart,
// so that one of each runs on a machine with the defaults (more workers need their own).
const (
	workerMetricsListen    = ":9090"
	schedulerMetricsListen = ":9091"
)

// bindMetricsListen binds the address a role without the API serves /metrics, /healthz and
// /readyz on.
func bindMetricsListen(s settings, p *string, def string) {
	s.string(p, "metrics-listen", "HERALD_METRICS_LISTEN", def, "address /metrics, /healthz and /readyz are served on (empty: not served)")
	s.check(func() error {
		if *p == "" {
			return nil
		}
		return checkListen("HERALD_METRICS_LISTEN", *p)
	})
}

// healthServer serves /metrics, /healthz and /readyz for the roles that have no API: Start,
// then Shutdown.
type healthServer struct {
	addr  string // once started, the address it listens on
	store *store.Store
	log   *zap.Logger
	srv   *http.Server
	done  chan error
}

// healthIdleTimeout is how long the health listener keeps an idle connection (a scraper's
// keep-alive lasts one scrape interval, 15 to 60 s).
const healthIdleTimeout = 90 * time.Second

// newHealthServer serves metrics on addr, ready while st answers; addr "" serves nothing.
func newHealthServer(addr string, st *store.Store, metricsHandler http.Handler, log *zap.Logger) *healthServer {
	h := &healthServer{addr: addr, store: st, log: log}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", h.ready)
	// Every phase is bounded, idle keep-alive connections included: the listener takes no
	// credentials, and a client holding connections open must not exhaust the process.
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: healthIdleTimeout, MaxHeaderBytes: 16 << 10, ErrorLog: zap.NewStdLog(log)}
	return h
}

// Start listens and serves in the background.
func (h *healthServer) Start() error {
	if h.addr == "" {
		return nil
	}
	ln, err := listen("HERALD_METRICS_LISTEN", h.addr)
	if err != nil {
		return err
	}
	h.addr = ln.Addr().String()
	h.log.Info("serving /metrics, /healthz and /readyz", zap.String("address", h.addr))
	h.done = make(chan error, 1)
	go func() { h.done <- h.srv.Serve(ln) }()
	return nil
}

// Shutdown stops serving, letting scrapes under way finish for a few seconds.
func (h *healthServer) Shutdown() {
	if h.done == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		h.log.Warn("metrics server shutdown", zap.Error(err))
	}
	if err := <-h.done; !errors.Is(err, http.ErrServerClosed) {
		h.log.Warn("metrics server", zap.Error(err))
	}
}

// ready answers 200 while Redis answers, 503 when it does not: a worker or a scheduler can do
// nothing without it.
func (h *healthServer) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.Warn("not ready", zap.Error(err))
		writeStatus(w, http.StatusServiceUnavailable, "unavailable")
		return
	}
	writeStatus(w, http.StatusOK, "ready")
}

// writeStatus answers like the API's /healthz and /readyz: {"status": ...}.
func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(`{"status":"` + status + `"}` + "\n"))
}
