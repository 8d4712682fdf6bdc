package main

import (
	"context"
	"errors"
	"io"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
)

// runWorker runs the alert engine and the senders on a real Redis until ctx ends, then hands
// unfinished tasks back to the queue.
func runWorker(ctx context.Context, args []string, out, errOut io.Writer) error {
	var c common
	s := newSettings("worker", "the alert engine and the senders, as many as the load needs", errOut)
	c.bind(s, "")
	c.bindWorker(s, false)
	if err := s.fs.Parse(args); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if c.RedisURL == "" {
		return errors.New("herald worker needs HERALD_REDIS_URL")
	}
	log, err := newLogger(c.LogLevel, false, errOut)
	if err != nil {
		return err
	}
	defer log.Sync()
	st, closeStore, err := openStore(ctx, c.RedisURL)
	if err != nil {
		return err
	}
	defer closeStore()
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	w, err := startWorker(st, d, c, log)
	if err != nil {
		return err
	}
	log.Info("worker started", zap.Int("concurrency", c.Concurrency), zap.Duration("minute", c.Minute))
	<-ctx.Done()
	log.Info("shutting down: finishing tasks under way")
	w.Shutdown()
	return nil
}
