package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"slices"
	"strconv"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/scheduler"
	"github.com/heraldhq/herald/store"
)

// Scenario 4's targets and timing.
const (
	millionMemoryLimit   = 1_500_000_000 // bytes of Redis used_memory with every alert open
	millionLatenessLimit = time.Second   // p99 of the slice's repeats
	millionMinute        = time.Second
	sliceRepeatMin       = 60      // the slice's repeat, in minutes of millionMinute
	heldRepeatMin        = 100_000 // the held alerts' repeat: not within the run
)

// million is scenario 4: a million open alerts (b.sizes.Million) whose repeats are pending,
// then a slice of 10,000 more whose repeats fall due together. The held alerts are opened by
// the engine from observations handed to the dispatcher as the API hands them (the API's
// HTTP, digest and host registration are left out to load them in minutes; the alerts,
// schedules, due entries, events and first notices are the engine's own); their first
// notices are delivered to the receiver. With everything open it measures Redis's
// used_memory, then the CPU of this process (API, engine worker, scheduler with its reconcile
// every 5 s, receiver) and redis-server over a window in which nothing is due, then the
// lateness of the slice's repeats, each against its due time as the engine scheduled it.
func (b *bench) million(ctx context.Context) ([]figure, error) {
	r, err := b.startRig(ctx, millionMinute, webhookNotification{DelayMin: 0, IntervalMin: heldRepeatMin})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	sched := scheduler.New(r.store, r.dispatcher, scheduler.Config{})
	if err := sched.Start(); err != nil {
		return nil, err
	}
	defer sched.Shutdown()
	slice, err := r.addProject(ctx, r.org, "slice", webhookNotification{DelayMin: 0, IntervalMin: sliceRepeatMin})
	if err != nil {
		return nil, err
	}
	n, sliceN := b.sizes.Million, b.sizes.MillionSlice
	before, err := b.redis.usedMemory(ctx)
	if err != nil {
		return nil, err
	}
	log.Printf("million: opening %d alerts through the dispatcher", n)
	start := time.Now()
	if err := r.observeDirect(ctx, r.project, "held", n, b.sizes.Batch); err != nil {
		return nil, err
	}
	if err := r.recv.waitFor(ctx, n, patience(n)); err != nil {
		return nil, err
	}
	took := time.Since(start)
	log.Printf("million: %d alerts open and notified in %s; opening the slice of %d", n, took.Round(time.Second), sliceN)
	if err := r.observeDirect(ctx, slice, "slice", sliceN, b.sizes.Batch); err != nil {
		return nil, err
	}
	if err := r.recv.waitFor(ctx, n+sliceN, patience(sliceN)); err != nil {
		return nil, err
	}
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	used, err := b.redis.usedMemory(ctx)
	if err != nil {
		return nil, err
	}
	due, err := sliceDue(ctx, r.store, slice, r.recv, n)
	if err != nil {
		return nil, err
	}
	first, last := due.spread()
	// Redis's housekeeping is waited for only while the slice leaves room for the window after.
	if waited := b.redis.settle(ctx, min(settleTime, time.Until(first)-b.sizes.IdleWindow-2*time.Second)); waited != "" {
		log.Printf("million: waited for redis-server's housekeeping before the idle window: %s", waited)
	}
	if wait := time.Until(first); wait < b.sizes.IdleWindow+time.Second {
		return nil, fmt.Errorf("the slice falls due in %s, too soon for the %s idle window: loading took too long", wait.Round(time.Second), b.sizes.IdleWindow)
	}
	log.Printf("million: measuring CPU over %s with nothing due", b.sizes.IdleWindow)
	idle, err := b.idle(ctx, r, "million", b.sizes.IdleWindow)
	if err != nil {
		return nil, err
	}
	cpu := idle.self + idle.server
	log.Printf("million: waiting for the slice's repeats, due %s to %s", first.Format(time.TimeOnly), last.Format("15:04:05.000"))
	gc0 := readGoMark()
	if err := r.recv.waitFor(ctx, n+2*sliceN, time.Until(last)+patience(sliceN)); err != nil {
		return nil, err
	}
	// A collection meanwhile marks the whole live heap while the engine sends: with the
	// receiver's million keys as strings, two took 317 ms of CPU during one slice; packed
	// (see receiver), one took 7 ms.
	gc1 := readGoMark()
	log.Printf("million: while the slice was sent, %d collections took %.0f ms of CPU", gc1.cycles-gc0.cycles, 1000*(gc1.gcCPU-gc0.gcCPU))
	lateness, err := due.lateness(r.recv, n+sliceN)
	if err != nil {
		return nil, err
	}
	p99 := quantile(lateness, 0.99)
	total := n + sliceN
	return []figure{
		{Name: "4. alerts opened and first notices delivered (dispatcher, no HTTP)", Value: fmt.Sprintf("%d in %s (%.0f /s)", n, took.Round(time.Second), float64(n)/took.Seconds())},
		{Name: "4. Redis used_memory, every alert open", Value: fmt.Sprintf("%.2f GB for %d alerts (%.0f B each over the empty rig)", float64(used)/1e9, total, float64(used-before)/float64(total)),
			Target: fmt.Sprintf("≤ %.1f GB", float64(millionMemoryLimit)/1e9), Result: judge(used <= millionMemoryLimit)},
		{Name: "4. CPU with nothing due (this process + redis-server)", Value: fmt.Sprintf("%.1f%% of a core (%.1f%% + %.1f%%) over %s; %s", 100*cpu, 100*idle.self, 100*idle.server, idle.window, idle),
			Target: fmt.Sprintf("< %.0f%%", 100*idleCPULimit), Result: judge(cpu < idleCPULimit)},
		{Name: "4. deliveries while nothing due", Value: fmt.Sprint(idle.deliveries), Target: "0", Result: judge(idle.deliveries == 0)},
		{Name: fmt.Sprintf("4. %d repeats falling due within %s: lateness p99", sliceN, last.Sub(first).Round(time.Millisecond)), Value: ms(p99),
			Target: "≤ " + ms(millionLatenessLimit), Result: judge(p99 <= millionLatenessLimit)},
		{Name: "4. … lateness p50 (min)", Value: fmt.Sprintf("%s (%s)", ms(quantile(lateness, 0.5)), ms(lateness[0]))},
		{Name: "4. … lateness max", Value: ms(lateness[len(lateness)-1])},
	}, nil
}

