package api

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
)

// POST /users: a user with its global roles granted and its organization and project roles
// sent as invitations. The password is kept only as the digest HA1 the user authenticates with.
func (s *Server) createUser(c *call) (reply, error) {
	in, err := globalRequest[herald.UserInput](c, herald.AdminUsers)
	if err != nil {
		return reply{}, err
	}
	u, password, err := in.Validate()
	if err != nil {
		return reply{}, err
	}
	// A user administrator may not make a user who would outrank it.
	if err := c.grant(herald.Scope{}, u.Roles...); err != nil {
		return reply{}, err
	}
	invitations := make([]herald.Event, len(u.Invitations))
	for i, r := range u.Invitations {
		if invitations[i], err = c.invitation(u.Username, r); err != nil {
			return reply{}, err
		}
	}
	u.ID, u.Created, u.HA1 = herald.NewID(c.now), herald.At(c.now), digest.HA1(u.Username, password)
	u.MonitoringHA1 = digest.HA1In(digest.MonitoringRealm, u.Username, password)
	ev := c.event(herald.EventUserCreated, herald.Scope{})
	ev.TargetUsername = u.Username
	ev.Raw["userId"] = u.ID
	if err := s.store.CreateUser(c.ctx, u, ev, invitations); err != nil {
		return reply{}, err
	}
	// The answer holds no password, but answers the request that carried it: kept by no cache.
	rep := c.one(http.StatusCreated, u.View(), "/users/"+u.ID)
	rep.secret = true
	return rep, nil
}

// invitation is the event inviting username to the organization or project of role r,
// recorded there. A role naming neither an existing organization nor an existing project is
// a bad request, not a missing resource: the path names no such thing.
func (c *call) invitation(username string, r herald.Role) (herald.Event, error) {
	typ, scope := herald.EventInvitedToOrg, herald.Scope{OrgID: r.OrgID}
	var err error
	if r.GroupID != "" {
		var p herald.Project
		p, err = c.s.store.Project(c.ctx, r.GroupID)
		typ, scope = herald.EventInvitedToGroup, p.Scope()
	} else {
		_, err = c.s.store.Org(c.ctx, r.OrgID)
	}
	if herald.IsNotFound(err) {
		return herald.Event{}, herald.InvalidAttribute("roles", "%s", herald.ErrorOf(err).Detail)
	}
	if err != nil {
		return herald.Event{}, err
	}
	if err := c.grant(scope, r); err != nil { // an invitation is a grant once accepted
		return herald.Event{}, err
	}
	ev := c.event(typ, scope)
	ev.TargetUsername = username
	ev.Raw["roleName"] = r.RoleName
	return ev, nil
}

// GET /users/{userId}: a user administrator reads any user, a user itself.
func (s *Server) getUser(c *call) (reply, error) {
	id := c.param("userId")
	if c.who.UserID != id {
		if err := c.require(herald.AdminUsers, herald.Scope{}); err != nil {
			return reply{}, err
		}
	}
	u, err := s.store.User(c.ctx, id)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, u.View(), "/users/"+u.ID), nil
}
