package api

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// eventFilter reads the filters of an event list: eventType and the inclusive creation range
// minDate..maxDate.
func (c *call) eventFilter() (store.EventFilter, error) {
	var f store.EventFilter
	f.EventType = c.r.URL.Query().Get("eventType")
	if f.EventType != "" && !eventTypeToken(f.EventType) {
		return f, herald.Invalid(herald.CodeInvalidQueryParameter, "eventType", "Query parameter eventType must be an event type name such as HOST_DOWN.")
	}
	var err error
	if f.Created.Min, err = c.queryTime("minDate"); err != nil {
		return f, err
	}
	if f.Created.Max, err = c.queryTime("maxDate"); err != nil {
		return f, err
	}
	if !f.Created.Min.IsZero() && !f.Created.Max.IsZero() && f.Created.Min.After(f.Created.Max) {
		return f, herald.Invalid(herald.CodeInvalidQueryParameter, "minDate", "Query parameter minDate must not be after maxDate.")
	}
	return f, nil
}

// eventTypeToken: event type names are upper-case words joined by underscores; anything else
// is a mistake the caller should hear of rather than an empty list.
func eventTypeToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// withoutRaw hides an event's internal record unless the caller asked for it with includeRaw.
func (c *call) withoutRaw(e herald.Event) herald.Event {
	if !queryBool(c.r, "includeRaw") {
		e.Raw = nil
	}
	return e
}

// listEvents answers a filtered page of the events of scope sc, newest first; prefix is the
// path the events' own ids go under.
func (c *call) listEvents(sc store.EventScope, prefix string) (reply, error) {
	f, err := c.eventFilter()
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Event, int, error) {
		evs, total, err := c.s.store.Events(c.ctx, sc, f, pg)
		return views(evs, c.withoutRaw), total, err
	}, func(e herald.Event) string { return prefix + e.ID })
}

// oneEvent answers the {eventId} event of scope sc; prefix is the path its id goes under.
func (c *call) oneEvent(sc store.EventScope, prefix string) (reply, error) {
	e, err := c.s.store.Event(c.ctx, sc, c.param("eventId"))
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, c.withoutRaw(e), prefix+e.ID), nil
}

// projectEvents answers with answer (listEvents or oneEvent) about the {groupId} project's
// events, once the caller may read the project.
func (c *call) projectEvents(answer func(sc store.EventScope, prefix string) (reply, error)) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return answer(store.EventScope{GroupID: p.ID}, "/groups/"+p.ID+"/events/")
}

// globalEvents answers with answer (listEvents or oneEvent) about the platform's events, once
// the caller may read them.
func (c *call) globalEvents(answer func(sc store.EventScope, prefix string) (reply, error)) (reply, error) {
	if err := c.require(herald.ReadGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return answer(store.EventScope{}, "/globalEvents/")
}

// GET /groups/{groupId}/events
func (s *Server) listProjectEvents(c *call) (reply, error) { return c.projectEvents(c.listEvents) }

// GET /groups/{groupId}/events/{eventId}: one project event (the self link of its list item).
func (s *Server) getProjectEvent(c *call) (reply, error) { return c.projectEvents(c.oneEvent) }

// GET /globalEvents
func (s *Server) listGlobalEvents(c *call) (reply, error) { return c.globalEvents(c.listEvents) }

// GET /globalEvents/{eventId}: one platform event (the self link of its list item).
func (s *Server) getGlobalEvent(c *call) (reply, error) { return c.globalEvents(c.oneEvent) }

// GET /orgs/{orgId}/events/{eventId}
func (s *Server) getOrgEvent(c *call) (reply, error) {
	o, err := c.org(herald.ReadOrg)
	if err != nil {
		return reply{}, err
	}
	return c.oneEvent(store.EventScope{OrgID: o.ID}, "/orgs/"+o.ID+"/events/")
}
