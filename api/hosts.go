package api

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/obsjson"
)

// GET /groups/{groupId}/hosts/{hostId}/disks/{partitionName}: a partition an observation
// reported for the host. A name holding slashes ("/dev/sda1") comes escaped as one segment.
func (s *Server) getDisk(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	h, err := s.store.Host(c.ctx, p.ID, c.param("hostId"))
	if err != nil {
		return reply{}, err
	}
	name := c.param("partitionName")
	ok, err := s.store.HasDisk(c.ctx, p.ID, h.ID, name)
	if err != nil {
		return reply{}, err
	}
	if !ok {
		return reply{}, herald.NotFound(herald.CodeDiskPartitionNotFound, "disk partition", name)
	}
	return c.one(http.StatusOK, herald.Disk{PartitionName: name}, "/groups/"+p.ID+"/hosts/"+h.ID+"/disks/"+escape(name)), nil
}

// accepted is the answer to observations taken for evaluation.
type accepted struct {
	Accepted int `json:"accepted"`
}

// POST /groups/{groupId}/observations: a batch from a monitoring agent, validated whole (one
// bad item refuses all of it, and stops the reading there), registering the hosts and partitions it names in one store call.
func (s *Server) postObservations(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	validate := func(o herald.Observation, i int) error { return o.ValidateAt(i, c.now) }
	obs, batch, err := decodeBatch(c, herald.MaxObservationsPerRequest, validate, obsjson.Read)
	if err != nil {
		return reply{}, err
	}
	if len(obs) == 0 {
		return reply{}, herald.Errorf(herald.KindInvalid, herald.CodeMissingAttribute, nil, "The request body must hold at least one observation.")
	}
	hosts, disks := herald.HostsOf(p.ID, obs, c.now)
	if err := s.store.RegisterHosts(c.ctx, p.ID, hosts, disks); err != nil {
		return reply{}, err
	}
	// Queued durably before the 202: what an agent was told was accepted is never lost.
	if err := s.engine.Observe(c.ctx, p.ID, batch); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusAccepted, one: accepted{len(obs)}}, nil // not a resource: no self link
}
