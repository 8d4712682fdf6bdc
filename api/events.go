package api

// TODO(owner of this file): replace these stubs.
func (s *Server) listProjectEvents(c *call) (reply, error) { return reply{}, errNotImplemented }
func (s *Server) listGlobalEvents(c *call) (reply, error)  { return reply{}, errNotImplemented }
func (s *Server) getOrgEvent(c *call) (reply, error)       { return reply{}, errNotImplemented }
