package herald

import (
	"maps"
	"net"
	"path"
	"slices"
	"strconv"
)

// Integration is a project's configuration of one third-party service: its type and the
// fields that type takes (IntegrationType.Fields), by name. In JSON the fields sit beside type.
type Integration struct {
	Type string
	// Fields are the integration's fields by name (serviceKey, url, ...): secrets in the clear.
	Fields map[string]string
	// Enabled is set for a type that takes it (SCRAPER_A).
	Enabled *bool
}

// Field is the value of the integration's field name ("" when unset).
func (i Integration) Field(name string) string { return i.Fields[name] }

// SetField sets the integration's field name; "" unsets it.
func (i *Integration) SetField(name, value string) { i.Fields = setField(i.Fields, name, value) }

// IntegrationType is what an integration of one type is: its fields, and the rules between
// them. A delivery kind declares its own (Kind.Integration); APM_A and SCRAPER_A, which
// deliver nothing, are declared here.
type IntegrationType struct {
	Name   string
	Fields []IntegrationField
	// Enabled: the type takes `enabled`, a boolean it must have.
	Enabled bool
	// Check, when set, checks an integration whose fields are each valid: the rules between
	// fields.
	Check func(Integration) error
}

// IntegrationField is one field of an integration type.
type IntegrationField struct {
	Name string
	// Required: an integration must have it; a read shows it even when empty.
	Required bool
	// Mask is how a read shows a secret (nil: as it is); Withheld: a read never shows it.
	Mask     func(string) string
	Withheld bool
	// Shown: a read shows it even when empty, though it is optional.
	Shown bool
	// GivenAgain: a change of a configured integration must give it, not empty (a stored
	// configuration from before it existed may lack it).
	GivenAgain bool
	// URL: an address a worker connects to, an absolute http or https URL.
	URL bool
	// Default is the value of the field when it is left empty; Check, when set, validates a
	// value, param naming the field.
	Default string
	Check   func(param, value string) error
}

// The integration types that deliver nothing: an APM agent's key and a Prometheus scrape
// target. APM_A's fields are not in the document; Herald takes the service's license key.
var (
	apmAIntegration = IntegrationType{Name: "APM_A", Fields: []IntegrationField{
		{Name: "licenseKey", Required: true, Mask: MaskTail}}}
	scraperAIntegration = IntegrationType{Name: "SCRAPER_A", Enabled: true, Check: checkScraper, Fields: []IntegrationField{
		{Name: "username", Required: true},
		{Name: "password", Required: true, Withheld: true},
		{Name: "listenAddress", Required: true, Check: checkIPPort},
		{Name: "serviceDiscovery", Required: true, Check: OneOf("file", "http")},
		{Name: "scheme", Required: true, Check: OneOf("http", "https")},
		{Name: "tlsPemPath", Check: checkAbsolutePath},
		{Name: "tlsPemPassword", Mask: MaskAll},
	}}
)

// checkScraper: a scrape over https needs the certificate's PEM.
func checkScraper(i Integration) error {
	if i.Field("scheme") == "https" && i.Field("tlsPemPath") == "" {
		return MissingAttribute("tlsPemPath")
	}
	return nil
}

func checkAbsolutePath(param, v string) error {
	if !path.IsAbs(v) {
		return InvalidAttribute(param, "%s must be an absolute path.", fieldOf(param))
	}
	return nil
}

// checkIPPort accepts an IP address and a port from 1 to 65535 ("10.0.0.1:9216",
// "[::1]:9216").
func checkIPPort(param, s string) error {
	host, port, err := net.SplitHostPort(s)
	if err == nil && net.ParseIP(host) != nil {
		if n, err := strconv.ParseUint(port, 10, 16); err == nil && n > 0 {
			return nil
		}
	}
	return InvalidAttribute(param, "%s must be an IP address and port.", fieldOf(param))
}

// integrationTypes are the integration types by name: those of the kinds, and those that
// deliver nothing.
func integrationTypes() map[string]*IntegrationType {
	out := map[string]*IntegrationType{apmAIntegration.Name: &apmAIntegration, scraperAIntegration.Name: &scraperAIntegration}
	for _, k := range kindRegistry {
		if k.Integration != nil {
			out[k.Integration.Name] = k.Integration
		}
	}
	return out
}

// LookupIntegrationType is the integration type named t.
func LookupIntegrationType(t string) (*IntegrationType, bool) {
	it, ok := integrationTypes()[t]
	return it, ok
}

func (t *IntegrationType) field(name string) (IntegrationField, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return IntegrationField{}, false
}

