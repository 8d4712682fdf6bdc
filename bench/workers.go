package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// The workers scenario (go run ./bench -workers): deliveries per second with two workers
// against one, in the same run on the same Redis. Each worker is a dispatch.Worker with an
// engine of its own, as a `herald worker` process has. The alerts are spread over more projects
// than one worker runs sessions at once, since one project is one session at a time: workers
// share projects, not alerts.
//
// It is measured twice: with a webhook receiver that answers at once, where the figure is
// bound by this machine's CPU (Redis, the API, the receiver and every worker share it), and
// with one that answers after half a second, as a slow remote service does, where deliveries
// wait on the network and a second worker doubles what can wait at once.
var scaleOnly = flag.Bool("workers", false, "measure only deliveries/s with two workers against one, -opened alerts each time")

const (
	scaleProjects = 32
	scaleRounds   = 2 // each worker count is measured this many times, alternating 1, 2, 1, 2
)

// scaleLatencies are the receiver's answering times the scenario is measured with.
var scaleLatencies = []time.Duration{0, 500 * time.Millisecond}

// scaleRun is one measurement with some number of workers.
type scaleRun struct {
	alerts     int
	rate       float64 // distinct deliveries per second
	took       time.Duration
	sent       []int64 // deliveries each worker made
	duplicates int
}

// workers is the scenario: sz.Opened alerts over scaleProjects projects, their observations
// queued while the engine's queue is paused, then the queue resumed under one worker, or two;
// deliveries per second from the resume to the last distinct delivery.
func (b *bench) workers(ctx context.Context) ([]figure, error) {
	var figs []figure
	duplicates := 0
	for _, latency := range scaleLatencies {
		runs := map[int][]scaleRun{}
		for round := range scaleRounds {
			for _, n := range []int{1, 2} {
				if err := b.redis.flush(ctx); err != nil {
					return nil, err
				}
				log.Printf("workers: receiver latency %s, round %d, %d worker(s), %d alerts over %d projects",
					latency, round+1, n, b.sizes.Opened, scaleProjects)
				r, err := b.scaleRun(ctx, n, latency)
				if err != nil {
					return nil, fmt.Errorf("%d worker(s), receiver latency %s: %w", n, latency, err)
				}
				runs[n] = append(runs[n], r)
				duplicates += r.duplicates
			}
		}
		cond := fmt.Sprintf("receiver answering in %s", latency)
		if latency == 0 {
			cond = "receiver answering at once"
		}
		figs = append(figs,
			figure{Name: "workers, " + cond + ": 1 worker → deliveries/s", Value: describeRuns(runs[1])},
			figure{Name: "workers, " + cond + ": 2 workers → deliveries/s", Value: describeRuns(runs[2])},
			figure{Name: "workers, " + cond + ": 2 workers ÷ 1 worker", Value: fmt.Sprintf("%.2f×", meanRate(runs[2])/meanRate(runs[1]))})
	}
	return append(figs, figure{Name: "workers: duplicate deliveries", Value: fmt.Sprint(duplicates), Target: "0", Result: judge(duplicates == 0)}), nil
}

// scaleRun measures n workers on an empty Redis, delivering to a receiver that answers after
// latency.
func (b *bench) scaleRun(ctx context.Context, n int, latency time.Duration) (scaleRun, error) {
	st := store.New(b.redis.Client)
	r := &rig{store: st, dispatcher: dispatch.NewDispatcher(st, herald.SystemClock{})}
	defer r.stop()
	if err := r.startAPI(ctx); err != nil {
		return scaleRun{}, err
	}
	recv, err := startReceiver(latency)
	if err != nil {
		return scaleRun{}, err
	}
	r.recv = recv
	var org struct{ ID string }
	if err := r.api.call(ctx, "POST", "/orgs", map[string]any{"name": "bench"}, http.StatusCreated, &org); err != nil {
		return scaleRun{}, err
	}
	projects := make([]string, scaleProjects)
	for i := range projects {
		if projects[i], err = r.addProject(ctx, org.ID, fmt.Sprintf("bench-%d", i), webhookNotification{DelayMin: 0, IntervalMin: 60}); err != nil {
			return scaleRun{}, err
		}
	}

	sent := make([]atomic.Int64, n)
	for i := range n {
		engine := dispatch.NewEngine(st, r.dispatcher, dispatch.EngineConfig{Minute: time.Minute, Lease: 30 * time.Second,
			Notifiers: map[string]channels.Notifier{"WEBHOOK": countingNotifier{
				Notifier: webhook.Notifier{Client: channels.NewHTTPClient(true, 10*time.Second)}, sent: &sent[i]}}})
		w := dispatch.NewWorker(engine, dispatch.WorkerConfig{Concurrency: b.sizes.Concurrency})
		if err := w.Start(); err != nil {
			return scaleRun{}, err
		}
		defer w.Shutdown()
	}
	// Disabling the default configurations queued tasks: done before the clock starts.
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return scaleRun{}, err
	}

	// All the work is queued before any of it may start, so that the figure is the workers'
	// rate, not the rate the API takes observations at.
	ins := asynq.NewInspectorFromRedisClient(st.Redis())
	if err := ins.PauseQueue(dispatch.QueueEngine); err != nil {
		return scaleRun{}, err
	}
	perProject := b.sizes.Opened / scaleProjects
	total := perProject * scaleProjects
	for i, p := range projects {
		r.project = p
		if err := r.observeHosts(ctx, fmt.Sprintf("p%d", i), perProject, b.sizes.Batch, true, 0); err != nil {
			return scaleRun{}, err
		}
	}
	start := time.Now()
	if err := ins.UnpauseQueue(dispatch.QueueEngine); err != nil {
		return scaleRun{}, err
	}
	if err := recv.waitFor(ctx, total, patience(total)); err != nil {
		return scaleRun{}, err
	}
	arrivals, _ := recv.results()
	took := arrivals[total-1].At.Sub(start)
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return scaleRun{}, err
	}
	_, duplicates := recv.results()
	out := scaleRun{alerts: total, rate: float64(total) / took.Seconds(), took: took, duplicates: duplicates}
	for i := range sent {
		out.sent = append(out.sent, sent[i].Load())
	}
	return out, nil
}

// countingNotifier counts the deliveries its worker made.
type countingNotifier struct {
	channels.Notifier
	sent *atomic.Int64
}

func (c countingNotifier) Notify(ctx context.Context, d channels.Delivery) error {
	err := c.Notifier.Notify(ctx, d)
	if err == nil {
		c.sent.Add(1)
	}
	return err
}

func meanRate(runs []scaleRun) float64 {
	sum := 0.0
	for _, r := range runs {
		sum += r.rate
	}
	return sum / float64(len(runs))
}

// describeRuns is the mean rate, then each run's rate and how the deliveries fell to workers.
func describeRuns(runs []scaleRun) string {
	var each []string
	for _, r := range runs {
		shares := make([]string, len(r.sent))
		for i, s := range r.sent {
			shares[i] = fmt.Sprint(s)
		}
		each = append(each, fmt.Sprintf("%.0f /s in %s, by worker %s", r.rate, r.took.Round(time.Millisecond), strings.Join(shares, "+")))
	}
	return fmt.Sprintf("%.0f /s (%d alerts; %s)", meanRate(runs), runs[0].alerts, strings.Join(each, "; "))
}
