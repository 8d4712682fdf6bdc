package api

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// Dead letters are a project's deliveries that failed for good (archived in asynq, also shown
// by asynqmon): listed for an operator, and replayed once the target is fixed. Those who may
// change the project's monitoring (its owners among them) may see and replay them.

// GET /groups/{groupId}/deadLetters
func (s *Server) listDeadLetters(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]dispatch.DeadLetter, int, error) {
		all, err := s.engine.DeadLetters(c.ctx, p.ID)
		page, total := pageOf(all, pg)
		return page, total, err
	}, func(dispatch.DeadLetter) string { return "/groups/" + p.ID + "/deadLetters" })
}

// POST /groups/{groupId}/deadLetters/{deliveryId}/replay: 204, the delivery is queued to be
// tried again now.
func (s *Server) replayDeadLetter(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if err := s.engine.ReplayDeadLetter(c.ctx, p.ID, c.param("deliveryId")); err != nil {
		return reply{}, err
	}
	return noContent(), nil
}
