package main

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
)

// heraldBinary is the herald the benchmark runs: -herald, or ./cmd/herald built once per run
// into a temporary directory (builtHerald), as deployed.
var heraldBinary = sync.OnceValues(func() (string, error) {
	if *heraldBin != "" {
		return *heraldBin, nil
	}
	dir, err := os.MkdirTemp("", "herald-bench-bin-")
	if err != nil {
		return "", err
	}
	builtHerald.Store(&dir)
	return buildHerald(context.Background(), dir)
})

// builtHerald is the temporary directory heraldBinary built herald into, if it did: the run
// removes it as it ends (removeBuiltHerald), since every run builds its own.
var builtHerald atomic.Pointer[string]

// removeBuiltHerald removes the herald heraldBinary built, if any.
func removeBuiltHerald() {
	if dir := builtHerald.Load(); dir != nil {
		_ = os.RemoveAll(*dir)
	}
}

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
