package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Pacing. Every target of a paced kind (an address, a number, a chat channel with its token,
// a key, a URL) has a token bucket in Redis that every worker shares (store.ReservePace).
// Before a try, a delivery takes its slot there: a slot that is now is sent at once; a later
// one sends the delivery to its kind's retry queue for that time, recorded PACED, which is no
// failed try. Slots are handed out in the order deliveries ask, so a target's notices wait in
// order, and none goes before its slot. A service's Retry-After pauses the whole target: every
// slot before the pause ends is given again after it.
//
// Pacing comes before the reach record (supersede.go) marks a target tried: a paced opening has
// reached nothing, so its resolution is withheld there, and the opening, tried after its alert
// ended, is superseded. A target never gets a resolution before its opening.

// DefaultPaces are the paces of the kinds' targets, from their services' documented limits:
// HERALD_PACE_<KIND> sets each (PaceSettings). A kind missing here is not paced.
var DefaultPaces = map[string]store.Pace{
	"EMAIL":      {Every: time.Second, Burst: 10},
	"SMS":        {Every: time.Second, Burst: 1},      // a long code: one segment a second
	"CHAT_A":     {Every: time.Second, Burst: 1},      // one message a second per room
	"CHAT_B":     {Every: time.Second, Burst: 1},      // chat.postMessage: one a second per channel
	"CHAT_C":     {Every: time.Second, Burst: 4},      // an incoming webhook: about four a second
	"PAGING":     {Every: time.Second / 2, Burst: 10}, // the events API: 120 a minute per key
	"ALERTING_A": {Every: time.Second / 2, Burst: 10},
	"ALERTING_B": {Every: time.Second / 2, Burst: 10},
	"METRICS_A":  {Every: time.Second / 10, Burst: 50},
	"WEBHOOK":    {}, // unlimited
}

// PaceSetting is the environment variable that sets the pace of kind's targets.
func PaceSetting(kind string) string { return "HERALD_PACE_" + kind }

// ParsePace reads a pace: "off", or a rate "N/s", "N/m" or "N/h" with an optional burst,
// "1/s,burst=5" (a burst of 1 when none is given).
func ParsePace(text string) (store.Pace, error) {
	const form = `"off", or a rate N/s, N/m or N/h with an optional burst (1/s,burst=5)`
	if strings.TrimSpace(text) == "off" {
		return store.Pace{}, nil
	}
	rate, burstPart, hasBurst := strings.Cut(strings.TrimSpace(text), ",")
	count, unit, ok := strings.Cut(rate, "/")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	if !ok || err != nil || n < 1 || per == 0 || per/time.Duration(n) < time.Millisecond {
		return store.Pace{}, fmt.Errorf("%q is not %s", text, form)
	}
	p := store.Pace{Every: per / time.Duration(n), Burst: 1}
	if hasBurst {
		v, found := strings.CutPrefix(strings.TrimSpace(burstPart), "burst=")
		b, err := strconv.Atoi(v)
		if !found || err != nil || b < 1 || b > 100000 {
			return store.Pace{}, fmt.Errorf("%q is not %s: the burst is a whole number from 1", text, form)
		}
		p.Burst = b
	}
	return p, nil
}

// FormatPace is a pace as ParsePace reads it.
func FormatPace(p store.Pace) string {
	if p.Off() {
		return "off"
	}
	rate := ""
	switch {
	case time.Second%p.Every == 0:
		rate = strconv.Itoa(int(time.Second/p.Every)) + "/s"
	case time.Minute%p.Every == 0:
		rate = strconv.Itoa(int(time.Minute/p.Every)) + "/m"
	default:
		rate = strconv.Itoa(int(time.Hour/p.Every)) + "/h"
	}
	if p.Burst > 1 {
		rate += ",burst=" + strconv.Itoa(p.Burst)
	}
	return rate
}

// Waits of a paced delivery. Its retry task is due a little before its slot (paceAt) and waits
// in-process for the slot itself, so that a target's notices go at their slots, in order,
// rather than whenever asynq's whole seconds and its forwarder's checks let them start.
const (
	// paceSlack: a slot this close is now.
	paceSlack = 10 * time.Millisecond
	// paceLead: a paced retry task is due this much before its slot, to the whole second
	// below (asynq's due times are whole seconds).
	paceLead = time.Second
	// paceWaitMax: a retry task that starts this close before its slot waits for it rather
	// than going round its queue again; it covers paceLead, the second below it, and a
	// forwarder's check.
	paceWaitMax = 2*paceLead + delayedTaskCheck
)

// paceAt is when the retry task of a delivery whose slot is wait from now is due: before the
// slot, by paceLead and to the whole second below, so that it starts in time to wait for it.
func paceAt(now time.Time, wait time.Duration) time.Time {
	return now.Add(wait - paceLead).Truncate(time.Second)
}

// pacedError is a delivery task's run that found its target's slot later, or whose paced
// target asked for a wait (failure): the task runs again a little before its slot
// (retryDelay). Only a try that failed is a failed try (isFailure).
type pacedError struct {
	wait    time.Duration
	failure error
}

func (p *pacedError) Error() string {
	msg := "paced: the target's next slot is in " + p.wait.Round(time.Millisecond).String()
	if p.failure != nil {
		msg = p.failure.Error() + " (" + msg + ")"
	}
	return msg
}

func (p *pacedError) Unwrap() error { return p.failure }

// onlyPaced says that err is a wait for a slot, with no failed try.
func onlyPaced(err error) bool {
	var p *pacedError
	return errors.As(err, &p) && p.failure == nil
}

// lineWait is how long delivery r, tried with res and err (paced or retryLater), waits
// before its next try: inLine, in its target's line (the slot pace gave it, or the one
// paceTried did after its paced target asked for a wait), else as long as the failure asked.
func lineWait(r *recipient, res outcome, err error) (wait time.Duration, inLine bool) {
	switch {
	case res == paced:
		return pacedWait(err), true
	case r.pace != "" && retryAfter(err) > 0:
		return retryAfter(err), true
	}
	return retryAfter(err), false
}

// paceKey is the bucket of delivery r's target, "" when its kind is not paced (targetKey).
func (e *Engine) paceKey(r recipient) string {
	if p, ok := e.Paces[r.kind]; !ok || p.Off() {
		return ""
	}
	return targetKey(r)
}

// targetKey names delivery r's target, as its pace bucket and its digest line do: a person's
// address or number, else the kind's required fields (its address, key or URL, and the token
// that goes with a channel), as the notification or its integration gives them. "" for a
// delivery that stands for nobody.
func targetKey(r recipient) string {
	if r.nobody != "" {
		return ""
	}
	if r.via != "" {
		return store.PaceKey(r.kind, r.delivery.To)
	}
	kind, ok := herald.LookupKind(r.kind)
	if !ok {
		return ""
	}
	var id strings.Builder
	for _, f := range kind.Fields {
		if f.Required {
			id.WriteString(channels.Kind{Kind: kind}.Field(r.delivery, f.Name))
			id.WriteByte(0)
		}
	}
	return store.PaceKey(r.kind, id.String())
}

// pace takes delivery r's slot at its target. ok: send it now. Otherwise it waits wait, and
// rec records it PACED. A retry task's run waits in-process for a slot less than paceWaitMax
// away, then asks again: the target may have been paused meanwhile. A store error is a
// retryLater of its own (storeFailed).
func (e *Engine) pace(ctx context.Context, n notice, r *recipient, retry bool) (ok bool, wait time.Duration, rec store.Attempt, err error) {
	if r.pace = e.paceKey(*r); r.pace == "" {
		return true, 0, rec, nil
	}
	for {
		now := e.Clock.Now()
		slot, err := e.store.ReservePace(ctx, r.pace, r.delivery.ID, e.Paces[r.kind], now)
		if err != nil {
			return false, 0, rec, storeFailed(err)
		}
		wait = slot.Sub(now)
		switch {
		case wait <= paceSlack:
			return true, 0, rec, nil
		case !retry || wait > paceWaitMax:
			return false, wait, e.paced(n, r, slot), nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false, 0, rec, ctx.Err()
		case <-e.stopping:
			timer.Stop()
			return false, wait, e.paced(n, r, slot), nil
		case <-timer.C:
		}
	}
}

// paced is the record of delivery r waiting for its slot at its target.
func (e *Engine) paced(n notice, r *recipient, slot time.Time) store.Attempt {
	e.Observer.Paced(r.kind)
	return store.Attempt{At: herald.At(e.Clock.Now()), AlertID: n.AlertID, Global: n.Global, DeliveryID: r.delivery.ID,
		Kind: r.kind, Via: r.via, Outcome: store.OutcomePaced,
		Reason: "waiting for its turn at the target until " + slot.UTC().Format(time.RFC3339Nano)}
}

// paceTried ends delivery r's slot once it was tried: a later try takes a new one. When the
// service asked to be left alone (Retry-After), the whole target is paused that long, and the
// delivery takes the first slot after the pause, keeping its place at the head of the
// target's line. Neither is worth failing the delivery for: a slot left held is used again by
// the next try; a pause not recorded leaves the other notices to meet the service's refusal
// themselves.
func (e *Engine) paceTried(ctx context.Context, r *recipient, err error) {
	if r.pace == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if f := failureOf(err); f != nil && f.RetryAfter > 0 {
		now := e.Clock.Now()
		if e.store.PausePace(ctx, r.pace, r.delivery.ID, e.Paces[r.kind], now.Add(f.RetryAfter), now) == nil {
			return
		}
	}
	_ = e.store.ReleasePace(ctx, r.pace, r.delivery.ID)
}

// pacedOutcome is what try says of a delivery pace held back: paced for wait, recorded by
// rec, or a store error's retryLater.
func pacedOutcome(wait time.Duration, rec store.Attempt, err error) (outcome, []store.Attempt, error) {
	if err != nil {
		return retryLater, nil, err
	}
	return paced, []store.Attempt{rec}, &pacedError{wait: wait}
}

// pacedWait is how long a paced delivery waits for its slot.
func pacedWait(err error) time.Duration {
	var p *pacedError
	if errors.As(err, &p) {
		return p.wait
	}
	return 0
}
