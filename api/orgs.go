package api

import (
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

type nameRequest struct {
	Name  *string  `json:"name"`
	OrgID *string  `json:"orgId"`
	Tags  []string `json:"tags"`
}

func (in nameRequest) name() (string, error) {
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return "", herald.MissingAttribute("name")
	}
	n := strings.TrimSpace(*in.Name)
	if len(n) > 64 {
		return "", herald.InvalidAttribute("name", "name must be at most 64 characters.")
	}
	return n, nil
}

// POST /orgs
func (s *Server) createOrg(c *call) (reply, error) {
	in, err := globalRequest[nameRequest](c, herald.OwnGlobal)
	if err != nil {
		return reply{}, err
	}
	if in.OrgID != nil {
		return reply{}, herald.InvalidAttribute("orgId", "An organization has no orgId.")
	}
	if in.Tags != nil {
		return reply{}, herald.InvalidAttribute("tags", "An organization has no tags.")
	}
	name, err := in.name()
	if err != nil {
		return reply{}, err
	}
	o := herald.Org{ID: herald.NewID(c.now), Name: name, Created: herald.At(c.now)}
	ev := c.event(herald.EventOrgCreated, herald.Scope{})
	ev.Raw["orgId"], ev.Raw["name"] = o.ID, o.Name
	if err := s.store.CreateOrg(c.ctx, o, ev); err != nil {
		return reply{}, err
	}
	return c.one(http.StatusCreated, o, "/orgs/"+o.ID), nil
}

// POST /groups: a project in an organization, with the default alert configurations.
func (s *Server) createProject(c *call) (reply, error) {
	var in nameRequest
	if err := c.decode(&in); err != nil {
		return reply{}, err
	}
	if in.OrgID == nil || *in.OrgID == "" {
		return reply{}, herald.MissingAttribute("orgId")
	}
	if err := c.require(herald.OwnOrg, herald.Scope{OrgID: *in.OrgID}); err != nil {
		return reply{}, err
	}
	if _, err := s.store.Org(c.ctx, *in.OrgID); err != nil {
		return reply{}, err
	}
	name, err := in.name()
	if err != nil {
		return reply{}, err
	}
	tags := []string{}
	for _, t := range in.Tags {
		if t = strings.TrimSpace(t); t == "" {
			return reply{}, herald.InvalidAttribute("tags", "A tag must not be empty.")
		}
		tags = append(tags, t)
	}
	p, configs := herald.NewProject(name, *in.OrgID, tags, c.now)
	ev := c.event(herald.EventGroupCreated, herald.Scope{OrgID: p.OrgID})
	ev.GroupID = p.ID
	ev.Raw["name"] = p.Name
	var warnings []herald.Event // about its default configurations
	for _, cfg := range configs {
		warnings = append(warnings, c.undeliverable(cfg.AlertRule, c.configEvent(herald.EventAlertConfigUndeliverable, p, cfg))...)
	}
	if err := s.store.CreateProject(c.ctx, p, configs, ev, warnings...); err != nil {
		return reply{}, err
	}
	s.warnUndeliverable(warnings)
	return c.one(http.StatusCreated, p, "/groups/"+p.ID), nil
}

// GET /orgs/{orgId}
func (s *Server) getOrg(c *call) (reply, error) {
	o, err := c.org(herald.ReadOrg)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, o, "/orgs/"+o.ID), nil
}

// GET /groups/{groupId}
func (s *Server) getProject(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, p, "/groups/"+p.ID), nil
}

// GET /orgs: the organizations the caller may read (any role in one; a global role reads
// all), oldest first. A caller that may read none gets an empty list: a list shows what its
// caller may read, and is never refused.
func (s *Server) listOrgs(c *call) (reply, error) {
	all, orgs, _ := c.who.Reach(herald.ReadOrg)
	return paged(c, func(pg store.Page) ([]herald.Org, int, error) {
		if all {
			return s.store.Orgs(c.ctx, pg)
		}
		os, err := s.store.OrgsByID(c.ctx, orgs)
		page, total := pageOf(os, pg)
		return page, total, err
	}, func(o herald.Org) string { return "/orgs/" + o.ID })
}

// GET /groups: the projects the caller may read (those of its project roles, and every project
// of an organization it owns or reads; a global role reads all), oldest first; empty for a
// caller that may read none.
func (s *Server) listProjects(c *call) (reply, error) {
	all, orgs, groups := c.who.Reach(herald.ReadProject)
	return paged(c, func(pg store.Page) ([]herald.Project, int, error) {
		if all {
			return s.store.Projects(c.ctx, pg)
		}
		return s.store.ReadableProjects(c.ctx, orgs, groups, pg)
	}, func(p herald.Project) string { return "/groups/" + p.ID })
}
