package api

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Delivery attempts are what an operator reads to see what Herald tried and how it went: each
// try at a notice, with its kind, outcome, status code and duration, newest first. A project
// keeps its last store.AttemptsKept.

// GET /groups/{groupId}/deliveries
func (s *Server) listDeliveries(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.attempts(p, "")
}

// GET /groups/{groupId}/alerts/{alertId}/deliveries: the attempts for one alert (project or
// global) of the project.
func (s *Server) listAlertDeliveries(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	id := c.param("alertId")
	if _, err := s.store.Alert(c.ctx, p.ID, id); herald.IsNotFound(err) {
		if a, gerr := s.store.GlobalAlert(c.ctx, id); gerr != nil || a.GroupID != p.ID {
			return reply{}, err
		}
	} else if err != nil {
		return reply{}, err
	}
	return c.attempts(p, id)
}

func (c *call) attempts(p herald.Project, alertID string) (reply, error) {
	return paged(c, func(pg store.Page) ([]store.Attempt, int, error) {
		return c.s.store.Attempts(c.ctx, p.ID, alertID, pg)
	}, func(a store.Attempt) string {
		return "/groups/" + p.ID + "/alerts/" + a.AlertID + "/deliveries"
	})
}
