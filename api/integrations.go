package api

// TODO(owner of this file): replace these stubs.
func (s *Server) listIntegrations(c *call) (reply, error)  { return reply{}, errNotImplemented }
func (s *Server) getIntegration(c *call) (reply, error)    { return reply{}, errNotImplemented }
func (s *Server) putIntegration(c *call) (reply, error)    { return reply{}, errNotImplemented }
func (s *Server) addIntegration(c *call) (reply, error)    { return reply{}, errNotImplemented }
func (s *Server) deleteIntegration(c *call) (reply, error) { return reply{}, errNotImplemented }
