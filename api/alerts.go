package api

// TODO(owner of this file): replace these stubs.
func (s *Server) listAlerts(c *call) (reply, error)             { return reply{}, errNotImplemented }
func (s *Server) getAlert(c *call) (reply, error)               { return reply{}, errNotImplemented }
func (s *Server) acknowledgeAlert(c *call) (reply, error)       { return reply{}, errNotImplemented }
func (s *Server) listGlobalAlerts(c *call) (reply, error)       { return reply{}, errNotImplemented }
func (s *Server) getGlobalAlert(c *call) (reply, error)         { return reply{}, errNotImplemented }
func (s *Server) acknowledgeGlobalAlert(c *call) (reply, error) { return reply{}, errNotImplemented }
