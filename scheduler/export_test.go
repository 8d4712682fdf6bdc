package scheduler

// Die stops the scheduler as a killed process would: no more runs, no more renewing its
// leadership, and no resigning it.
func (s *Scheduler) Die() {
	s.stopOnce.Do(func() {
		close(s.stopLead)
		<-s.leadDone
		_ = s.cron.Shutdown()
	})
}
