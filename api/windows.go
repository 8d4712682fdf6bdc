package api

// TODO(owner of this file): replace these stubs.
func (s *Server) listWindows(c *call) (reply, error)  { return reply{}, errNotImplemented }
func (s *Server) createWindow(c *call) (reply, error) { return reply{}, errNotImplemented }
func (s *Server) getWindow(c *call) (reply, error)    { return reply{}, errNotImplemented }
func (s *Server) updateWindow(c *call) (reply, error) { return reply{}, errNotImplemented }
func (s *Server) deleteWindow(c *call) (reply, error) { return reply{}, errNotImplemented }