// keepsTarget refuses a stored secret tied to a target (the registry's KindField.Target: a
// webhook's secret to its url) that a change would carry to another host: unless the request
// gives a new secret, the moved target needs it again.
func keepsTarget(typ string, existing *Integration, next Integration, body map[string]any) error {
	if existing == nil {
		return nil
	}
	for _, k := range kindRegistry {
		if k.IntegrationName() != typ {
			continue
		}
		for _, f := range k.Fields {
			target, bound := k.field(f.Target)
			if f.Target == "" || !bound || f.Integration == "" || target.Integration == "" {
				continue
			}
			secret := existing.Field(f.Integration)
			if secret == "" || next.Field(f.Integration) != secret {
				continue // none stored, or a new one given
			}
			if given, _ := body[f.Integration].(string); given == secret {
				continue // given again in the clear
			}
			if !SameHost(existing.Field(target.Integration), next.Field(target.Integration)) {
				return InvalidAttribute(f.Integration, "%s moved to another host: give %s again.", target.Integration, f.Integration)
			}
		}
	}
	return nil
}

// IntegrationTypes lists the types an integration can have, sorted.
func IntegrationTypes() []string {
	return slices.Sorted(maps.Keys(integrationTypes()))
}

// KnownIntegrationType reports whether t names an integration type.
func KnownIntegrationType(t string) bool { _, ok := LookupIntegrationType(t); return ok }

// ApplyIntegration validates body (a decoded JSON object) for an integration of type typ and
// returns the configuration to store. existing is the project's current configuration of that
// type, or nil: given fields replace its fields, others are kept.
func ApplyIntegration(typ string, body map[string]any, existing *Integration) (Integration, error) {
	it, ok := LookupIntegrationType(typ)
	if !ok {
		return Integration{}, NotOneOf("type", typ, IntegrationTypes(), "Unknown integration type %s.", typ)
	}
	out := Integration{Type: typ}
	if existing != nil {
		out = *existing
	}
	if t, ok := body["type"]; !ok {
		return out, MissingAttribute("type")
	} else if s, _ := t.(string); s != typ {
		return out, Errorf(KindInvalid, CodeIntegrationTypeMismatch, []any{"type"},
			"The body's type does not match the path's integration type %s.", typ)
	}
	// Sorted, so that a body with several bad fields is always answered about the same one.
	for _, name := range slices.Sorted(maps.Keys(body)) {
		v := body[name]
		if name == "type" {
			continue
		}
		if it.Enabled && name == "enabled" {
			b, ok := v.(bool)
			if !ok {
				return out, InvalidAttribute("enabled", "enabled must be a boolean.")
			}
			out.Enabled = &b
			continue
		}
		f, ok := it.field(name)
		if !ok {
			return out, InvalidAttribute(name, "%s is not a field of %s integrations.", name, typ)
		}
		s, ok := v.(string)
		if !ok {
			return out, InvalidAttribute(name, "%s must be a string.", name)
		}
		if existing != nil && f.Mask != nil && s != "" && s == f.Mask(existing.Field(name)) {
			continue // the mask a read showed: the stored secret stays
		}
		if f.Mask != nil && IsMask(s) {
			return out, InvalidAttribute(name, "%s is masked: give the secret itself.", name)
		}
		out.SetField(name, s)
	}
	for _, f := range it.Fields {
		if f.Required && out.Field(f.Name) == "" {
			return out, MissingAttribute(f.Name)
		}
	}
	if existing != nil {
		for _, f := range it.Fields {
			if given, _ := body[f.Name].(string); f.GivenAgain && given == "" {
				return out, MissingAttribute(f.Name)
			}
		}
	}
	if it.Enabled && out.Enabled == nil {
		return out, MissingAttribute("enabled")
	}
	for _, f := range it.Fields {
		v := out.Field(f.Name)
		if v == "" && f.Default != "" {
			v = f.Default
			out.SetField(f.Name, v)
		}
		if v == "" {
			continue
		}
		if f.URL {
			if err := CheckHTTPURL(f.Name, v); err != nil {
				return out, err
			}
		}
		if f.Check != nil {
			if err := f.Check(f.Name, v); err != nil {
				return out, err
			}
		}
	}
	if it.Check != nil {
		if err := it.Check(out); err != nil {
			return out, err
		}
	}
	return out, keepsTarget(typ, existing, out, body)
}

// View is the integration as a read shows it: secrets masked, withheld fields never, optional
// fields only when set (or Shown), and enabled when set.
func (i Integration) View() map[string]any {
	out := map[string]any{"type": i.Type}
	var fields []IntegrationField
	if it, ok := LookupIntegrationType(i.Type); ok {
		fields = it.Fields
	}
	for _, f := range fields {
		v := i.Field(f.Name)
		switch {
		case f.Withheld, v == "" && !f.Required && !f.Shown:
			continue
		case f.Mask != nil:
			out[f.Name] = f.Mask(v)
		default:
			out[f.Name] = v
		}
	}
	if i.Enabled != nil {
		out["enabled"] = *i.Enabled
	}
	return out
}
