package api

// TODO(owner of this file): replace these stubs.
func (s *Server) listGlobalAlertConfigs(c *call) (reply, error)  { return reply{}, errNotImplemented }
func (s *Server) createGlobalAlertConfig(c *call) (reply, error) { return reply{}, errNotImplemented }
func (s *Server) getGlobalAlertConfig(c *call) (reply, error)    { return reply{}, errNotImplemented }
func (s *Server) patchGlobalAlertConfig(c *call) (reply, error)  { return reply{}, errNotImplemented }
func (s *Server) deleteGlobalAlertConfig(c *call) (reply, error) { return reply{}, errNotImplemented }
func (s *Server) listGlobalConfigAlerts(c *call) (reply, error)  { return reply{}, errNotImplemented }
