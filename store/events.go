package store

import (
	"context"
	"slices"

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

// An event is listed once, in the index of its type (eventsOfType), and its type is in its
// scope's set of types (eventTypesSet): the list of all events is those indexes merged
// (listMerged), as the list of all alerts is their statuses'. An index of all events besides
// cost each event another sorted-set entry, some 110 bytes, and every open alert has its
// opening event.
//
// Events written before were listed twice: in an index of all events (c.index()) and in one of
// their type (c.index("type", ...)). They are listed from there still, the index of all with
// the types' new indexes and their type's old index with its new one (no event is in both
// layouts), and purged from there.

// eventsOfType is the index of a scope's events of one type.
func eventsOfType(c collection, eventType string) string { return c.index("of", eventType) }

// eventTypesSet is the set of the types of a scope's events (each with its eventsOfType).
func eventTypesSet(c collection) string { return key(c.tag, c.name+"types") }

// eventIndexes are the indexes that together list every event of c once: each type's, and
// the index of all events written before.
func (s *Store) eventIndexes(ctx context.Context, c collection) ([]string, error) {
	types, err := s.rdb.SMembers(ctx, eventTypesSet(c)).Result()
	if err != nil {
		return nil, err
	}
	slices.Sort(types)
	indexes := []string{c.index()}
	for _, t := range types {
		indexes = append(indexes, eventsOfType(c, t))
	}
	return indexes, nil
}

// Events lists the events of a scope, newest first.
func (s *Store) Events(ctx context.Context, sc EventScope, f EventFilter, p Page) ([]herald.Event, int, error) {
	c := events(sc.GroupID, sc.OrgID)
	indexes := []string{eventsOfType(c, f.EventType), c.index("type", f.EventType)}
	if f.EventType == "" {
		var err error
		if indexes, err = s.eventIndexes(ctx, c); err != nil {
			return nil, 0, err
		}
	}
	return listMerged[herald.Event](ctx, s, c, indexes, f.Created, p)
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
	return e, decodeDocOf(events(sc.GroupID, sc.OrgID), id, []byte(str), &e)
}

// RecordEvent records one event in its scope.
func (s *Store) RecordEvent(ctx context.Context, sc EventScope, e herald.Event) error {
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		return recordEvent(ctx, pipe, events(sc.GroupID, sc.OrgID), e)
	})
	return err
}
