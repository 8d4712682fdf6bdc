package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errIntegrationNotFound(typ string) error {
	return herald.NotFound(herald.CodeIntegrationNotFound, "integration of type", typ)
}

// A project's integrations are one hash, a field per type: there are at most a handful.

// Integrations reads all of a project's integrations, sorted by type.
func (s *Store) Integrations(ctx context.Context, groupID string) ([]herald.Integration, error) {
	m, err := s.rdb.HGetAll(ctx, integrationsHash(groupID)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]herald.Integration, 0, len(m))
	for typ, v := range m {
		var i herald.Integration
		if err := json.Unmarshal([]byte(v), &i); err != nil {
			return nil, fmt.Errorf("store: decode integration %s of %s: %w", typ, groupID, err)
		}
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Type < out[b].Type })
	return out, nil
}

// Integration reads one of a project's integrations.
func (s *Store) Integration(ctx context.Context, groupID, typ string) (herald.Integration, error) {
	var i herald.Integration
	v, err := s.rdb.HGet(ctx, integrationsHash(groupID), typ).Bytes()
	if errors.Is(err, redis.Nil) {
		return i, errIntegrationNotFound(typ)
	}
	if err != nil {
		return i, err
	}
	return i, json.Unmarshal(v, &i)
}

// PutIntegration sets a project's integration of type typ to what change returns given the
// current one (nil when there is none), with the events change makes, atomically.
func (s *Store) PutIntegration(ctx context.Context, groupID, typ string, change func(current *herald.Integration) (herald.Integration, []herald.Event, error)) (herald.Integration, error) {
	h := integrationsHash(groupID)
	var out herald.Integration
	for range 20 {
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			var current *herald.Integration
			v, err := tx.HGet(ctx, h, typ).Bytes()
			switch {
			case errors.Is(err, redis.Nil):
			case err != nil:
				return err
			default:
				current = new(herald.Integration)
				if err := json.Unmarshal(v, current); err != nil {
					return err
				}
			}
			next, evs, err := change(current)
			if err != nil {
				return err
			}
			b, err := json.Marshal(next)
			if err != nil {
				return err
			}
			out = next
			_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
				pipe.HSet(ctx, h, typ, b)
				bumpProjectConfig(ctx, pipe, groupID)
				return recordEvents(ctx, pipe, events(groupID, ""), evs)
			})
			return err
		}, h)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		return out, err
	}
	return out, fmt.Errorf("store: integrations of %s kept changing", groupID)
}

// DeleteIntegration removes a project's integration of type typ and records ev.
func (s *Store) DeleteIntegration(ctx context.Context, groupID, typ string, ev herald.Event) error {
	var removed *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		removed = pipe.HDel(ctx, integrationsHash(groupID), typ)
		bumpProjectConfig(ctx, pipe, groupID)
		return recordEvent(ctx, pipe, events(groupID, ""), ev)
	})
	if err != nil {
		return err
	}
	if removed.Val() == 0 {
		// Nothing was there: take the event back, so that only real changes are recorded.
		evc := events(groupID, "")
		s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			evc.delDoc(ctx, pipe, ev.ID)
			pipe.ZRem(ctx, evc.index(), ev.ID)
			pipe.ZRem(ctx, evc.index("type", ev.EventTypeName), ev.ID)
			return nil
		})
		return errIntegrationNotFound(typ)
	}
	return nil
}
