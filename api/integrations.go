package api

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// integrationType checks the caller may make a request of kind a in the {groupId} project and
// reads the {integrationType} path parameter, refused unless it names a type.
func (c *call) integrationType(a herald.Access) (herald.Project, string, error) {
	p, err := c.project(a)
	if err != nil {
		return p, "", err
	}
	typ := c.param("integrationType")
	if !herald.KnownIntegrationType(typ) {
		return p, "", herald.NotOneOf("integrationType", typ, herald.IntegrationTypes(), "Unknown integration type %s.", typ)
	}
	return p, typ, nil
}

func integrationPath(groupID, typ string) string {
	return "/groups/" + groupID + "/integrations/" + typ
}

// integrationEvent is an audit event about p's integration of type typ. It names the type
// only: an integration's fields are secrets, and no secret goes into an event.
func (c *call) integrationEvent(eventType string, p herald.Project, typ string) herald.Event {
	ev := c.event(eventType, p.Scope())
	ev.Raw["integrationType"] = typ
	return ev
}

// integrationList answers the page the query asks for of p's integrations, masked, sorted by
// type. A project has at most one integration of each type, so the page is cut from the whole
// list.
func (c *call) integrationList(p herald.Project) (reply, error) {
	return paged(c, func(pg store.Page) ([]map[string]any, int, error) {
		all, err := c.s.store.Integrations(c.ctx, p.ID)
		page, total := pageOf(all, pg)
		return views(page, herald.Integration.View), total, err
	}, func(v map[string]any) string {
		return integrationPath(p.ID, v["type"].(string))
	})
}

// GET /groups/{groupId}/integrations
func (s *Server) listIntegrations(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.integrationList(p)
}

// GET /groups/{groupId}/integrations/{integrationType}
func (s *Server) getIntegration(c *call) (reply, error) {
	p, typ, err := c.integrationType(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	in, err := s.store.Integration(c.ctx, p.ID, typ)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, in.View(), integrationPath(p.ID, typ)), nil
}

// PUT /groups/{groupId}/integrations/{integrationType}: add the type's configuration, or
// change the given fields of the existing one.
func (s *Server) putIntegration(c *call) (reply, error) {
	return c.configureIntegration(true, http.StatusOK)
}

// POST /groups/{groupId}/integrations/{integrationType}: add the type's configuration; one
// that exists is a conflict.
func (s *Server) addIntegration(c *call) (reply, error) {
	return c.configureIntegration(false, http.StatusCreated)
}

// configureIntegration serves PUT (change allowed) and POST. Both answer the list of all the
// project's integrations, as the document says.
func (c *call) configureIntegration(mayChange bool, status int) (reply, error) {
	p, typ, err := c.integrationType(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if _, err := c.page(); err != nil { // refused before anything is written
		return reply{}, err
	}
	// A map, not a struct: which fields are allowed depends on the type, which
	// herald.ApplyIntegration knows.
	var body map[string]any
	if err := c.decode(&body); err != nil {
		return reply{}, err
	}
	_, err = c.s.store.PutIntegration(c.ctx, p.ID, typ, func(current *herald.Integration) (herald.Integration, []herald.Event, error) {
		if current != nil && !mayChange {
			return herald.Integration{}, nil, herald.Errorf(herald.KindConflict, herald.CodeIntegrationAlreadyExists, []any{typ},
				"The project already has an integration of type %s.", typ)
		}
		next, err := herald.ApplyIntegration(typ, body, current)
		if err != nil {
			return herald.Integration{}, nil, err
		}
		return next, []herald.Event{c.integrationEvent(herald.EventIntegrationConfigured, p, typ)}, nil
	})
	if err != nil {
		return reply{}, err
	}
	rep, err := c.integrationList(p)
	rep.status = status
	return rep, err
}

// DELETE /groups/{groupId}/integrations/{integrationType}
func (s *Server) deleteIntegration(c *call) (reply, error) {
	p, typ, err := c.integrationType(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if err := s.store.DeleteIntegration(c.ctx, p.ID, typ, c.integrationEvent(herald.EventIntegrationRemoved, p, typ)); err != nil {
		return reply{}, err
	}
	return noContent(), nil
}
