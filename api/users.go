package api

// TODO(owner of this file): replace these stubs.
func (s *Server) createUser(c *call) (reply, error) { return reply{}, errNotImplemented }
