package dispatch

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Heartbeats (herald.Heartbeat). Their deadlines are a due set in Redis
// (store.DueHeartbeats); every worker polls it every heartbeatPoll. A heartbeat past its
// deadline is marked missed and its HEARTBEAT_MISSED observation queued in one transaction
// (store.UpdateHeartbeat, which a second worker's claim of the same heartbeat retries and
// then finds it missed already); the project's session then evaluates it as any other
// observation: configurations, delays, maintenance windows, acknowledgements, notices.
// Deadlines are compared with Redis' clock, the one pings are stamped by, so a heartbeat is
// never declared missed early whatever the hosts' clocks say.

// heartbeatPoll is how often a worker looks for missed heartbeats, and heartbeatBatch how
// many it takes at a time (the rest at once after).
const (
	heartbeatPoll  = 500 * time.Millisecond
	heartbeatBatch = 500
)

// cronParser reads the five fields of a standard cron expression and the @hourly family.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a heartbeat's schedule in timeZone (an IANA name; "" is UTC).
func ParseCron(spec, timeZone string) (herald.Cron, error) {
	loc := time.UTC
	if timeZone != "" {
		var err error
		if loc, err = time.LoadLocation(timeZone); err != nil {
			return nil, err
		}
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, err
	}
	if ss, ok := s.(*cron.SpecSchedule); ok {
		ss.Location = loc
	}
	return s, nil
}

// HeartbeatCron is h's parsed schedule, nil for a heartbeat with a period (or a schedule that
// no longer parses, which then counts as none).
func HeartbeatCron(h herald.Heartbeat) herald.Cron {
	if h.Schedule == "" {
		return nil
	}
	c, err := ParseCron(h.Schedule, h.TimeZone)
	if err != nil {
		return nil
	}
	return c
}

// HeartbeatDeadline is h's deadline with minute, as the store's due set keeps it.
func HeartbeatDeadline(h herald.Heartbeat, minute time.Duration) time.Time {
	if h.Schedule != "" && HeartbeatCron(h) == nil {
		return time.Time{}
	}
	return h.Deadline(minute, HeartbeatCron(h))
}

// CheckHeartbeats marks missed every heartbeat past its deadline and queues the observations
// that open their alerts; it answers how many it marked.
func (e *Engine) CheckHeartbeats(ctx context.Context) (int, error) {
	missed := 0
	for {
		now, err := e.store.Now(ctx)
		if err != nil {
			return missed, err
		}
		refs, err := e.store.DueHeartbeats(ctx, now, heartbeatBatch)
		if err != nil || len(refs) == 0 {
			return missed, err
		}
		projects := map[string]bool{}
		for _, ref := range refs {
			ok, err := e.checkHeartbeat(ctx, ref, now)
			if err != nil {
				return missed, err
			}
			if ok {
				missed++
				projects[ref.GroupID] = true
			}
		}
		for g := range projects {
			e.dispatcher.Queued(ctx, g)
		}
		if len(refs) < heartbeatBatch {
			return missed, nil
		}
	}
}

// checkHeartbeat looks at one heartbeat the due set says is past its deadline at now: missed
// if its document agrees, else its entry moves to the document's deadline (or leaves).
func (e *Engine) checkHeartbeat(ctx context.Context, ref store.HeartbeatRef, now time.Time) (bool, error) {
	missed := false
	_, err := e.store.UpdateHeartbeat(ctx, ref.GroupID, ref.ID, func(h *herald.Heartbeat) (store.HeartbeatWrite, error) {
		missed = false
		dl := HeartbeatDeadline(*h, e.Minute)
		if dl.IsZero() || now.Before(dl) {
			return store.HeartbeatWrite{Due: dl}, nil
		}
		missed = true
		return store.HeartbeatWrite{Observations: []herald.Observation{h.Miss(now)}}, nil
	})
	if herald.IsNotFound(err) {
		return false, e.store.DropDueHeartbeat(ctx, ref)
	}
	return missed, err
}

// watchHeartbeats runs CheckHeartbeats at once and then every heartbeatPoll, until stopped.
func (e *Engine) watchHeartbeats() *background {
	return every(heartbeatPoll, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*heartbeatPoll)
		defer cancel()
		if _, err := e.CheckHeartbeats(ctx); err != nil {
			e.Log.Warn("looking for missed heartbeats failed; the next look tries again", zap.Error(err))
		}
	})
}
