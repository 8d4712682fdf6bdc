package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// Herald refuses to start on a Redis older than 7.0, naming it, and on an answer without a
// version it can read.
func TestCheckRedisVersion(t *testing.T) {
	for _, c := range []struct {
		info string
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n", true},
		{"# Server\r\nredis_version:8.2.1\r\n", true},
		{"redis_version:7.2.4\r\n", true}, // Valkey says it is 7.2.4
		{"# Server\r\nredis_version:6.2.14\r\n", false},
		{"# Server\r\nredis_version:6.99.0\r\n", false},
		{"# Server\r\nredis_mode:standalone\r\n", false},
		{"# Server\r\nredis_version:seven\r\n", false},
	} {
		err := store.CheckRedisVersion(store.VersionInInfo(c.info))
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok %v", c.info, err, c.ok)
		}
	}
	for _, c := range []struct {
		hello any
		want  string
	}{
		{[]any{"server", "redis", "version", "7.0.15", "proto", int64(2)}, "7.0.15"},     // RESP2
		{map[any]any{"server": "redis", "version": "8.2.1", "proto": int64(3)}, "8.2.1"}, // RESP3
		{[]any{"server", "redis", "proto", int64(2)}, ""},
		{[]any{"version"}, ""},
		{"OK", ""},
	} {
		if got := store.VersionInHello(c.hello); got != c.want {
			t.Errorf("%v: version %q, want %q", c.hello, got, c.want)
		}
	}
	if err := store.New(storetest.Redis(t)).RequireRedis(context.Background()); err != nil {
		t.Errorf("the test's Redis: %v", err)
	}
}

// A Redis that denies Herald's user INFO (as managed services may) still tells its version
// through HELLO, which no ACL denies; a server that answers neither stops the role with an
// error that names both and says what to grant.
func TestRequireRedisWithoutInfo(t *testing.T) {
	rdb := storetest.Redis(t)
	ctx := context.Background()
	if err := rdb.Do(ctx, "ACL", "WHOAMI").Err(); err != nil {
		t.Skipf("this server has no ACL (%v): the embedded store", err)
	}
	if err := rdb.Do(ctx, "ACL", "SETUSER", "no-info", "on", ">secret", "~*", "&*", "+@all", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	o := *rdb.Options()
	o.Username, o.Password = "no-info", "secret"
	c := redis.NewClient(&o)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Info(ctx, "server").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("INFO as a user denied it: %v, want NOPERM", err)
	}
	if err := store.New(c).RequireRedis(ctx); err != nil {
		t.Errorf("INFO denied: %v", err)
	}

	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	err := store.New(dead).RequireRedis(ctx)
	if err == nil || !strings.Contains(err.Error(), "HELLO: ") || !strings.Contains(err.Error(), "INFO server: ") || !strings.Contains(err.Error(), "+hello or +info") {
		t.Errorf("no answer to HELLO or INFO: %v, want an error naming both and what to grant", err)
	}
}
