package api_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// downHook fails every command with the error a client gets from a Redis that is down, while
// down is set.
type downHook struct {
	down *atomic.Bool
	err  error
}

func (h downHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h downHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.down.Load() {
			cmd.SetErr(h.err)
			return h.err
		}
		return next(ctx, cmd)
	}
}
func (h downHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.down.Load() {
			return h.err
		}
		return next(ctx, cmds)
	}
}

// redisDownError is the error a client really gets from a Redis nobody listens for.
func redisDownError(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dead := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer dead.Close()
	downErr := dead.Ping(context.Background()).Err()
	if !store.Unavailable(downErr) {
		t.Fatalf("%v is not unavailable", downErr)
	}
	return downErr
}

// With Redis down, the API answers 503 SERVICE_UNAVAILABLE with Retry-After, so that agents
// back off, not 500 UNEXPECTED_ERROR.
func TestRedisDownIsServiceUnavailable(t *testing.T) {
	e, _, p := newProjectEnv(t)
	downErr := redisDownError(t)
	var down atomic.Bool
	e.Store.Redis().AddHook(downHook{down: &down, err: downErr})
	down.Store(true)
	r := e.Owner.do("POST", "/groups/"+p+"/observations", []any{map[string]any{"eventTypeName": "HOST_DOWN", "active": true, "hostId": "h1"}})
	r.wantError(503, herald.CodeServiceUnavailable)
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	down.Store(false)
	e.Owner.do("GET", "/groups/"+p, nil).wantStatus(200)
}
