package api

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// alertConfigRequest is the body of a create or replace of a project or global alert
// configuration. The read-only fields of a configuration read back are accepted (so a read can
// be edited and written back) but must not change (readOnlyFields): a create, which has none
// yet, takes none of them; updated, which the replace itself changes, and links and the
// deprecated typeName are ignored.
type alertConfigRequest struct {
	herald.AlertRuleInput
	ID       *string         `json:"id"`
	GroupID  *string         `json:"groupId"`
	Created  *herald.Time    `json:"created"`
	Updated  *herald.Time    `json:"updated"`
	Links    json.RawMessage `json:"links"`
	TypeName json.RawMessage `json:"typeName"`
	// Global configurations only.
	ForAllGroups *bool    `json:"forAllGroups"`
	GroupIDs     []string `json:"groupIds"`
	Tags         []string `json:"tags"`
}

// readOnly refuses a read-only field given with another value than the resource has.
func readOnly(name string, given *string, actual string) error {
	if given != nil && *given != actual {
		return herald.Invalid(herald.CodeAttributeReadOnly, name, "Attribute %s is read-only.", name)
	}
	return nil
}

// readOnlyFields refuses the read-only fields of in given with other values than the
// configuration has: its id and created (currentID "": the request creates it, and none of
// them, nor updated, may be given); updated, which a replace itself changes, is not compared.
func (in alertConfigRequest) readOnlyFields(currentID string, created herald.Time) error {
	creating := currentID == ""
	for _, f := range []struct {
		name    string
		changed bool
	}{
		{"id", in.ID != nil && (creating || *in.ID != currentID)},
		{"created", in.Created != nil && (creating || !in.Created.Equal(created.Time))},
		{"updated", in.Updated != nil && creating},
	} {
		if f.changed {
			return herald.Invalid(herald.CodeAttributeReadOnly, f.name, "Attribute %s is read-only.", f.name)
		}
	}
	return nil
}

// projectRule validates the rule of a configuration request for project p that creates a
// configuration (current is zero) or replaces current, whose secrets a request may give back
// masked.
func (c *call) projectRule(p herald.Project, in alertConfigRequest, current herald.AlertConfig) (herald.AlertRule, error) {
	switch {
	case in.ForAllGroups != nil:
		return herald.AlertRule{}, herald.InvalidAttribute("forAllGroups", "forAllGroups applies only to global alert configurations.")
	case in.GroupIDs != nil:
		return herald.AlertRule{}, herald.InvalidAttribute("groupIds", "groupIds applies only to global alert configurations.")
	case in.Tags != nil:
		return herald.AlertRule{}, herald.InvalidAttribute("tags", "tags applies only to global alert configurations.")
	}
	if err := in.readOnlyFields(current.ID, current.Created); err != nil {
		return herald.AlertRule{}, err
	}
	if err := readOnly("groupId", in.GroupID, p.ID); err != nil {
		return herald.AlertRule{}, err
	}
	integrations, err := c.s.store.Integrations(c.ctx, p.ID)
	if err != nil {
		return herald.AlertRule{}, err
	}
	has := map[string]bool{}
	for _, i := range integrations {
		has[i.Type] = true
	}
	return in.Validate(herald.NotificationRules{Integrations: func(t string) bool { return has[t] }, Current: current.Notifications})
}

// alertConfig checks the caller may make a request of kind a in the {groupId} project and reads
// the project's {alertConfigId} configuration.
func (c *call) alertConfig(a herald.Access) (herald.Project, herald.AlertConfig, error) {
	return projectItem(c, a, "alertConfigId", c.s.store.AlertConfig)
}

func alertConfigPath(c herald.AlertConfig) string {
	return "/groups/" + c.GroupID + "/alertConfigs/" + c.ID
}

// configEvent is an audit event about project configuration cfg.
func (c *call) configEvent(typ string, p herald.Project, cfg herald.AlertConfig) herald.Event {
	ev := c.event(typ, p.Scope())
	ev.AlertConfigID = cfg.ID
	ev.Raw["eventTypeName"], ev.Raw["enabled"] = cfg.EventTypeName, cfg.Enabled
	return ev
}

// configEvents are the events of a change of type typ to project configuration cfg: its own,
// then the warning that some of its notifications reach nobody, if they do.
func (c *call) configEvents(typ string, p herald.Project, cfg herald.AlertConfig) []herald.Event {
	return append([]herald.Event{c.configEvent(typ, p, cfg)}, c.undeliverable(cfg.AlertRule, c.configEvent(herald.EventAlertConfigUndeliverable, p, cfg))...)
}

// GET /groups/{groupId}/alertConfigs
func (s *Server) listAlertConfigs(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.AlertConfig, int, error) {
		configs, total, err := s.store.AlertConfigs(c.ctx, p.ID, pg)
		return views(configs, herald.AlertConfig.Masked), total, err
	}, alertConfigPath)
}