// observeDirect hands HOST_DOWN observations for hosts <prefix>-0 … <prefix>-(n-1) to the
// dispatcher in batches, as the API does once it has validated them, waiting while the
// project's backlog is full.
func (r *rig) observeDirect(ctx context.Context, groupID, prefix string, n, batch int) error {
	active := true
	for from := 0; from < n; from += batch {
		obs := make([]herald.Observation, 0, batch)
		for h := from; h < min(from+batch, n); h++ {
			host := prefix + "-" + strconv.Itoa(h)
			obs = append(obs, herald.Observation{EventTypeName: "HOST_DOWN", Active: &active, HostID: host,
				HostnameAndPort: host + ".example.com:27017"})
		}
		b, err := json.Marshal(obs)
		if err != nil {
			return err
		}
		for {
			err := r.dispatcher.Observe(ctx, groupID, b)
			if e := herald.ErrorOf(err); e != nil && e.Kind == herald.KindUnavailable {
				if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// dueTimes are the slice's alerts and when their repeat is due, as the engine scheduled it.
type dueTimes map[string]time.Time

// sliceDue reads the due time of the repeat of each alert of project slice whose first notice
// the receiver has, after the held alerts' first (from) ones.
func sliceDue(ctx context.Context, st *store.Store, slice string, recv *receiver, from int) (dueTimes, error) {
	arrivals, _ := recv.resultsFrom(from)
	due := dueTimes{}
	for _, a := range arrivals {
		id, ok := alertOf(a.Key)
		if !ok {
			return nil, fmt.Errorf("a delivery with Idempotency-Key %q", a.Key)
		}
		s, err := st.Schedule(ctx, store.Scope{GroupID: slice}, id)
		if err != nil {
			return nil, err
		}
		if len(s.Next) != 1 || s.Next[0].IsZero() {
			return nil, fmt.Errorf("alert %s has no repeat scheduled: %+v", id, s)
		}
		due[id] = s.Next[0]
	}
	if len(due) == 0 {
		return nil, errors.New("no alert of the slice was notified")
	}
	return due, nil
}

// spread is the earliest and the latest due time.
func (d dueTimes) spread() (first, last time.Time) {
	for _, t := range d {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	return first, last
}

// lateness is how late each repeat of the slice arrived after its due time, sorted: the
// deliveries after the first from.
func (d dueTimes) lateness(recv *receiver, from int) ([]time.Duration, error) {
	arrivals, _ := recv.resultsFrom(from)
	var out []time.Duration
	for _, a := range arrivals {
		id, _ := alertOf(a.Key)
		if at, ok := d[id]; ok {
			out = append(out, a.At.Sub(at))
		}
	}
	if len(out) != len(d) {
		return nil, fmt.Errorf("%d repeats of the slice arrived, want %d", len(out), len(d))
	}
	slices.Sort(out)
	return out, nil
}
