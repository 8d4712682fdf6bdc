package herald

import "testing"

// An alert's end is an event type of its own; any other step keeps the alert's condition.
func TestAlertEventType(t *testing.T) {
	for _, c := range []struct{ status, want string }{
		{StatusTracking, "HOST_DOWN"},
		{StatusOpen, "HOST_DOWN"},
		{StatusClosed, EventAlertClosed},
		{StatusCancelled, EventAlertCancelled},
	} {
		if got := AlertEventType(Alert{EventTypeName: "HOST_DOWN", Status: c.status}); got != c.want {
			t.Errorf("%s: %s, want %s", c.status, got, c.want)
		}
	}
}
