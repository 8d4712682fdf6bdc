package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// queueAdvance's commands are those go-redis's ZAddArgs (GT, Ch) and ExpireNX make, argument
// for argument (the numbers given by pointer, which go-redis writes as the values), for counts
// and lifetimes of every shape (a TTL rounded up to whole seconds).
func TestAdvanceCmdsAsGoRedis(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled: commands are only queued
	defer rdb.Close()
	for _, c := range []struct {
		nc  uint64
		ttl time.Duration
	}{{1, 5 * time.Minute}, {255, 5*time.Minute + time.Millisecond}, {1 << 32, 999 * time.Millisecond}, {7, 0}} {
		pipe := rdb.Pipeline()
		cmds := new(advanceCmds)
		queueAdvance(ctx, pipe, cmds, "n0nce", c.nc, c.ttl)
		advanced, dated := &cmds.advanced, &cmds.dated
		want := rdb.Pipeline() // go-redis's own, also only queued
		wantZ := want.ZAddArgs(ctx, nonceCount("n0nce"), redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: float64(c.nc), Member: nonceCountMember}}})
		wantE := want.ExpireNX(ctx, nonceCount("n0nce"), (c.ttl + time.Second - 1).Truncate(time.Second))
		if got, want := derefArgs(advanced.Args()), wantZ.Args(); !reflect.DeepEqual(got, want) {
			t.Errorf("count %d: %v, want %v", c.nc, got, want)
		}
		if got, want := derefArgs(dated.Args()), wantE.Args(); !reflect.DeepEqual(got, want) {
			t.Errorf("lifetime %v: %v, want %v", c.ttl, got, want)
		}
		if got := pipe.Cmds(); len(got) != 2 || got[0] != redis.Cmder(advanced) || got[1] != redis.Cmder(dated) {
			t.Errorf("queued %v", got)
		}
	}
}

// derefArgs is args with each pointer replaced by what it points to.
func derefArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer {
			a = v.Elem().Interface()
		}
		out[i] = a
	}
	return out
}
