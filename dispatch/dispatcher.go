package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Dispatcher is the engine's front door, for the API and the scheduler: it queues work, it
// does none.
type Dispatcher struct {
	store     *store.Store
	client    *asynq.Client
	inspector *asynq.Inspector
	clock     herald.Clock
}

// NewDispatcher queues on the Redis of st.
func NewDispatcher(st *store.Store, clock herald.Clock) *Dispatcher {
	return &Dispatcher{store: st, client: asynq.NewClientFromRedisClient(st.Redis()),
		inspector: asynq.NewInspectorFromRedisClient(st.Redis()), clock: clock}
}

// Observe queues a validated batch of a project's observations, durably and in order, and a
// task to evaluate it. Once the batch is queued its caller must be told it was accepted, even
// should its task fail to queue (Redis lost, or the caller gone, between the two): told of a
// failure, an agent sends the batch again, and a batch evaluated twice can close the alert it
// opened (a flapping host's batch clears its condition and reports it again). A batch left
// without a task is not lost: the next batch's task evaluates it, and the scheduler's
// reconcile starts a session for any project with batches waiting (store.Waiting).
func (d *Dispatcher) Observe(ctx context.Context, groupID string, batch []byte) error {
	if err := d.store.AppendObservations(ctx, groupID, batch); err != nil {
		return err
	}
	d.Queued(ctx, groupID)
	return nil
}

// Queued makes sure a session of the project evaluates the observations the store queued for
// it: its task, and a kick. A failure to queue the task is not the caller's: the next batch's
// task, or the scheduler's reconcile, starts a session for any project with observations
// waiting.
func (d *Dispatcher) Queued(ctx context.Context, groupID string) {
	if _, err := d.client.EnqueueContext(ctx, newTask(TypeObservations, projectTask{GroupID: groupID}),
		asynq.Queue(QueueEngine), asynq.MaxRetry(50)); err == nil {
		d.kick(ctx, groupID)
	}
}

// kick tells the workers listening that project groupID has work queued (store.Kicks), so
// that one starts a session at once rather than at its next poll. Its failure is nobody's to
// handle: the work and its task are queued, and the kick only makes them start sooner (the
// caller must not be told of a failure and send the work again).
func (d *Dispatcher) kick(ctx context.Context, groupID string) { _ = d.store.Kick(ctx, groupID) }

// WakeAt makes sure a session of the project runs at at: an alert's due time or the end of a
// claim on its notices (a session waits in its task for either, so its tick is queued early:
// wakeAt). Ticks of the same second are one task.
func (d *Dispatcher) WakeAt(ctx context.Context, groupID string, at time.Time) error {
	return d.wakeAt(ctx, groupID, at, dueLead)
}

// wakeAt queues the project's tick lead before at. asynq keeps a scheduled task's time in
// whole seconds and moves it to its queue at its next check (every DelayedTaskCheckInterval),
// so a tick starts between a second before its time and a check after it; a session that
// starts early waits in its task for what is due (up to soonEnough). Ticks of the same second
// are one task.
func (d *Dispatcher) wakeAt(ctx context.Context, groupID string, at time.Time, lead time.Duration) error {
	at = at.Add(-lead)
	_, err := d.client.EnqueueContext(ctx, newTask(TypeTick, projectTask{GroupID: groupID}),
		asynq.Queue(QueueEngine), asynq.TaskID(tickID(groupID, at)), asynq.ProcessAt(at), asynq.MaxRetry(50),
		asynq.Retention(0))
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil // that second's tick is already there
	}
	return err
}

// ConfigChanged tells the engine that a configuration was edited, disabled or deleted: the
// alerts it opened before now are cancelled.
func (d *Dispatcher) ConfigChanged(ctx context.Context, groupID, configID string, global bool) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeConfig, projectTask{GroupID: groupID, ConfigID: configID,
		Global: global, Before: d.clock.Now()}), asynq.Queue(QueueEngine), asynq.MaxRetry(50))
	return err
}

// Acknowledged makes the engine look at an acknowledged alert when its acknowledgement expires,
// and at an alert whose acknowledgement was withdrawn (a past acknowledgedUntil) now: while it
// was acknowledged the engine may have put it off until the acknowledgement's end, and its
// repeats resume at once.
func (d *Dispatcher) Acknowledged(ctx context.Context, a herald.Alert, global bool) error {
	at := a.AcknowledgedUntil.Time
	if a.AcknowledgedUntil.IsZero() {
		at = d.clock.Now()
	}
	if err := d.store.WakeNoLaterThan(ctx, store.Scope{GroupID: a.GroupID, Global: global}, a.ID, at); err != nil {
		return err
	}
	return d.WakeAt(ctx, a.GroupID, at)
}

// Close releases the dispatcher's connections (the store's stay open).
func (d *Dispatcher) Close() error { return d.client.Close() }
