package main

import (
	"context"
	"errors"
	"io"
	"net"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
)

// runAPI serves the HTTP API on a real Redis.
func runAPI(ctx context.Context, args []string, out, errOut io.Writer) error {
	c, err := parseServing("api", "the HTTP API", ":8080", args, errOut)
	if err != nil {
		return err
	}
	if !c.configured() {
		return errors.New("herald api needs a Redis: HERALD_REDIS_URL, HERALD_REDIS_SENTINELS with HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER (herald dev runs without one)")
	}
	log, err := newLogger(c.LogLevel, false, errOut)
	if err != nil {
		return err
	}
	defer log.Sync()
	st, closeStore, err := openStore(ctx, c.redisSettings)
	if err != nil {
		return err
	}
	defer closeStore()
	if c.BootstrapKey != "" {
		pub, err := ensureBootstrapKey(ctx, st, c.BootstrapKey)
		if err != nil {
			return err
		}
		log.Info("bootstrap key ready", zap.String("publicKey", pub))
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	log.Info("API listening", zap.String("address", ln.Addr().String()))
	return serveAPI(ctx, ln, st, d, log, c.common)
}
