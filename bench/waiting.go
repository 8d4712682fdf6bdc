package main

import (
	"context"
	"fmt"
	"log"
	"syscall"
	"time"
)

// Scenario 3's targets.
const (
	memoryPerAlertLimit = 1536 // bytes of Redis memory per open alert: 1.5 KB
	idleCPULimit        = 0.05 // of one core: "near idle"
)

// waiting is scenario 3: open alerts, first notices delivered, whose next repeat is an hour
// away. It measures the Redis memory they take, then, with nothing due, the CPU this process
// (API, engine worker, receiver) and redis-server use over a window.
func (b *bench) waiting(ctx context.Context) ([]figure, error) {
	r, err := b.startRig(ctx, time.Minute, webhookNotification{DelayMin: 0, IntervalMin: 60})
	if err != nil {
		return nil, err
	}
	defer r.stop()
	n := b.sizes.Waiting
	grew, took, err := b.openAlerts(ctx, r, n)
	if err != nil {
		return nil, err
	}
	if waited := b.redis.settle(ctx, settleTime); waited != "" {
		log.Printf("waiting: waited for redis-server's housekeeping before the idle window: %s", waited)
	}
	log.Printf("waiting: measuring CPU over %s with nothing due", b.sizes.IdleWindow)
	idle, err := b.idle(ctx, r, "waiting", b.sizes.IdleWindow)
	if err != nil {
		return nil, err
	}
	perAlert := float64(grew) / float64(n)
	return []figure{
		{Name: "3. alerts opened and first notices delivered", Value: fmt.Sprintf("%d in %s (%.0f /s)", n, took.Round(time.Millisecond), float64(n)/took.Seconds())},
		{Name: "3. Redis memory per open alert", Value: fmt.Sprintf("%.0f B (used_memory +%.1f MB)", perAlert, float64(grew)/1e6),
			Target: fmt.Sprintf("≤ %d B", memoryPerAlertLimit), Result: judge(perAlert <= memoryPerAlertLimit)},
		{Name: "3. Herald process CPU, nothing due", Value: fmt.Sprintf("%.1f%% of a core over %s", 100*idle.self, idle.window),
			Target: fmt.Sprintf("≤ %.0f%%", 100*idleCPULimit), Result: judge(idle.self <= idleCPULimit)},
		{Name: "3. redis-server CPU, nothing due", Value: fmt.Sprintf("%.1f%% of a core (%s)", 100*idle.server, idle)},
		{Name: "3. deliveries while nothing due", Value: fmt.Sprint(idle.deliveries), Target: "0", Result: judge(idle.deliveries == 0)},
	}, nil
}

// openAlerts opens n alerts and waits for their first notices and for the engine to settle.
// It says how much Redis's used_memory grew, and how long the alerts took from the first
// request to the last first notice. The hosts are registered first (the same observations with
// the condition cleared, which opens nothing), so that the growth is the alerts' own:
// documents, indexes, schedules, due times, events, and asynq's bookkeeping.
func (b *bench) openAlerts(ctx context.Context, r *rig, n int) (grew int64, took time.Duration, err error) {
	log.Printf("waiting: registering %d hosts", n)
	if err := r.observeHosts(ctx, "waiting", n, b.sizes.Batch, false, 0); err != nil {
		return 0, 0, err
	}
	if err := r.waitIdle(ctx, patience(n)); err != nil {
		return 0, 0, err
	}
	before, err := b.redis.usedMemory(ctx)
	if err != nil {
		return 0, 0, err
	}
	log.Printf("waiting: opening %d alerts", n)
	start := time.Now()
	if err := r.observeHosts(ctx, "waiting", n, b.sizes.Batch, true, 0); err != nil {
		return 0, 0, err
	}
	if err := r.recv.waitFor(ctx, n, patience(n)); err != nil {
		return 0, 0, err
	}
	arrivals, _ := r.recv.results()
	if err := r.waitIdle(ctx, settleTime); err != nil {
		return 0, 0, err
	}
	after, err := b.redis.usedMemory(ctx)
	return after - before, arrivals[n-1].At.Sub(start), err
}

// idleUse is what a window with nothing due cost.
type idleUse struct {
	window       time.Duration
	self, server float64 // CPU of this process and of redis-server, as shares of one core
	deliveries   int     // deliveries that arrived meanwhile
	commands     float64 // Redis commands a second meanwhile: Herald's own idle work
	rewrites     int64   // append-only file rewrites meanwhile: Redis's housekeeping, a fork each
}

// String says what the window cost Redis besides CPU.
func (u idleUse) String() string {
	s := fmt.Sprintf("%.0f Redis commands/s", u.commands)
	if u.rewrites > 0 {
		s += fmt.Sprintf("; %d append-only file rewrites in the window", u.rewrites)
	}
	return s
}

// idle measures the CPU this process and redis-server use over window, and the deliveries
// that came meanwhile, and logs where the CPU went (idlediag.go). The caller first lets
// redis-server finish what the load left it to do (settle).
func (b *bench) idle(ctx context.Context, r *rig, scenario string, window time.Duration) (idleUse, error) {
	diag, err := b.startDiagnosis(ctx, scenario)
	if err != nil {
		return idleUse{}, err
	}
	distinct0, duplicates0 := r.recv.counts()
	u0, err := b.usage(ctx)
	if err != nil {
		return idleUse{}, err
	}
	_, rewrites0 := b.redis.persistence(ctx)
	if err := sleepUntil(ctx, u0.at.Add(window)); err != nil {
		return idleUse{}, err
	}
	u1, err := b.usage(ctx)
	if err != nil {
		return idleUse{}, err
	}
	_, rewrites1 := b.redis.persistence(ctx)
	distinct1, duplicates1 := r.recv.counts()
	elapsed := u1.at.Sub(u0.at)
	diag.finish(ctx, elapsed)
	return idleUse{
		window:     window,
		self:       float64(u1.self-u0.self) / float64(elapsed),
		server:     float64(u1.server-u0.server) / float64(elapsed),
		deliveries: distinct1 + duplicates1 - distinct0 - duplicates0,
		commands:   float64(u1.commands-u0.commands) / elapsed.Seconds(), // with the bench's own few INFO calls
		rewrites:   rewrites1 - rewrites0,
	}, nil
}

// processCPU is the CPU time this process used so far, user and system.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