// GET /groups/{groupId}/alertConfigs/{alertConfigId}
func (s *Server) getAlertConfig(c *call) (reply, error) {
	_, cfg, err := c.alertConfig(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, cfg.Masked(), alertConfigPath(cfg)), nil
}

// POST /groups/{groupId}/alertConfigs
func (s *Server) createAlertConfig(c *call) (reply, error) {
	p, in, err := projectRequest[alertConfigRequest](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	rule, err := c.projectRule(p, in, herald.AlertConfig{})
	if err != nil {
		return reply{}, err
	}
	cfg := herald.AlertConfig{ID: herald.NewID(c.now), GroupID: p.ID, Created: herald.At(c.now), Updated: herald.At(c.now), AlertRule: rule}
	evs := c.configEvents(herald.EventAlertConfigAdded, p, cfg)
	if err := s.store.CreateAlertConfig(c.ctx, cfg, evs...); err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(evs)
	return c.one(http.StatusCreated, cfg.Masked(), alertConfigPath(cfg)), nil
}

// PUT /groups/{groupId}/alertConfigs/{alertConfigId}: replace everything but the identity.
func (s *Server) replaceAlertConfig(c *call) (reply, error) {
	p, in, err := projectRequest[alertConfigRequest](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	// Validated inside the update: the secrets a masked value stands for are those stored at the
	// moment of writing.
	var evs []herald.Event
	cfg, err := s.store.UpdateAlertConfig(c.ctx, p.ID, c.param("alertConfigId"), func(cfg *herald.AlertConfig) ([]herald.Event, error) {
		rule, err := c.projectRule(p, in, *cfg)
		if err != nil {
			return nil, err
		}
		cfg.AlertRule, cfg.Updated = rule, herald.At(c.now)
		evs = c.configEvents(herald.EventAlertConfigChanged, p, *cfg)
		return evs, nil
	})
	if err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(evs)
	// An edited configuration cancels the alerts it opened (docs/lifecycle.md#states).
	if err := s.engine.ConfigChanged(c.ctx, p.ID, cfg.ID, false); err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, cfg.Masked(), alertConfigPath(cfg)), nil
}

// enabledRequest is the body of the PATCH that enables or disables a configuration.
type enabledRequest struct {
	Enabled *bool `json:"enabled"`
}

// enabledChange decodes the body of a PATCH that enables or disables a configuration: the flag
// and the type of the event its change makes.
func (c *call) enabledChange() (bool, string, error) {
	var in enabledRequest
	if err := c.decode(&in); err != nil {
		return false, "", err
	}
	if in.Enabled == nil {
		return false, "", herald.MissingAttribute("enabled")
	}
	if *in.Enabled {
		return true, herald.EventAlertConfigEnabled, nil
	}
	return false, herald.EventAlertConfigDisabled, nil
}

// PATCH /groups/{groupId}/alertConfigs/{alertConfigId}: the enabled flag only.
func (s *Server) patchAlertConfig(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	enabled, typ, err := c.enabledChange()
	if err != nil {
		return reply{}, err
	}
	var evs []herald.Event
	cfg, err := s.store.UpdateAlertConfig(c.ctx, p.ID, c.param("alertConfigId"), func(cfg *herald.AlertConfig) ([]herald.Event, error) {
		if evs = nil; cfg.Enabled == enabled {
			return nil, nil
		}
		cfg.Enabled, cfg.Updated = enabled, herald.At(c.now)
		evs = c.configEvents(typ, p, *cfg)
		return evs, nil
	})
	if err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(evs)
	if !enabled {
		if err := s.engine.ConfigChanged(c.ctx, p.ID, cfg.ID, false); err != nil {
			return reply{}, err
		}
	}
	return c.one(http.StatusOK, cfg.Masked(), alertConfigPath(cfg)), nil
}

// DELETE /groups/{groupId}/alertConfigs/{alertConfigId}
func (s *Server) deleteAlertConfig(c *call) (reply, error) {
	p, cfg, err := c.alertConfig(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if err := s.store.DeleteAlertConfig(c.ctx, p.ID, cfg.ID, c.configEvent(herald.EventAlertConfigDeleted, p, cfg)); err != nil {
		return reply{}, err
	}
	if err := s.engine.ConfigChanged(c.ctx, p.ID, cfg.ID, false); err != nil {
		return reply{}, err
	}
	return noContent(), nil
}

// GET /groups/{groupId}/alertConfigs/{alertConfigId}/alerts: the configuration's open alerts.
func (s *Server) listConfigAlerts(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Alert, int, error) {
		cfg, err := s.store.AlertConfig(c.ctx, p.ID, c.param("alertConfigId"))
		if err != nil {
			return nil, 0, err
		}
		return s.store.ConfigAlerts(c.ctx, p.ID, cfg.ID, pg)
	}, alertPath)
}

// alertPath is the path of a project alert.
func alertPath(a herald.Alert) string { return "/groups/" + a.GroupID + "/alerts/" + a.ID }
