package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errEventNotFound(id string) error { return herald.NotFound(herald.CodeEventNotFound, "event", id) }

// EventScope names whose events: a project's (GroupID), an organization's (OrgID), or the
// platform's (neither).
type EventScope struct{ GroupID, OrgID string }

// EventFilter selects events by type ("" for all) and creation time.
type EventFilter struct {
	EventType string
	Created   TimeRange
}

// Events lists the events of a scope, newest first.
func (s *Store) Events(ctx context.Context, sc EventScope, f EventFilter, p Page) ([]herald.Event, int, error) {
	c := events(sc.GroupID, sc.OrgID)
	index := c.index()
	if f.EventType != "" {
		index = c.index("type", f.EventType)
	}
	return list[herald.Event](ctx, s, c, index, f.Created, true, p)
}

// Event reads one event of a scope.
func (s *Store) Event(ctx context.Context, sc EventScope, id string) (herald.Event, error) {
	var e herald.Event
	if !herald.ValidID(id) {
		return e, errEventNotFound(id)
	}
	vals, err := s.docs(ctx, events(sc.GroupID, sc.OrgID), []string{id})
	if err != nil {
		return e, err
	}
	str, ok := vals[0].(string)
	if !ok {
		return e, errEventNotFound(id)
	}
	return e, decodeDocOf(id, []byte(str), &e)
}

// RecordEvent records one event in its scope.
func (s *Store) RecordEvent(ctx context.Context, sc EventScope, e herald.Event) error {
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		return recordEvent(ctx, pipe, events(sc.GroupID, sc.OrgID), e)
	})
	return err
}
