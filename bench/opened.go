package main

import (
	"context"
	"fmt"
	"log"
	"time"
)

// throughputTarget: Herald must deliver this many times faster than asynq runs no-op tasks,
// the ceiling of one task per delivery.
const throughputTarget = 1.2

// opened is scenario 1: alerts opened by observations whose first notice is due at once
// (delayMin 0), from the first request to the last distinct delivery.
func (b *bench) opened(ctx context.Context) ([]figure, error) {
	r, err := b.startRig(ctx, time.Minute, webhookNotification{DelayMin: 0, IntervalMin: 60})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	n := b.sizes.Opened
	log.Printf("opened: %d alerts from %d observations a request", n, b.sizes.Batch)
	start := time.Now()
	if err := r.observeHosts(ctx, "opened", n, b.sizes.Batch, true, 0); err != nil {
		return nil, err
	}
	if err := r.recv.waitFor(ctx, n, patience(n)); err != nil {
		return nil, err
	}
	arrivals, _ := r.recv.results()
	took := arrivals[n-1].At.Sub(start)
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return nil, err
	}
	_, duplicates := r.recv.results()

	rate := float64(n) / took.Seconds()
	ratio := rate / b.asynqRate
	return []figure{
		{Name: "1. alerts opened → deliveries/s", Value: fmt.Sprintf("%.0f /s (%d in %s)", rate, n, took.Round(time.Millisecond))},
		{Name: "1. throughput ÷ raw asynq rate", Value: fmt.Sprintf("%.2f×", ratio),
			Target: fmt.Sprintf("≥ %.1f× (%.0f /s)", throughputTarget, throughputTarget*b.asynqRate), Result: judge(ratio >= throughputTarget)},
		{Name: "1. duplicate deliveries", Value: fmt.Sprint(duplicates), Target: "0", Result: judge(duplicates == 0)},
	}, nil
}
