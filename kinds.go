package herald

import (
	"fmt"
	"hash/fnv"
	"net/mail"
	"net/url"
	"slices"
	"strings"
)

// The registry of delivery kinds: what each kind of notification is, declared once by the
// kind's package (channels/<kind>) and registered by channels/registry. Validation, masking,
// credentials, fan-out to people, the retry queues and their priorities, and the senders
// cmd/herald makes all read it; tests check that every kind has a sender, a served queue, and
// its rows in docs/engine.md and the settings example.

// Kind is one kind of delivery.
type Kind struct {
	// Name is the kind's typeName in project configurations and the key of its sender.
	Name string
	// Project and Global say where a notification of the kind is accepted.
	Project, Global bool
	// GlobalName is the typeName global configurations spell it with, when not Name (CHATA).
	GlobalName string
	// Fields are the notification fields the kind takes.
	Fields []KindField
	// Integration is the integration type that supplies the fields a notification leaves out
	// (each field names its integration field), or nil.
	Integration *IntegrationType
	// People, when set, says how the kind reaches people (by email and/or SMS) rather than one
	// address or service.
	People *Reach
	// Links says the kind's notices are read by people and carry action links. Actor names
	// the field whose value a link is made for, the one an acknowledgement from it names;
	// "" names the kind. A notice to people names the user's username.
	Links bool
	Actor string
	// Queue is where retries of the kind wait, Priority the worker's default weight of it.
	// Kinds may share a queue; they then share its priority.
	Queue    string
	Priority int
}

// KindField is one field of a notification of a kind.
type KindField struct {
	Name string
	// Required: a notification must have it, unless the kind's integration supplies it.
	Required bool
	// Mask is how a read shows a secret (nil: shown as it is). A request that writes the mask
	// back keeps the secret it stands for.
	Mask func(string) string
	// Target, for a secret tied to where it is sent, names the field of that target: the
	// secret is kept only while the target stays on the same host.
	Target string
	// Integration is the field of the kind's integration that supplies this one, or "".
	Integration string
	// Credential: what the service checks; one it refuses is removed where it was configured.
	Credential bool
	// URL: an address a worker connects to. It must be an absolute http or https URL, and the
	// API warns of one the workers would refuse as private.
	URL bool
	// Default is the value of the field when a notification leaves it empty; Check, when set,
	// validates a value, param naming the field in the request (e.g. notifications[0].emailAddress).
	Default string
	Check   func(param, value string) error
}

// Reach is how a kind reaches people.
type Reach struct {
	// Email and SMS are the means a notification may use: emailEnabled, smsEnabled.
	Email, SMS bool
	// Roles, when set, are the roles a project configuration's notification may narrow to.
	Roles func(string) bool
	// Reaches reports whether notification n of project p's configuration (or a global one
	// applied to p) reaches user u.
	Reaches func(n Notification, u User, p Project) bool
	// Administrators: the kind reaches the installation's administrators, the addresses the
	// operator configured (HERALD_ADMIN_EMAIL) or else the users Reaches picks.
	Administrators bool
}

// IntegrationName is the type of the kind's integration, or "" when it has none.
func (k Kind) IntegrationName() string {
	if k.Integration == nil {
		return ""
	}
	return k.Integration.Name
}

// The kinds that reach people rather than one address or service: Herald's own rules of
// who holds which role, told by EMAIL and SMS. The registry of kinds lists them with the
// others.
var (
	UserKind = Kind{Name: "USER", Links: true, Project: true, Global: true, Queue: "deliveries-people", Priority: 3,
		Fields: []KindField{{Name: "username", Required: true}},
		People: &Reach{Email: true, SMS: true, Reaches: reachesUser}}
	GroupKind = Kind{Name: "GROUP", Links: true, Project: true, Global: true, Queue: "deliveries-people", Priority: 3,
		People: &Reach{Email: true, SMS: true, Roles: ValidProjectRole, Reaches: reachesProjectMember}}
	OrgKind = Kind{Name: "ORG", Links: true, Project: true, Queue: "deliveries-people", Priority: 3,
		People: &Reach{Email: true, SMS: true, Roles: ValidOrgRole, Reaches: reachesOrgMember}}
	AdminKind = Kind{Name: "ADMIN", Links: true, Global: true, Queue: "deliveries-people", Priority: 3,
		People: &Reach{Email: true, Reaches: reachesGlobalOwner, Administrators: true}}
)

// kindRegistry is every kind, as RegisterKinds was given them.
var kindRegistry []Kind

