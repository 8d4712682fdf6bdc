package store

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Credential is what a digest user name names: an API key (its public key) or a user (its
// username), or neither.
type Credential struct {
	APIKey *herald.APIKey
	User   *herald.User
}

// decoyID is a key id no key has: an unknown name reads it, so that it costs what a known one does.
const decoyID = "000000000000000000000000"

// Credential finds what a digest user name names, a key before a user. It costs two Redis round
// trips whatever the answer (both names in one, the document or a decoy in the other), so the
// time it takes does not tell a guesser whether a key or user exists.
func (s *Store) Credential(ctx context.Context, name string) (Credential, error) {
	var c Credential
	pipe := s.rdb.Pipeline()
	keyRef, userRef := pipe.Get(ctx, publicKeyRef(name)), pipe.Get(ctx, usernameRef(name))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return c, err
	}
	var err error
	keyID, userID := keyRef.Val(), userRef.Val()
	switch {
	case keyID != "":
		c.APIKey, err = lookup[herald.APIKey](ctx, s, apiKeys().doc(keyID), errAPIKeyNotFound(keyID))
	case userID != "":
		c.User, err = lookup[herald.User](ctx, s, users().doc(userID), errUserNotFound(userID))
	default:
		err = s.rdb.Get(ctx, apiKeys().doc(decoyID)).Err()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	}
	return c, err
}

// lookup reads one document: nil (and no error) when it is gone.
func lookup[T any](ctx context.Context, s *Store, key string, notFound error) (*T, error) {
	var v T
	err := get(ctx, s.rdb, key, &v, notFound)
	if herald.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}
