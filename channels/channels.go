package channels

import (
	"context"

	"github.com/heraldhq/herald"
)

// Event is what happened to the alert that a delivery tells about.
type Event string

// The events, as the X-Vendor-Event header of a webhook names them (docs/decisions.md#webhooks).
const (
	EventOpen        Event = "alert.open"
	EventUpdate      Event = "alert.update"      // a repeat notice
	EventClose       Event = "alert.close"       // resolution notice
	EventAcknowledge Event = "alert.acknowledge" // the alert was acknowledged
	EventCancel      Event = "alert.cancel"      // the alert was cancelled
)

// Delivery is one notice to one target.
type Delivery struct {
	ID           string              // idempotency key: the same on every retry of this delivery
	Event        Event               // what happened
	Alert        herald.Alert        // the alert as the API shows it
	Notification herald.Notification // as stored: secrets in the clear; never log them
	Integration  *herald.Integration // the project's integration of the notification's kind, if any: defaults for fields the notification leaves out
	// To is the recipient where the dispatcher chose one: the address or number of one user
	// when a GROUP, ORG, USER or ADMIN notification fans out to people by email or SMS.
	// Empty: the notification's own (emailAddress, mobileNumber).
	To string
	// Links are the signed links to act on the alert, for a kind read by people
	// (herald.Kind.Links); empty when the operator set no action keys.
	Links herald.ActionLinks
	// Project and Org are the names of the alert's project and its organization, for people
	// to read; either may be empty.
	Project, Org string
	// Global says the alert is a global one (read under /globalAlerts), for a sender that
	// keeps what it sent for replies to act on (SMS).
	Global bool
	// Digest, when set, makes the delivery a digest: one message telling of several alerts
	// (Alert is then the first of them). ID is the digest's id.
	Digest *Digest
}

// Notifier sends a delivery. nil: delivered. Otherwise a *Failure (or an error wrapping one)
// saying whether to retry.
type Notifier interface {
	Notify(ctx context.Context, d Delivery) error
}

// Recipient is whom d goes to: To, the person the dispatcher chose, else the notification's
// field (emailAddress, mobileNumber). Neither is a permanent *Failure naming the field.
func (d Delivery) Recipient(field string) (string, error) {
	if d.To != "" {
		return d.To, nil
	}
	if v := d.Notification.Field(field); v != "" {
		return v, nil
	}
	return "", &Failure{Reason: "no recipient: neither the delivery nor the notification's " + field + " names one"}
}