// RegisterKinds adds kinds to the registry, in order: the registry of kinds
// (channels/registry) gives it every kind once, when it is imported. It panics on a kind,
// spelling or field that is registered already, or an integration type that is.
func RegisterKinds(kinds ...Kind) {
	for _, k := range kinds {
		for _, name := range []string{k.Name, k.GlobalName} {
			if _, dup := LookupKind(name); dup {
				panic("herald: kind " + name + " registered twice")
			}
		}
		for _, f := range k.Fields {
			if slices.Contains(notificationFieldNames(), f.Name) {
				panic("herald: notification field " + f.Name + " of " + k.Name + " is another kind's")
			}
		}
		if k.Actor != "" {
			if f, ok := k.field(k.Actor); !ok || f.Mask != nil || f.Credential {
				panic("herald: actor " + k.Actor + " of " + k.Name + " is not a plain field of the kind")
			}
		}
		if it := k.Integration; it != nil && KnownIntegrationType(it.Name) {
			panic("herald: integration type " + it.Name + " of " + k.Name + " registered twice")
		}
		kindRegistry = append(kindRegistry, k)
	}
}

// Kinds returns every delivery kind, in the registry's order.
func Kinds() []Kind { return append([]Kind(nil), kindRegistry...) }

// LookupKind is the kind of a notification typeName, in either spelling (CHAT_A or CHATA).
func LookupKind(typeName string) (Kind, bool) {
	for _, k := range kindRegistry {
		if typeName != "" && (k.Name == typeName || k.GlobalName == typeName) {
			return k, true
		}
	}
	return Kind{}, false
}

// Senders are the names of the senders the kinds need, sorted: every kind with a target of its
// own, and the means (EMAIL, SMS) by which the kinds that reach people tell them.
func Senders() []string {
	var out []string
	for _, k := range kindRegistry {
		switch {
		case k.People == nil:
			out = append(out, k.Name)
		case k.People.Email && k.People.SMS:
			out = append(out, "EMAIL", "SMS")
		case k.People.Email:
			out = append(out, "EMAIL")
		case k.People.SMS:
			out = append(out, "SMS")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// NotificationTypes are the typeNames a project (global false) or global configuration's
// notifications may have, in the registry's order.
func NotificationTypes(global bool) []string {
	var out []string
	for _, k := range kindRegistry {
		if global && k.Global || !global && k.Project {
			out = append(out, k.TypeName(global))
		}
	}
	return out
}

// TypeName is how a configuration spells the kind: in global ones its GlobalName if it has one.
func (k Kind) TypeName(global bool) string {
	if global && k.GlobalName != "" {
		return k.GlobalName
	}
	return k.Name
}

// Accepts reports whether typeName is the kind's spelling in a project (or global) configuration.
func (k Kind) Accepts(typeName string, global bool) bool {
	if global {
		return k.Global && typeName == k.TypeName(true)
	}
	return k.Project && typeName == k.Name
}

func (k Kind) field(name string) (KindField, bool) {
	for _, f := range k.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return KindField{}, false
}

// fieldMask is the mask of notification field name, whichever kind has it (nil: not a secret).
func fieldMask(name string) func(string) string {
	for _, k := range kindRegistry {
		if f, ok := k.field(name); ok && f.Mask != nil {
			return f.Mask
		}
	}
	return nil
}

// notificationFieldNames are the fields of every kind, in the registry's order.
func notificationFieldNames() []string {
	var out []string
	for _, k := range kindRegistry {
		for _, f := range k.Fields {
			if !slices.Contains(out, f.Name) {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// SameHost reports whether two target URLs are on the same host (scheme, host and port), so
// that a secret configured for one may be used for the other. Two empty targets are the same
// (the integration's); anything that does not parse is a host of its own.
func SameHost(a, b string) bool {
	if a == b {
		return true
	}
	ua, erra := url.Parse(a)
	ub, errb := url.Parse(b)
	return erra == nil && errb == nil && ua.Host != "" && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// Means are how a notification that reaches people tells them: as stored, or, for one stored
// without either (before validation stored both), by email as the platform does.
func (n Notification) Means() (email, sms bool) {
	if n.EmailEnabled == nil && n.SMSEnabled == nil {
		return true, false
	}
	return isTrue(n.EmailEnabled), isTrue(n.SMSEnabled)
}

// ParseAdminEmails reads the installation's administrators' addresses (HERALD_ADMIN_EMAIL):
// comma-separated plain addresses; empty means none. A malformed one is an error naming it.
func ParseAdminEmails(s string) ([]string, error) {
	var out []string
	for a := range strings.SplitSeq(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" && strings.TrimSpace(s) == "" {
			continue
		}
		if p, err := mail.ParseAddress(a); err != nil || p.Address != a {
			return nil, fmt.Errorf("%q is not an email address", a)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return dedupe(out), nil
}

// Administrators are the people an ADMIN notification reaches when the operator named them by
// address: one per address, its id stable for as long as the address is configured (it names
// the delivery, and so its retry and its Message-ID).
func Administrators(addresses []string) []User {
	out := make([]User, 0, len(addresses))
	for _, a := range addresses {
		h := fnv.New64a()
		h.Write([]byte(strings.ToLower(a)))
		out = append(out, User{ID: fmt.Sprintf("admin-%016x", h.Sum64()), Username: a, EmailAddress: a})
	}
	return out
}
