package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errAPIKeyNotFound(id string) error {
	return herald.NotFound(herald.CodeAPIKeyNotFound, "API key", id)
}

// CreateAPIKey stores a new key (global when k.OrgID is empty) and records ev in scope evs:
// the platform's events for a global key, the organization's for an organization key.
func (s *Store) CreateAPIKey(ctx context.Context, k herald.APIKey, ev *herald.Event) error {
	err := s.reserveName(ctx, publicKeyRef(k.PublicKey), usernameRef(k.PublicKey), k.ID,
		herald.Errorf(herald.KindConflict, "API_KEY_ALREADY_EXISTS", []any{k.PublicKey}, "That public key is taken (by a key or a user's name)."))
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, apiKeys().doc(k.ID), k); err != nil {
			return err
		}
		z := redis.Z{Score: score(k.Created), Member: k.ID}
		if k.OrgID == "" {
			pipe.ZAdd(ctx, apiKeys().index("global"), z)
		} else {
			pipe.ZAdd(ctx, apiKeys().index("org", k.OrgID), z)
		}
		for _, r := range k.Roles {
			if r.GroupID != "" {
				pipe.ZAdd(ctx, apiKeys().index("group", r.GroupID), z)
			}
		}
		return nil
	})
	if err != nil || ev == nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		return recordEvent(ctx, pipe, events("", ev.OrgID), *ev)
	})
	return err
}

// APIKeyByPublicKey finds a key by its public key; ok is false for an unknown one.
func (s *Store) APIKeyByPublicKey(ctx context.Context, publicKey string) (herald.APIKey, bool, error) {
	return getByName[herald.APIKey](ctx, s.rdb, publicKeyRef(publicKey), apiKeys())
}

// APIKey reads a key by id.
func (s *Store) APIKey(ctx context.Context, id string) (herald.APIKey, error) {
	return getByID[herald.APIKey](ctx, s.rdb, apiKeys().doc, id, errAPIKeyNotFound)
}

// GlobalAPIKeys lists global keys, oldest first.
func (s *Store) GlobalAPIKeys(ctx context.Context, p Page) ([]herald.APIKey, int, error) {
	return list[herald.APIKey](ctx, s, apiKeys(), apiKeys().index("global"), TimeRange{}, false, p)
}

// AssignAPIKey gives organization key id the project roles names in project groupID
// (replacing its earlier roles there) and records ev in the project, in one transaction.
// allowed judges the key as it is when written (after any change that came meanwhile, the
// transaction being tried again on it), and its error refuses the change: a caller's right to
// change a key depends on the roles the key holds, which another caller may be changing.
func (s *Store) AssignAPIKey(ctx context.Context, id, groupID string, names []string, ev herald.Event, allowed func(herald.APIKey) error) (herald.APIKey, error) {
	if !herald.ValidID(id) {
		return herald.APIKey{}, errAPIKeyNotFound(id)
	}
	return update(ctx, s, apiKeys().doc(id), errAPIKeyNotFound(id), events(groupID, ""),
		func(k *herald.APIKey) ([]herald.Event, error) {
			if k.OrgID == "" {
				return nil, errAPIKeyNotFound(id) // a global key is not an organization key
			}
			if err := allowed(*k); err != nil {
				return nil, err
			}
			k.Roles = k.WithProjectRoles(groupID, names)
			return []herald.Event{ev}, nil
		},
		func(k herald.APIKey, pipe redis.Pipeliner) {
			pipe.ZAdd(ctx, apiKeys().index("group", groupID), redis.Z{Score: score(k.Created), Member: k.ID})
		})
}

// SetMonitoringHA1 gives a key made before the monitoring console had its own realm the HA1 it
// authenticates with there (known only where the private key is: the bootstrap key).
func (s *Store) SetMonitoringHA1(ctx context.Context, id, ha1 string) error {
	_, err := update(ctx, s, apiKeys().doc(id), errAPIKeyNotFound(id), apiKeys(),
		func(k *herald.APIKey) ([]herald.Event, error) { k.MonitoringHA1 = ha1; return nil, nil }, nil)
	return err
}
