package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/store/storetest"
)

// The embedded store's keys expire as a real Redis's do: leases, nonce counters and every
// TTL in herald dev (and in tests without redis-server) depend on it.
func TestEmbeddedKeysExpire(t *testing.T) {
	rdb := storetest.Embedded(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 100*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "kept", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, err := rdb.Exists(ctx, "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SET k v PX 100 still exists 3s later: the embedded store's clock does not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Time runs at its real speed: a key with an hour to live is still there, its TTL close to
	// an hour.
	ttl, err := rdb.PTTL(ctx, "kept").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < 59*time.Minute || ttl > time.Hour {
		t.Fatalf("TTL of a key set to live an hour is %s", ttl)
	}
}
