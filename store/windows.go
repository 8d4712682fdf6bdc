package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errWindowNotFound(id string) error {
	return herald.NotFound(herald.CodeMaintenanceWindowNotFound, "maintenance window", id)
}

// Windows are indexed by end date, so the ones still visible (ending in the future) are one
// ZRANGEBYSCORE away.
func putWindow(ctx context.Context, pipe redis.Pipeliner, w herald.MaintenanceWindow) error {
	ws := windows(w.GroupID)
	if err := set(ctx, pipe, ws.doc(w.ID), w); err != nil {
		return err
	}
	pipe.ZAdd(ctx, ws.index(), redis.Z{Score: score(w.EndDate), Member: w.ID})
	return nil
}

// CreateWindow stores a new maintenance window and its audit event.
func (s *Store) CreateWindow(ctx context.Context, w herald.MaintenanceWindow, ev herald.Event) error {
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := putWindow(ctx, pipe, w); err != nil {
			return err
		}
		bumpProjectConfig(ctx, pipe, w.GroupID)
		return recordEvent(ctx, pipe, events(w.GroupID, ""), ev)
	})
	return err
}

// Window reads a maintenance window, whatever its dates.
func (s *Store) Window(ctx context.Context, groupID, id string) (herald.MaintenanceWindow, error) {
	return getByID[herald.MaintenanceWindow](ctx, s.rdb, windows(groupID).doc, id, errWindowNotFound)
}

// Windows lists a project's windows that end after now, soonest end first.
func (s *Store) Windows(ctx context.Context, groupID string, now time.Time, p Page) ([]herald.MaintenanceWindow, int, error) {
	ws := windows(groupID)
	return list[herald.MaintenanceWindow](ctx, s, ws, ws.index(), TimeRange{Min: now.Add(time.Second)}, false, p)
}

// UpdateWindow changes a maintenance window; change says which events it makes.
func (s *Store) UpdateWindow(ctx context.Context, groupID, id string, change func(*herald.MaintenanceWindow) ([]herald.Event, error)) (herald.MaintenanceWindow, error) {
	if !herald.ValidID(id) {
		return herald.MaintenanceWindow{}, errWindowNotFound(id)
	}
	ws := windows(groupID)
	return update(ctx, s, ws.doc(id), errWindowNotFound(id), events(groupID, ""), change,
		func(w herald.MaintenanceWindow, pipe redis.Pipeliner) {
			pipe.ZAdd(ctx, ws.index(), redis.Z{Score: score(w.EndDate), Member: w.ID})
			bumpProjectConfig(ctx, pipe, groupID)
		})
}

// DeleteWindow removes a maintenance window and records ev.
func (s *Store) DeleteWindow(ctx context.Context, groupID, id string, ev herald.Event) error {
	if _, err := s.Window(ctx, groupID, id); err != nil {
		return err
	}
	ws := windows(groupID)
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, ws.doc(id))
		pipe.ZRem(ctx, ws.index(), id)
		bumpProjectConfig(ctx, pipe, groupID)
		return recordEvent(ctx, pipe, events(groupID, ""), ev)
	})
	return err
}
