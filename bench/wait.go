package main

import (
	"context"
	"fmt"
	"time"
)

// settleTime bounds how long the engine may take to finish what is under way once the
// deliveries a scenario waits for have arrived.
const settleTime = time.Minute

// patience bounds how long n items of work may take: half a minute, and 5 ms an item.
func patience(n int) time.Duration { return 30*time.Second + time.Duration(n)*5*time.Millisecond }

// poll calls done every 10 ms until it reports true or an error, ctx ends, or within passes.
func poll(ctx context.Context, within time.Duration, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", within, ctx.Err())
		case <-tick.C:
		}
	}
}

// sleepUntil waits until t (or ctx ends).
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
