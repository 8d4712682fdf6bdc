package api

// TODO(owner of this file): replace these stubs.
func (s *Server) getDisk(c *call) (reply, error)          { return reply{}, errNotImplemented }
func (s *Server) postObservations(c *call) (reply, error) { return reply{}, errNotImplemented }
