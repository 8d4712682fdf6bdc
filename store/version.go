package store

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// MinRedis is the oldest Redis (major, minor) the store runs on: a nonce count is dated with
// EXPIRE NX (queueAdvance), which Redis 7.0 brought.
var MinRedis = [2]int{7, 0}

// RequireRedis checks that Redis (every master of a Cluster) is MinRedis or later, so that an
// older server is named when a role starts rather than failing every authenticated request.
func (s *Store) RequireRedis(ctx context.Context) error {
	check := func(ctx context.Context, c *redis.Client) error {
		version, err := serverVersion(ctx, c)
		if err != nil {
			return err
		}
		return checkRedisVersion(version)
	}
	cluster, ok := s.rdb.(*redis.ClusterClient)
	if !ok {
		c, ok := s.rdb.(*redis.Client)
		if !ok {
			return fmt.Errorf("store: a Redis client of type %T", s.rdb)
		}
		return check(ctx, c)
	}
	var mu sync.Mutex
	var first error
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := check(ctx, c); err != nil {
			mu.Lock()
			first = cmp.Or(first, fmt.Errorf("%s: %w", c.Options().Addr, err))
			mu.Unlock()
		}
		return nil
	})
	return cmp.Or(first, err)
}

// serverVersion is the version c's server says it is: in its answer to HELLO (without a
// protocol, which changes nothing of the connection), else in INFO server. HELLO first: a
// managed Redis may disable INFO, or an ACL deny it to Herald's user, while HELLO is how
// every client connects (RESP3's handshake). A server that answers neither names both
// errors, with the ACL permission Herald's user needs.
func serverVersion(ctx context.Context, c *redis.Client) (string, error) {
	hello, helloErr := c.Do(ctx, "HELLO").Result()
	if helloErr == nil {
		if v := versionInHello(hello); v != "" {
			return v, nil
		}
		helloErr = fmt.Errorf("no version in %v", hello)
	}
	info, infoErr := c.Info(ctx, "server").Result()
	if infoErr != nil {
		return "", fmt.Errorf("store: Redis tells Herald no version: HELLO: %v; INFO server: %v (Herald's Redis user needs +hello or +info)", helloErr, infoErr)
	}
	return versionInInfo(info), nil
}

// versionInHello is the version in an answer to HELLO: a RESP2 array of names and values, or
// a RESP3 map ("" when it has none).
func versionInHello(reply any) string {
	switch r := reply.(type) {
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if r[i] == "version" {
				v, _ := r[i+1].(string)
				return v
			}
		}
	case map[any]any:
		v, _ := r["version"].(string)
		return v
	}
	return ""
}

// versionInInfo is redis_version in an answer to INFO server ("" when it has none).
func versionInInfo(info string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "redis_version:"); ok {
			return v
		}
	}
	return ""
}

// checkRedisVersion says whether version (major.minor.patch) is older than MinRedis, or not
// a version at all.
func checkRedisVersion(version string) error {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return fmt.Errorf("store: Redis named no version Herald can read (%q)", version)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("store: Redis named no version Herald can read (%q)", version)
	}
	if major < MinRedis[0] || major == MinRedis[0] && minor < MinRedis[1] {
		return fmt.Errorf("store: Redis %s is too old: Herald needs Redis %d.%d or later", version, MinRedis[0], MinRedis[1])
	}
	return nil
}
