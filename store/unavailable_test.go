package store_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A Redis that is down or unreachable is told apart from an error of the command itself.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	down := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer down.Close()
	if err := down.Ping(ctx).Err(); !store.Unavailable(err) {
		t.Errorf("a Redis that is down: %v not unavailable", err)
	}
	up := storetest.Redis(t)
	up.Set(ctx, "k", "v", 0)
	if err := up.LPush(ctx, "k", "x").Err(); err == nil || store.Unavailable(err) {
		t.Errorf("a command's own error (WRONGTYPE): %v taken for unavailable", err)
	}
	if store.Unavailable(errors.New("store: alerts kept changing")) || store.Unavailable(nil) {
		t.Error("other errors taken for unavailable")
	}
	if !store.Unavailable(redis.ErrPoolTimeout) {
		t.Error("a pool timeout is unavailable")
	}
	// asynq's enqueue passes Redis's errors on as text (seen in the faults test's restarts).
	for _, text := range []string{"UNKNOWN: redis eval error: LOADING Redis is loading the dataset in memory",
		"UNKNOWN: redis eval error: dial unix /tmp/redis.sock: connect: connection refused"} {
		if !store.Unavailable(errors.New(text)) {
			t.Errorf("%q not unavailable", text)
		}
	}
	if store.Unavailable(errors.New("UNKNOWN: redis eval error: ERR wrong number of arguments")) {
		t.Error("a script's own error taken for unavailable")
	}
}
