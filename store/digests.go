package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldhq/herald"
	"github.com/redis/go-redis/v9"
)

// A digest's record is kept as long as its page's links can be used.
func digestDoc(groupID, id string) string { return key(groupTag(groupID), "digest", id) }

func errDigestNotFound(id string) error {
	return herald.NotFound(herald.CodeResourceNotFound, "digest", id)
}

// SaveDigest keeps digest d for ttl. Saving the same digest again (a retried send) replaces
// it with the same entries.
func (s *Store) SaveDigest(ctx context.Context, d herald.Digest, ttl time.Duration) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return s.rdb.Set(ctx, digestDoc(d.GroupID, d.ID), b, ttl).Err()
}

// Digest reads digest id of project groupID: a not-found error when there is none (never
// saved, or its time is over).
func (s *Store) Digest(ctx context.Context, groupID, id string) (herald.Digest, error) {
	b, err := s.rdb.Get(ctx, digestDoc(groupID, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return herald.Digest{}, errDigestNotFound(id)
	}
	if err != nil {
		return herald.Digest{}, err
	}
	var d herald.Digest
	if err := json.Unmarshal(b, &d); err != nil {
		return herald.Digest{}, err
	}
	return d, nil
}
