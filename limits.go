package herald

import "time"

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

// Bounds of the times a request carries (docs/api.md#times), so that a sender's broken clock
// is refused with an answer rather than stored. Every time is refused before
// EarliestRequestTime. A time that says when something happened (an observation's at, a
// Prometheus alert's startsAt) is refused more than MaxRequestTimeAhead after Herald's clock.
// Any other (acknowledgedUntil, a window's or a silence's dates, endsAt) may lie as far ahead
// as the format goes (the year 9999): an end far ahead means for good.
var EarliestRequestTime = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// MaxRequestTimeAhead is how far ahead of Herald's clock a time something happened may be:
// clock skew, or a sender's local time sent as UTC, is less.
const MaxRequestTimeAhead = 24 * time.Hour
