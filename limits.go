package herald

// Request limits beside MaxObservationsPerRequest, enforced by the API while it decodes, so a
// request is refused at the cap, before it costs more than its own size.
const (
	// MaxNotificationsPerConfig bounds an alert configuration's notifications.
	MaxNotificationsPerConfig = 100
	// MaxArrayItems bounds every other array of a request body (roles, tags, matchers, project
	// ids, a host's disks in one observation).
	MaxArrayItems = 1000
	// MaxNesting bounds how deep a request body's objects and arrays nest.
	MaxNesting = 16
)
