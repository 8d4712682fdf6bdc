package api

import (
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

func globalAlertConfigPath(c herald.GlobalAlertConfig) string { return "/globalAlertConfigs/" + c.ID }

// globalConfigEvent is an audit event about global configuration cfg.
func (c *call) globalConfigEvent(typ string, cfg herald.GlobalAlertConfig) herald.Event {
	ev := c.event(typ, herald.Scope{})
	ev.AlertConfigID = cfg.ID
	ev.Raw["eventTypeName"], ev.Raw["enabled"] = cfg.EventTypeName, cfg.Enabled
	return ev
}

// globalConfigEvents are the events of a change of type typ to global configuration cfg, as
// configEvents.
func (c *call) globalConfigEvents(typ string, cfg herald.GlobalAlertConfig) []herald.Event {
	return append([]herald.Event{c.globalConfigEvent(typ, cfg)}, c.undeliverable(cfg.AlertRule, c.globalConfigEvent(herald.EventAlertConfigUndeliverable, cfg))...)
}

// globalConfig validates a request creating a global configuration and returns the new
// configuration. It covers either all projects, narrowed by tags, or the existing projects
// named in groupIds, never both: the document's rule for forAllGroups. An empty groupIds or
// tags array counts as absent, so that what a read shows can be written back.
func (c *call) globalConfig(in alertConfigRequest) (herald.GlobalAlertConfig, error) {
	var cfg herald.GlobalAlertConfig
	if err := in.readOnlyFields("", herald.Time{}); err != nil {
		return cfg, err
	}
	if in.GroupID != nil {
		return cfg, herald.InvalidAttribute("groupId", "A global alert configuration names its projects in groupIds, not groupId.")
	}
	cfg.ForAllGroups = in.ForAllGroups != nil && *in.ForAllGroups
	if cfg.ForAllGroups {
		if len(in.GroupIDs) > 0 {
			return cfg, herald.InvalidAttribute("groupIds", "groupIds cannot be used when forAllGroups is true.")
		}
		for _, t := range in.Tags {
			if t = strings.TrimSpace(t); t == "" {
				return cfg, herald.InvalidAttribute("tags", "A tag must not be empty.")
			}
			cfg.Tags = append(cfg.Tags, t)
		}
	} else {
		if len(in.Tags) > 0 {
			return cfg, herald.InvalidAttribute("tags", "tags can be used only when forAllGroups is true.")
		}
		if len(in.GroupIDs) == 0 {
			return cfg, herald.MissingAttribute("groupIds")
		}
		for _, id := range in.GroupIDs {
			_, err := c.s.store.Project(c.ctx, id)
			if herald.IsNotFound(err) {
				return cfg, herald.InvalidAttribute("groupIds", "Project %s does not exist.", id)
			}
			if err != nil {
				return cfg, err
			}
		}
		cfg.GroupIDs = in.GroupIDs
	}
	rule, err := in.Validate(herald.NotificationRules{Global: true})
	if err != nil {
		return cfg, err
	}
	cfg.ID, cfg.Created, cfg.Updated, cfg.AlertRule = herald.NewID(c.now), herald.At(c.now), herald.At(c.now), rule
	return cfg, nil
}

// globalAlertConfig checks the caller may change global monitoring and reads the
// {alertConfigId} global configuration.
func (c *call) globalAlertConfig() (herald.GlobalAlertConfig, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return herald.GlobalAlertConfig{}, err
	}
	return c.s.store.GlobalAlertConfig(c.ctx, c.param("alertConfigId"))
}

// GET /globalAlertConfigs
func (s *Server) listGlobalAlertConfigs(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.GlobalAlertConfig, int, error) {
		configs, total, err := s.store.GlobalAlertConfigs(c.ctx, pg)
		return views(configs, herald.GlobalAlertConfig.Masked), total, err
	}, globalAlertConfigPath)
}

// GET /globalAlertConfigs/{alertConfigId}
func (s *Server) getGlobalAlertConfig(c *call) (reply, error) {
	cfg, err := c.globalAlertConfig()
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, cfg.Masked(), globalAlertConfigPath(cfg)), nil
}

// POST /globalAlertConfigs
func (s *Server) createGlobalAlertConfig(c *call) (reply, error) {
	in, err := globalRequest[alertConfigRequest](c, herald.MonitorGlobal)
	if err != nil {
		return reply{}, err
	}
	cfg, err := c.globalConfig(in)
	if err != nil {
		return reply{}, err
	}
	evs := c.globalConfigEvents(herald.EventAlertConfigAdded, cfg)
	if err := s.store.CreateGlobalAlertConfig(c.ctx, cfg, evs...); err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(evs)
	return c.one(http.StatusCreated, cfg.Masked(), globalAlertConfigPath(cfg)), nil
}

// PATCH /globalAlertConfigs/{alertConfigId}: the enabled flag only.
func (s *Server) patchGlobalAlertConfig(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	enabled, typ, err := c.enabledChange()
	if err != nil {
		return reply{}, err
	}
	var evs []herald.Event
	cfg, err := s.store.UpdateGlobalAlertConfig(c.ctx, c.param("alertConfigId"), func(cfg *herald.GlobalAlertConfig) ([]herald.Event, error) {
		if evs = nil; cfg.Enabled == enabled {
			return nil, nil
		}
		cfg.Enabled, cfg.Updated = enabled, herald.At(c.now)
		evs = c.globalConfigEvents(typ, *cfg)
		return evs, nil
	})
	if err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(evs)
	if !enabled {
		if err := s.engine.ConfigChanged(c.ctx, "", cfg.ID, true); err != nil {
			return reply{}, err
		}
	}
	return c.one(http.StatusOK, cfg.Masked(), globalAlertConfigPath(cfg)), nil
}

// DELETE /globalAlertConfigs/{alertConfigId}
func (s *Server) deleteGlobalAlertConfig(c *call) (reply, error) {
	cfg, err := c.globalAlertConfig()
	if err != nil {
		return reply{}, err
	}
	if err := s.store.DeleteGlobalAlertConfig(c.ctx, cfg.ID, c.globalConfigEvent(herald.EventAlertConfigDeleted, cfg)); err != nil {
		return reply{}, err
	}
	if err := s.engine.ConfigChanged(c.ctx, "", cfg.ID, true); err != nil {
		return reply{}, err
	}
	return noContent(), nil
}

// GET /globalAlertConfigs/{alertConfigId}/alerts: the configuration's open alerts.
func (s *Server) listGlobalConfigAlerts(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Alert, int, error) {
		cfg, err := s.store.GlobalAlertConfig(c.ctx, c.param("alertConfigId"))
		if err != nil {
			return nil, 0, err
		}
		return s.store.GlobalConfigAlerts(c.ctx, cfg.ID, pg)
	}, globalAlertPath)
}
