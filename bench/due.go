package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/store"
)

// Scenario 2's timing: a minute of a second, and a first notice 5 of them after detection.
// The interval is long enough that no repeat comes during the scenario.
const (
	dueMinute     = time.Second
	dueDelayMin   = 5
	dueDelay      = dueDelayMin * dueMinute
	latenessLimit = 100 * time.Millisecond // p99 target
)

// due is scenario 2: first notices falling due over a window. Observations arrive in requests
// spread evenly over the window, each alert's first notice falls due dueDelay after it was
// detected, so the engine takes new observations and sends due notices at the same time. A
// notice's lateness is its arrival at the receiver minus its due time, detected + dueDelay,
// where detected is the alert's Schedule.Detected.
func (b *bench) due(ctx context.Context) ([]figure, error) {
	r, err := b.startRig(ctx, dueMinute, webhookNotification{DelayMin: dueDelayMin, IntervalMin: 100_000})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	n, window := b.sizes.Due, b.sizes.DueWindow
	log.Printf("due: %d first notices, %s after detection, observed over %s", n, dueDelay, window)
	if err := r.observeHosts(ctx, "due", n, b.sizes.Batch, true, window); err != nil {
		return nil, err
	}
	if err := r.recv.waitFor(ctx, n, dueDelay+patience(n)); err != nil {
		return nil, err
	}
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	arrivals, _ := r.recv.results()
	lateness, err := r.lateness(ctx, arrivals)
	if err != nil {
		return nil, err
	}
	slices.Sort(lateness)
	early := 0
	for _, l := range lateness {
		if l < 0 {
			early++
		}
	}
	p99 := quantile(lateness, 0.99)
	return []figure{
		{Name: "2. notices before their due time", Value: fmt.Sprintf("%d of %d", early, len(lateness)), Target: "0", Result: judge(early == 0)},
		{Name: "2. lateness p50", Value: ms(quantile(lateness, 0.50))},
		{Name: "2. lateness p99", Value: ms(p99), Target: "≤ " + ms(latenessLimit), Result: judge(p99 <= latenessLimit)},
		{Name: "2. lateness max", Value: ms(lateness[len(lateness)-1])},
	}, nil
}

// lateness is how late each first notice arrived after its due time (negative: early).
func (r *rig) lateness(ctx context.Context, arrivals []arrival) ([]time.Duration, error) {
	out := make([]time.Duration, len(arrivals))
	for i, a := range arrivals {
		id, ok := alertOf(a.Key)
		if !ok {
			return nil, fmt.Errorf("a delivery with Idempotency-Key %q", a.Key)
		}
		sched, err := r.store.Schedule(ctx, store.Scope{GroupID: r.project}, id)
		if err != nil {
			return nil, fmt.Errorf("schedule of alert %s: %w", id, err)
		}
		out[i] = a.At.Sub(sched.Detected.Add(dueDelay))
	}
	return out, nil
}

// alertOf is the alert a delivery is about: its Idempotency-Key is
// <alertId>-<notification>-<seq>.
func alertOf(key string) (string, bool) {
	rest, _, ok := cutLast(key, "-")
	if !ok {
		return "", false
	}
	id, _, ok := cutLast(rest, "-")
	return id, ok
}

// cutLast is s before and after its last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// quantile is the q quantile (nearest rank) of sorted, which must not be empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}
