package main

import (
	"net/http"

	"github.com/heraldhq/herald/monitoring"
	"github.com/heraldhq/herald/store"
)

// monitoringSettings say whether the API serves asynqmon at /monitoring/ and whether it may
// change the queues.
type monitoringSettings struct {
	Monitoring      bool
	MonitoringWrite bool
}

func (m *monitoringSettings) bind(s settings) {
	s.bool(&m.Monitoring, "monitoring", "HERALD_MONITORING", true, "serve asynqmon, the queues' web console, at /monitoring/ to keys and users with a global role")
	s.bool(&m.MonitoringWrite, "monitoring-write", "HERALD_MONITORING_WRITE", false, "let asynqmon change the queues (delete, run and archive tasks, pause queues); read-only otherwise")
}

// handler is asynqmon on st's Redis, or nil when it is not served.
func (m monitoringSettings) handler(st *store.Store) http.Handler {
	if !m.Monitoring {
		return nil
	}
	return monitoring.New(st.Redis(), !m.MonitoringWrite)
}
