package store

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Configuration versions: what an engine session loads when it starts (a project's alert
// configurations, maintenance windows and integrations; the global configurations) carries a
// counter bumped in the same transaction as every write of it, so that a session tells with
// one read whether what it loaded is still what is committed.
//
//	{g:<id>}:cfgver     the project's
//	{global}:cfgver     the global configurations'
func projectConfigVersion(groupID string) string { return key(groupTag(groupID), "cfgver") }
func globalConfigVersion() string                { return key(globalTag, "cfgver") }

// bumpProjectConfig queues the bump of a project's configuration version.
func bumpProjectConfig(ctx context.Context, pipe redis.Pipeliner, groupID string) {
	pipe.Incr(ctx, projectConfigVersion(groupID))
}

// bumpGlobalConfig queues the bump of the global configurations' version.
func bumpGlobalConfig(ctx context.Context, pipe redis.Pipeliner) {
	pipe.Incr(ctx, globalConfigVersion())
}

// ConfigVersion is the version of what an engine session of project groupID loads: it
// changes with every write of it.
func (s *Store) ConfigVersion(ctx context.Context, groupID string) (string, error) {
	var p, g *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		p = pipe.Get(ctx, projectConfigVersion(groupID))
		g = pipe.Get(ctx, globalConfigVersion())
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", err
	}
	return p.Val() + ":" + g.Val(), nil
}
