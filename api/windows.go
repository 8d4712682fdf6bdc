package api

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// An ended window is, to the API, gone: it is not listed, and reading, changing or deleting
// it is answered as for an unknown id (the document: a window can be read and updated only
// while its end date is in the future).

func windowPath(w herald.MaintenanceWindow) string {
	return "/groups/" + w.GroupID + "/maintenanceWindows/" + w.ID
}

func windowNotFound(id string) error {
	return herald.NotFound(herald.CodeMaintenanceWindowNotFound, "maintenance window", id)
}

// windowEvent is an audit event about window w of project p.
func (c *call) windowEvent(typ string, p herald.Project, w herald.MaintenanceWindow) herald.Event {
	ev := c.event(typ, p.Scope())
	ev.MaintenanceWindowID = w.ID
	return ev
}

// visibleWindow checks the caller may make a request of kind a in the {groupId} project and
// reads the project's {windowId} window, refusing one that has ended.
func (c *call) visibleWindow(a herald.Access) (herald.Project, herald.MaintenanceWindow, error) {
	p, w, err := projectItem(c, a, "windowId", c.s.store.Window)
	if err == nil && !w.Visible(c.now) {
		err = windowNotFound(c.param("windowId"))
	}
	return p, w, err
}

// GET /groups/{groupId}/maintenanceWindows: the windows that have not ended, soonest end first.
func (s *Server) listWindows(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.MaintenanceWindow, int, error) {
		return s.store.Windows(c.ctx, p.ID, c.now, pg)
	}, windowPath)
}

// POST /groups/{groupId}/maintenanceWindows (the document also shows a trailing slash). The
// document answers 200, not 201.
func (s *Server) createWindow(c *call) (reply, error) {
	p, in, err := projectRequest[herald.MaintenanceWindowInput](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	w := herald.MaintenanceWindow{ID: herald.NewID(c.now), GroupID: p.ID, Created: herald.At(c.now), Updated: herald.At(c.now)}
	if err := in.Apply(&w, true, c.now); err != nil {
		return reply{}, err
	}
	if err := s.store.CreateWindow(c.ctx, w, c.windowEvent(herald.EventWindowAdded, p, w)); err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, w, windowPath(w)), nil
}

// GET /groups/{groupId}/maintenanceWindows/{windowId}
func (s *Server) getWindow(c *call) (reply, error) {
	_, w, err := c.visibleWindow(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, w, windowPath(w)), nil
}

// PATCH /groups/{groupId}/maintenanceWindows/{windowId}: the given fields only. The document
// answers 201.
func (s *Server) updateWindow(c *call) (reply, error) {
	p, in, err := projectRequest[herald.MaintenanceWindowInput](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	id := c.param("windowId")
	// Visibility and validation are checked on the stored window inside the change, so that a
	// window ending meanwhile is not revived and a refused request writes nothing.
	w, err := s.store.UpdateWindow(c.ctx, p.ID, id, func(w *herald.MaintenanceWindow) ([]herald.Event, error) {
		if !w.Visible(c.now) {
			return nil, windowNotFound(id)
		}
		if err := in.Apply(w, false, c.now); err != nil {
			return nil, err
		}
		w.Updated = herald.At(c.now)
		return []herald.Event{c.windowEvent(herald.EventWindowChanged, p, *w)}, nil
	})
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusCreated, w, windowPath(w)), nil
}

// DELETE /groups/{groupId}/maintenanceWindows/{windowId}
func (s *Server) deleteWindow(c *call) (reply, error) {
	p, w, err := c.visibleWindow(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if err := s.store.DeleteWindow(c.ctx, p.ID, w.ID, c.windowEvent(herald.EventWindowDeleted, p, w)); err != nil {
		return reply{}, err
	}
	return noContent(), nil
}
