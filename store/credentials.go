package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Credential is what a digest user name names: an API key (its public key) or a user (its
// username), or neither.
type Credential struct {
	APIKey *herald.APIKey
	User   *herald.User
	// Version names the document as read (the SHA-1 of its bytes): CheckAuth tells whether
	// it is still the one stored, so that a process may keep what it read.
	Version string
	// doc is the document as read, which CheckAuth compares with what is stored byte for byte
	// rather than hashing that on every request ("": only Version is known).
	doc string
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
		c.APIKey, c.doc, err = versioned[herald.APIKey](ctx, s, apiKeys().doc(keyID))
	case userID != "":
		c.User, c.doc, err = versioned[herald.User](ctx, s, users().doc(userID))
	default:
		err = s.rdb.Get(ctx, apiKeys().doc(decoyID)).Err()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	}
	if c.doc != "" {
		c.Version = docVersion([]byte(c.doc))
	}
	return c, err
}

// versioned reads one document, and the document as read: nil (and no error) when it is gone.
func versioned[T any](ctx context.Context, s *Store, key string) (*T, string, error) {
	doc, err := s.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return nil, "", fmt.Errorf("store: decode %s: %w", key, err)
	}
	return &v, doc, nil
}

// docVersion is a credential document's Version: the SHA-1 of its bytes, in hex.
func docVersion(doc []byte) string {
	sum := sha1.Sum(doc)
	return hex.EncodeToString(sum[:])
}

// isDocVersion says whether doc's Version is version (as docVersion(doc) == version, without
// making the string: it is compared on every request of a kept caller).
func isDocVersion(doc []byte, version string) bool {
	sum := sha1.Sum(doc)
	var h [2 * sha1.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]) == version
}

// HA1 is the credential's HA1 in the API's realm, or the monitoring console's: "" when it
// names nothing (or, in the console's realm, a key or user made before it had its own).
func (c Credential) HA1(monitoring bool) string {
	switch {
	case c.APIKey != nil && monitoring:
		return c.APIKey.MonitoringHA1
	case c.APIKey != nil:
		return c.APIKey.HA1
	case c.User != nil && monitoring:
		return c.User.MonitoringHA1
	case c.User != nil:
		return c.User.HA1
	}
	return ""
}

// Principal is who the credential authenticates, calling from remote.
func (c Credential) Principal(remote string) herald.Principal {
	switch {
	case c.APIKey != nil:
		return c.APIKey.Principal(remote)
	case c.User != nil:
		return c.User.Principal(remote)
	}
	return herald.Principal{}
}
