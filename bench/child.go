package main

import (
	"context"
	"os"
	"sync"
)

// heraldBinary is the herald the benchmark runs: -herald, or ./cmd/herald built once per run
// into a temporary directory, as deployed.
var heraldBinary = sync.OnceValues(func() (string, error) {
	if *heraldBin != "" {
		return *heraldBin, nil
	}
	dir, err := os.MkdirTemp("", "herald-bench-bin-")
	if err != nil {
		return "", err
	}
	return buildHerald(context.Background(), dir)
})

// startHerald starts `herald <role>` on the benchmark's Redis with env added to its settings;
// its log goes to a file in the Redis directory (written, as in production, at level info).
func (b *bench) startHerald(role string, env ...string) (*process, error) {
	bin, err := heraldBinary()
	if err != nil {
		return nil, err
	}
	env = append([]string{"HERALD_REDIS_URL=unix://" + b.redis.socket(), "HERALD_METRICS_LISTEN=", "HERALD_LOG_LEVEL=info"}, env...)
	return startProcess(role, b.redis.dir, bin, []string{role}, env)
}

// socket is the unix socket redis-server listens on.
func (rs *redisServer) socket() string { return rs.sock }
