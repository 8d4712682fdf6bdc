package main

import (
	"context"
	"io"
	"os"

	"go.uber.org/zap"
)

// runAPI serves the HTTP API on a real Redis.
func runAPI(ctx context.Context, args []string, out, errOut io.Writer) error {
	c, err := parseServing("api", "the HTTP API", ":8080", args, out)
	if err != nil {
		return err
	}
	roleGC(os.Getenv, apiGCPercent)
	rt, err := startRuntime(ctx, "api", c.common, errOut)
	if err != nil {
		return err
	}
	defer rt.close()
	log, st := rt.log, rt.store
	if c.BootstrapKey != "" {
		pub, err := ensureBootstrapKey(ctx, st, c.BootstrapKey)
		if err != nil {
			return err
		}
		log.Info("bootstrap key ready", zap.String("publicKey", pub))
	}
	ln, err := listen("HERALD_LISTEN", c.Listen)
	if err != nil {
		return err
	}
	log.Info("API listening", zap.String("address", ln.Addr().String()))
	return serveAPI(ctx, ln, st, rt.queue, log, c.common)
}
