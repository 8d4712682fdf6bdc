package herald

import (
	"maps"
	"net"
	"path"
	"slices"
	"sort"
	"strconv"
)

// Integration is a project's configuration of one third-party service. Which fields a type
// takes is in integrationKinds; the struct holds the union so that senders can read them by
// name.
type Integration struct {
	Type              string `json:"type"`
	ServiceKey        string `json:"serviceKey,omitempty"`
	APIToken          string `json:"apiToken,omitempty"`
	TeamName          string `json:"teamName,omitempty"`
	ChannelName       string `json:"channelName,omitempty"`
	APIKey            string `json:"apiKey,omitempty"`
	NotificationToken string `json:"notificationToken,omitempty"`
	RoomName          string `json:"roomName,omitempty"`
	Region            string `json:"region,omitempty"`
	RoutingKey        string `json:"routingKey,omitempty"`
	URL               string `json:"url,omitempty"`
	Secret            string `json:"secret,omitempty"`
	ChatCWebhookURL   string `json:"chatCWebhookUrl,omitempty"`
	LicenseKey        string `json:"licenseKey,omitempty"`
	Username          string `json:"username,omitempty"`
	Password          string `json:"password,omitempty"`
	ListenAddress     string `json:"listenAddress,omitempty"`
	ServiceDiscovery  string `json:"serviceDiscovery,omitempty"`
	Scheme            string `json:"scheme,omitempty"`
	TLSPemPath        string `json:"tlsPemPath,omitempty"`
	TLSPemPassword    string `json:"tlsPemPassword,omitempty"`
	Enabled           *bool  `json:"enabled,omitempty"`
}

// How a field is shown on read.
type reveal int

const (
	plain    reveal = iota
	tail            // last 4 characters behind asterisks
	urlOnly         // scheme and host
	hidden          // fully masked
	withheld        // never returned
)

type integrationField struct {
	name   string
	reveal reveal
}

type integrationKind struct {
	required []integrationField
	optional []integrationField
}

// integrationKinds: the document's table of integration types and their fields. APM_A's
// fields are not in the document; Herald takes the service's license key.
var integrationKinds = map[string]integrationKind{
	"PAGING":     {required: []integrationField{{"serviceKey", tail}}},
	"CHAT_B":     {required: []integrationField{{"apiToken", tail}}, optional: []integrationField{{"teamName", plain}, {"channelName", plain}}},
	"METRICS_A":  {required: []integrationField{{"apiKey", tail}}},
	"CHAT_A":     {required: []integrationField{{"notificationToken", tail}, {"roomName", plain}}},
	"ALERTING_A": {required: []integrationField{{"apiKey", tail}}, optional: []integrationField{{"region", plain}}},
	"ALERTING_B": {required: []integrationField{{"apiKey", tail}}, optional: []integrationField{{"routingKey", plain}}},
	"WEBHOOK":    {required: []integrationField{{"url", urlOnly}}, optional: []integrationField{{"secret", hidden}}},
	"CHAT_C":     {required: []integrationField{{"chatCWebhookUrl", urlOnly}}},
	"APM_A":      {required: []integrationField{{"licenseKey", tail}}},
	"SCRAPER_A": {
		required: []integrationField{{"username", plain}, {"password", withheld}, {"listenAddress", plain}, {"serviceDiscovery", plain}, {"scheme", plain}},
		optional: []integrationField{{"tlsPemPath", plain}, {"tlsPemPassword", hidden}},
	},
}

func (k integrationKind) lookup(name string) (integrationField, bool) {
	for _, f := range append(append([]integrationField{}, k.required...), k.optional...) {
		if f.name == name {
			return f, true
		}
	}
	return integrationField{}, false
}

// mask is how a read shows a field revealed so, or nil for one shown as it is or never.
func (r reveal) mask() func(string) string {
	switch r {
	case tail:
		return MaskTail
	case urlOnly:
		return MaskURL
	case hidden:
		return MaskAll
	}
	return nil
}

// keepsTarget refuses a stored secret tied to a target (the registry's KindField.Target: a
// webhook's secret to its url) that a change would carry to another host: unless the request
// gives a new secret, the moved target needs it again.
func keepsTarget(typ string, existing *Integration, next Integration, body map[string]any) error {
	if existing == nil {
		return nil
	}
	for _, k := range kindRegistry {
		if k.Integration != typ {
			continue
		}
		for _, f := range k.Fields {
			target, bound := k.field(f.Target)
			if f.Target == "" || !bound || f.Integration == "" || target.Integration == "" {
				continue
			}
			secret := *existing.field(f.Integration)
			if secret == "" || *next.field(f.Integration) != secret {
				continue // none stored, or a new one given
			}
			if given, _ := body[f.Integration].(string); given == secret {
				continue // given again in the clear
			}
			if !SameHost(*existing.field(target.Integration), *next.field(target.Integration)) {
				return InvalidAttribute(f.Integration, "%s moved to another host: give %s again.", target.Integration, f.Integration)
			}
		}
	}
	return nil
}

