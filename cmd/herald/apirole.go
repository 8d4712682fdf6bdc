package main

import (
	"context"
	"errors"
	"io"
	"net"

	"go.uber.org/zap"
)

// runAPI serves the HTTP API on a real Redis.
func runAPI(ctx context.Context, args []string, out, errOut io.Writer) error {
	var c common
	var bootstrap string
	s := newSettings("api", "the HTTP API", errOut)
	c.bind(s, ":8080")
	s.string(&bootstrap, "bootstrap-key", "HERALD_BOOTSTRAP_KEY", "", "global owner key to make sure exists, as public:private")
	if err := s.fs.Parse(args); err != nil {
		return err
	}
	if err := c.validate(); err != nil {
		return err
	}
	if c.RedisURL == "" {
		return errors.New("herald api needs HERALD_REDIS_URL (herald dev runs without one)")
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
	if bootstrap != "" {
		pub, err := ensureBootstrapKey(ctx, st, bootstrap)
		if err != nil {
			return err
		}
		log.Info("bootstrap key ready", zap.String("publicKey", pub))
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	log.Info("API listening", zap.String("address", ln.Addr().String()))
	return serveAPI(ctx, ln, st, log, c)
}
