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
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		return checkRedisVersion(info)
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

// checkRedisVersion reads redis_version in an INFO server answer and says whether it is older
// than MinRedis.
func checkRedisVersion(info string) error {
	var version string
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "redis_version:"); ok {
			version = v
			break
		}
	}
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return fmt.Errorf("store: Redis named no version Herald can read (redis_version %q)", version)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("store: Redis named no version Herald can read (redis_version %q)", version)
	}
	if major < MinRedis[0] || major == MinRedis[0] && minor < MinRedis[1] {
		return fmt.Errorf("store: Redis %s is too old: Herald needs Redis %d.%d or later", version, MinRedis[0], MinRedis[1])
	}
	return nil
}
