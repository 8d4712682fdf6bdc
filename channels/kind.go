package channels

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// Kind is what a delivery kind's package declares, once: the kind itself (herald.Kind: its
// typeName spellings, its fields with their checks and masks, its integration, its retry
// queue) and its sender, made from the operator's settings. The registry of kinds
// (channels/registry) lists every package's Kind.
type Kind struct {
	herald.Kind
	// Settings are the operator's settings the sender takes (its service's address, an
	// account), in the order --help lists them.
	Settings []Setting
	// Check, when set, checks the settings' values together when a worker starts: a value
	// that would fail every delivery stops the worker instead.
	Check func(Settings) error
	// New makes the sender from the settings and the HTTP client made for it; it returns nil
	// when the operator has not set the kind up (no mail server). nil for a kind that reaches
	// people: they are told by EMAIL and SMS.
	New func(s Settings, client *http.Client) Notifier
}

// Setting is one of a sender's settings: a flag, and the HERALD_* variable that sets it too.
type Setting struct {
	Flag, Env, Help string
	Default         string
	// Address: a service's address paths are appended to (http(s)://host[:port]); one that is
	// not stops the worker at start.
	Address bool
	// Secret: read from the environment only, so that neither --help nor the process list
	// shows it; the deploy files' placeholder, or white space at either end, is refused.
	Secret bool
	// Exact: sent on as it is (a login, an account), so white space at either end is refused.
	Exact bool
}

// Settings are the values of a sender's settings, by variable (HERALD_PAGING_URL).
type Settings map[string]string

// Field is the value of field name for d: the notification's own, else that of the
// integration field that supplies it (herald.KindField.Integration). "" when neither has it.
func (k Kind) Field(d Delivery, name string) string {
	if v := d.Notification.Field(name); v != "" {
		return v
	}
	for _, f := range k.Fields {
		if f.Name == name && f.Integration != "" {
			return k.IntegrationField(d, f.Integration)
		}
	}
	return ""
}

// IntegrationField is the value of field name of d's integration, when it is one of the
// kind's type; "" otherwise.
func (k Kind) IntegrationField(d Delivery, name string) string {
	if i := d.Integration; i != nil && k.Integration != nil && (i.Type == "" || i.Type == k.Integration.Name) {
		return i.Field(name)
	}
	return ""
}

// Values are the values of the fields named for d (Field), in order; a field that neither the
// notification nor its integration sets is a permanent *Failure naming it, and nothing is sent.
func (k Kind) Values(d Delivery, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, name := range names {
		if out[i] = k.Field(d, name); out[i] == "" {
			where := "the notification"
			if k.Integration != nil {
				where = "neither the notification nor its project's " + k.Integration.Name + " integration"
			}
			return nil, &Failure{Reason: "no " + name + ": " + where + " sets it"}
		}
	}
	return out, nil
}
