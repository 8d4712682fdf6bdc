package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errAlertConfigNotFound(id string) error {
	return herald.NotFound(herald.CodeAlertConfigNotFound, "alert configuration", id)
}

// putAlertConfig queues writing a configuration and its index entries.
func putAlertConfig(ctx context.Context, pipe redis.Pipeliner, c herald.AlertConfig) error {
	cs := alertConfigs(c.GroupID)
	if err := set(ctx, pipe, cs.doc(c.ID), c); err != nil {
		return err
	}
	z := redis.Z{Score: score(c.Created), Member: c.ID}
	pipe.ZAdd(ctx, cs.index(), z)
	pipe.ZAdd(ctx, cs.index("type", c.EventTypeName), z)
	return nil
}

// CreateAlertConfig stores a new project configuration and its audit events.
func (s *Store) CreateAlertConfig(ctx context.Context, c herald.AlertConfig, evs ...herald.Event) error {
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := putAlertConfig(ctx, pipe, c); err != nil {
			return err
		}
		bumpProjectConfig(ctx, pipe, c.GroupID)
		return recordEvents(ctx, pipe, events(c.GroupID, ""), evs)
	})
	return err
}

// AlertConfig reads a project configuration.
func (s *Store) AlertConfig(ctx context.Context, groupID, id string) (herald.AlertConfig, error) {
	return getByID[herald.AlertConfig](ctx, s.rdb, alertConfigs(groupID).doc, id, errAlertConfigNotFound)
}

// AlertConfigs lists a project's configurations, oldest first.
func (s *Store) AlertConfigs(ctx context.Context, groupID string, p Page) ([]herald.AlertConfig, int, error) {
	cs := alertConfigs(groupID)
	return list[herald.AlertConfig](ctx, s, cs, cs.index(), TimeRange{}, false, p)
}

// AlertConfigsOfType lists a project's configurations for one event type, oldest first.
func (s *Store) AlertConfigsOfType(ctx context.Context, groupID, eventType string, p Page) ([]herald.AlertConfig, int, error) {
	cs := alertConfigs(groupID)
	return list[herald.AlertConfig](ctx, s, cs, cs.index("type", eventType), TimeRange{}, false, p)
}

// UpdateAlertConfig changes a project configuration; change says which events it makes.
func (s *Store) UpdateAlertConfig(ctx context.Context, groupID, id string, change func(*herald.AlertConfig) ([]herald.Event, error)) (herald.AlertConfig, error) {
	if !herald.ValidID(id) {
		return herald.AlertConfig{}, errAlertConfigNotFound(id)
	}
	cs := alertConfigs(groupID)
	var oldType string
	return update(ctx, s, cs.doc(id), errAlertConfigNotFound(id), events(groupID, ""),
		func(c *herald.AlertConfig) ([]herald.Event, error) {
			oldType = c.EventTypeName
			return change(c)
		},
		func(c herald.AlertConfig, pipe redis.Pipeliner) {
			bumpProjectConfig(ctx, pipe, groupID)
			if c.EventTypeName != oldType {
				pipe.ZRem(ctx, cs.index("type", oldType), c.ID)
				pipe.ZAdd(ctx, cs.index("type", c.EventTypeName), redis.Z{Score: score(c.Created), Member: c.ID})
			}
		})
}

// DeleteAlertConfig removes a project configuration and records ev.
func (s *Store) DeleteAlertConfig(ctx context.Context, groupID, id string, ev herald.Event) error {
	c, err := s.AlertConfig(ctx, groupID, id)
	if err != nil {
		return err
	}
	cs := alertConfigs(groupID)
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, cs.doc(id))
		pipe.ZRem(ctx, cs.index(), id)
		pipe.ZRem(ctx, cs.index("type", c.EventTypeName), id)
		bumpProjectConfig(ctx, pipe, groupID)
		return recordEvent(ctx, pipe, events(groupID, ""), ev)
	})
	return err
}

// CreateGlobalAlertConfig stores a new global configuration and its audit events.
func (s *Store) CreateGlobalAlertConfig(ctx context.Context, c herald.GlobalAlertConfig, evs ...herald.Event) error {
	cs := globalAlertConfigs()
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, cs.doc(c.ID), c); err != nil {
			return err
		}
		z := redis.Z{Score: score(c.Created), Member: c.ID}
		pipe.ZAdd(ctx, cs.index(), z)
		pipe.ZAdd(ctx, cs.index("type", c.EventTypeName), z)
		bumpGlobalConfig(ctx, pipe)
		return recordEvents(ctx, pipe, events("", ""), evs)
	})
	return err
}

// GlobalAlertConfig reads a global configuration.
func (s *Store) GlobalAlertConfig(ctx context.Context, id string) (herald.GlobalAlertConfig, error) {
	return getByID[herald.GlobalAlertConfig](ctx, s.rdb, globalAlertConfigs().doc, id, errAlertConfigNotFound)
}

// GlobalAlertConfigs lists global configurations, oldest first.
func (s *Store) GlobalAlertConfigs(ctx context.Context, p Page) ([]herald.GlobalAlertConfig, int, error) {
	cs := globalAlertConfigs()
	return list[herald.GlobalAlertConfig](ctx, s, cs, cs.index(), TimeRange{}, false, p)
}

// GlobalAlertConfigsOfType lists global configurations for one event type, oldest first.
func (s *Store) GlobalAlertConfigsOfType(ctx context.Context, eventType string, p Page) ([]herald.GlobalAlertConfig, int, error) {
	cs := globalAlertConfigs()
	return list[herald.GlobalAlertConfig](ctx, s, cs, cs.index("type", eventType), TimeRange{}, false, p)
}

// UpdateGlobalAlertConfig changes a global configuration; change says which events it makes.
func (s *Store) UpdateGlobalAlertConfig(ctx context.Context, id string, change func(*herald.GlobalAlertConfig) ([]herald.Event, error)) (herald.GlobalAlertConfig, error) {
	if !herald.ValidID(id) {
		return herald.GlobalAlertConfig{}, errAlertConfigNotFound(id)
	}
	return update(ctx, s, globalAlertConfigs().doc(id), errAlertConfigNotFound(id), events("", ""), change,
		func(_ herald.GlobalAlertConfig, pipe redis.Pipeliner) { bumpGlobalConfig(ctx, pipe) })
}

// DeleteGlobalAlertConfig removes a global configuration and records ev.
func (s *Store) DeleteGlobalAlertConfig(ctx context.Context, id string, ev herald.Event) error {
	c, err := s.GlobalAlertConfig(ctx, id)
	if err != nil {
		return err
	}
	cs := globalAlertConfigs()
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, cs.doc(id))
		pipe.ZRem(ctx, cs.index(), id)
		pipe.ZRem(ctx, cs.index("type", c.EventTypeName), id)
		bumpGlobalConfig(ctx, pipe)
		return recordEvent(ctx, pipe, events("", ""), ev)
	})
	return err
}