// IntegrationTypes lists the types an integration can have, sorted.
func IntegrationTypes() []string {
	out := make([]string, 0, len(integrationKinds))
	for t := range integrationKinds {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// KnownIntegrationType reports whether t names an integration type.
func KnownIntegrationType(t string) bool { _, ok := integrationKinds[t]; return ok }

func (i *Integration) field(name string) *string {
	switch name {
	case "serviceKey":
		return &i.ServiceKey
	case "apiToken":
		return &i.APIToken
	case "teamName":
		return &i.TeamName
	case "channelName":
		return &i.ChannelName
	case "apiKey":
		return &i.APIKey
	case "notificationToken":
		return &i.NotificationToken
	case "roomName":
		return &i.RoomName
	case "region":
		return &i.Region
	case "routingKey":
		return &i.RoutingKey
	case "url":
		return &i.URL
	case "secret":
		return &i.Secret
	case "chatCWebhookUrl":
		return &i.ChatCWebhookURL
	case "licenseKey":
		return &i.LicenseKey
	case "username":
		return &i.Username
	case "password":
		return &i.Password
	case "listenAddress":
		return &i.ListenAddress
	case "serviceDiscovery":
		return &i.ServiceDiscovery
	case "scheme":
		return &i.Scheme
	case "tlsPemPath":
		return &i.TLSPemPath
	case "tlsPemPassword":
		return &i.TLSPemPassword
	}
	return nil
}

// ApplyIntegration validates body (a decoded JSON object) for an integration of type typ and
// returns the configuration to store. existing is the project's current configuration of that
// type, or nil: given fields replace its fields, others are kept.
func ApplyIntegration(typ string, body map[string]any, existing *Integration) (Integration, error) {
	kind, ok := integrationKinds[typ]
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
	fields := append(append([]integrationField{}, kind.required...), kind.optional...)
	// Sorted, so that a body with several bad fields is always answered about the same one.
	for _, name := range slices.Sorted(maps.Keys(body)) {
		v := body[name]
		if name == "type" {
			continue
		}
		if typ == "SCRAPER_A" && name == "enabled" {
			b, ok := v.(bool)
			if !ok {
				return out, InvalidAttribute("enabled", "enabled must be a boolean.")
			}
			out.Enabled = &b
			continue
		}
		if !slices.ContainsFunc(fields, func(f integrationField) bool { return f.name == name }) {
			return out, InvalidAttribute(name, "%s is not a field of %s integrations.", name, typ)
		}
		s, ok := v.(string)
		if !ok {
			return out, InvalidAttribute(name, "%s must be a string.", name)
		}
		f, _ := kind.lookup(name)
		if existing != nil && f.reveal.mask() != nil && s != "" && s == f.reveal.mask()(*existing.field(name)) {
			continue // the mask a read showed: the stored secret stays
		}
		if f.reveal.mask() != nil && IsMask(s) {
			return out, InvalidAttribute(name, "%s is masked: give the secret itself.", name)
		}
		*out.field(name) = s
	}
	for _, f := range kind.required {
		if *out.field(f.name) == "" {
			return out, MissingAttribute(f.name)
		}
	}
	// Reconfiguring CHAT_B must name the team afresh: a stored legacy configuration may lack it.
	if typ == "CHAT_B" && existing != nil {
		if team, _ := body["teamName"].(string); team == "" {
			return out, MissingAttribute("teamName")
		}
	}
	if typ == "SCRAPER_A" && out.Enabled == nil {
		return out, MissingAttribute("enabled")
	}
	// check fills defaults into out, so it must run before out is returned: in
	// "return out, out.check()" the order of the two is unspecified.
	if err := out.check(); err != nil {
		return out, err
	}
	return out, keepsTarget(typ, existing, out, body)
}

func (i *Integration) check() error {
	switch i.Type {
	case "ALERTING_A":
		if i.Region == "" {
			i.Region = "US"
		}
		if i.Region != "US" && i.Region != "EU" {
			return Invalid(CodeInvalidEnumValue, "region", "region must be US or EU.")
		}
	case "WEBHOOK":
		if !ValidHTTPURL(i.URL) {
			return InvalidAttribute("url", "url must be an absolute http or https URL.")
		}
	case "CHAT_C":
		if !ValidHTTPURL(i.ChatCWebhookURL) {
			return InvalidAttribute("chatCWebhookUrl", "chatCWebhookUrl must be an absolute http or https URL.")
		}
	case "SCRAPER_A":
		if !validIPPort(i.ListenAddress) {
			return InvalidAttribute("listenAddress", "listenAddress must be an IP address and port.")
		}
		if i.ServiceDiscovery != "file" && i.ServiceDiscovery != "http" {
			return Invalid(CodeInvalidEnumValue, "serviceDiscovery", "serviceDiscovery must be file or http.")
		}
		if i.Scheme != "http" && i.Scheme != "https" {
			return Invalid(CodeInvalidEnumValue, "scheme", "scheme must be http or https.")
		}
		if i.Scheme == "https" && i.TLSPemPath == "" {
			return MissingAttribute("tlsPemPath")
		}
		if i.TLSPemPath != "" && !path.IsAbs(i.TLSPemPath) {
			return InvalidAttribute("tlsPemPath", "tlsPemPath must be an absolute path.")
		}
	}
	return nil
}

// validIPPort reports whether s is an IP address and a port from 1 to 65535 ("10.0.0.1:9216",
// "[::1]:9216").
func validIPPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || net.ParseIP(host) == nil {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n > 0
}

// View is the integration as a read shows it: secrets masked, the password never, optional
// fields only when set, and a CHAT_B channelName always (empty when unset).
func (i Integration) View() map[string]any {
	kind := integrationKinds[i.Type]
	out := map[string]any{"type": i.Type}
	show := func(f integrationField, always bool) {
		v := *i.field(f.name)
		if v == "" && !always {
			return
		}
		switch f.reveal {
		case plain:
			out[f.name] = v
		case tail:
			out[f.name] = MaskTail(v)
		case urlOnly:
			out[f.name] = MaskURL(v)
		case hidden:
			out[f.name] = MaskAll(v)
		}
	}
	for _, f := range kind.required {
		show(f, true)
	}
	for _, f := range kind.optional {
		show(f, i.Type == "CHAT_B" && f.name == "channelName")
	}
	if i.Enabled != nil {
		out["enabled"] = *i.Enabled
	}
	return out
}
