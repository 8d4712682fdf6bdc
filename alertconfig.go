package herald

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
)

// Notification says who is told about an alert and when, as the API shows it (secrets in the
// clear: the API masks them on the way out with Masked).
type Notification struct {
	TypeName     string
	DelayMin     int
	IntervalMin  int
	EmailEnabled *bool
	SMSEnabled   *bool
	Roles        []string
	// Fields are the fields of the notification's kind (emailAddress, webhookUrl, serviceKey,
	// ...) by name, as its kind declares them (Kind.Fields). In JSON they sit beside the
	// attributes above (fields.go).
	Fields map[string]string
}

// Masked is the notification as a read shows it.
func (n Notification) Masked() Notification {
	if len(n.Fields) == 0 {
		return n
	}
	fields := make(map[string]string, len(n.Fields))
	for name, v := range n.Fields {
		if mask := fieldMask(name); mask != nil {
			v = mask(v)
		}
		fields[name] = v
	}
	n.Fields = fields
	return n
}

// Matcher narrows a configuration to the entities whose field matches.
type Matcher struct {
	FieldName string `json:"fieldName"`
	Operator  string `json:"operator"`
	Value     string `json:"value"`
}

// Threshold is the limit of a thresholded event type (TOO_FEW_HEALTHY_MEMBERS, ...).
type Threshold struct {
	Operator  string  `json:"operator"`
	Threshold float64 `json:"threshold"`
	Units     string  `json:"units,omitempty"`
}

// MetricThreshold is the limit of an OUTSIDE_METRIC_THRESHOLD configuration.
type MetricThreshold struct {
	MetricName string  `json:"metricName"`
	Mode       string  `json:"mode"`
	Operator   string  `json:"operator"`
	Threshold  float64 `json:"threshold"`
	Units      string  `json:"units"`
}

// AlertRule is what project and global alert configurations have in common: the condition
// that opens an alert and who is told. The alert engine works on rules.
type AlertRule struct {
	Enabled         bool             `json:"enabled"`
	EventTypeName   string           `json:"eventTypeName"`
	Matchers        []Matcher        `json:"matchers"`
	LabelMatchers   []LabelMatcher   `json:"labelMatchers,omitempty"` // PROMETHEUS_ALERT: every one holds on the alert's labels
	MetricThreshold *MetricThreshold `json:"metricThreshold,omitempty"`
	Threshold       *Threshold       `json:"threshold,omitempty"`
	Notifications   []Notification   `json:"notifications"`
}

// Masked is the rule with every notification masked.
func (r AlertRule) Masked() AlertRule {
	ns := make([]Notification, len(r.Notifications))
	for i, n := range r.Notifications {
		ns[i] = n.Masked()
	}
	r.Notifications = ns
	return r
}

// AlertConfig is a project's alert configuration.
type AlertConfig struct {
	ID      string `json:"id"`
	GroupID string `json:"groupId"`
	Created Time   `json:"created"`
	Updated Time   `json:"updated"`
	AlertRule
}

// Masked is the configuration as a read shows it.
func (c AlertConfig) Masked() AlertConfig { c.AlertRule = c.AlertRule.Masked(); return c }

// GlobalAlertConfig is a platform-wide alert configuration: for all projects (narrowed by
// Tags) or for GroupIDs.
type GlobalAlertConfig struct {
	ID           string   `json:"id"`
	Created      Time     `json:"created"`
	Updated      Time     `json:"updated"`
	ForAllGroups bool     `json:"forAllGroups"`
	GroupIDs     []string `json:"groupIds,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	AlertRule
}

// Masked is the configuration as a read shows it.
func (c GlobalAlertConfig) Masked() GlobalAlertConfig { c.AlertRule = c.AlertRule.Masked(); return c }

// AppliesTo reports whether the configuration covers project p.
func (c GlobalAlertConfig) AppliesTo(p Project) bool {
	if !c.ForAllGroups {
		for _, id := range c.GroupIDs {
			if id == p.ID {
				return true
			}
		}
		return false
	}
	for _, want := range c.Tags {
		found := false
		for _, t := range p.Tags {
			if t == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// MinIntervalMin is the shortest repeat interval a notification may ask for.
const MinIntervalMin = 5

// MaxDelayMin and MaxIntervalMin bound a notification's delay and repeat interval: a year of
// minutes. Larger values are no delay or repeat anyone waits for; they mostly mean "never",
// which leaving the notification out says plainly.
const (
	MaxDelayMin    = 525_600
	MaxIntervalMin = 525_600
)

// Defaults of a notification whose request leaves them out.
const (
	DefaultDelayMin    = 0
	DefaultIntervalMin = 60
)

// NotificationInput is a notification as a request carries it: every field optional so that
// validation can tell absent from empty. Requests name ORG and GROUP roles with `role`;
// `roles` is accepted too, so a configuration read back can be written back.
type NotificationInput struct {
	TypeName     *string  `json:"typeName"`
	DelayMin     *int     `json:"delayMin"`
	IntervalMin  *int     `json:"intervalMin"`
	EmailEnabled *bool    `json:"emailEnabled"`
	SMSEnabled   *bool    `json:"smsEnabled"`
	Role         *string  `json:"role"`
	Roles        []string `json:"roles"`
	// Fields are the kind fields the request gives, by name (fields.go reads them): nil for
	// one given as null.
	Fields map[string]*string `json:"-"`
}

// NotificationRules is what validating a notification depends on besides the notification.
type NotificationRules struct {
	// Global: the configuration is a global one (its own set of typeName values).
	Global bool
	// Integrations reports whether the project has an integration of the given type; a
	// notification of that kind may then leave its credentials out and use the integration's.
	Integrations func(integrationType string) bool
	// Current are the notifications of the configuration a request replaces (none when it
	// creates one). A read shows their secrets masked; a request that writes such a mask back
	// keeps the secret it stands for.
	Current []Notification
}

// Validate checks a notification at path (e.g. "notifications[0]") and returns what is stored.
func (in NotificationInput) Validate(path string, rules NotificationRules) (Notification, error) {
	var n Notification
	if in.TypeName == nil || *in.TypeName == "" {
		return n, MissingAttribute(path + ".typeName")
	}
	n.TypeName = *in.TypeName
	kind, known := LookupKind(n.TypeName)
	if !known || !kind.Accepts(n.TypeName, rules.Global) {
		return n, NotOneOf(path+".typeName", n.TypeName, NotificationTypes(rules.Global), "Notification type %s is not allowed here.", n.TypeName)
	}

	n.DelayMin, n.IntervalMin = DefaultDelayMin, DefaultIntervalMin
	if in.DelayMin != nil {
		if *in.DelayMin < 0 {
			return n, InvalidAttribute(path+".delayMin", "delayMin must not be negative.")
		}
		if *in.DelayMin > MaxDelayMin {
			return n, InvalidAttribute(path+".delayMin", "delayMin must be at most %d minutes (a year).", MaxDelayMin)
		}
		n.DelayMin = *in.DelayMin
	}
	if in.IntervalMin != nil {
		if *in.IntervalMin < MinIntervalMin {
			return n, Invalid(CodeNotificationIntervalRange, path+".intervalMin",
				"intervalMin must be at least %d minutes.", MinIntervalMin)
		}
		if *in.IntervalMin > MaxIntervalMin {
			return n, Invalid(CodeNotificationIntervalRange, path+".intervalMin",
				"intervalMin must be at most %d minutes (a year).", MaxIntervalMin)
		}
		n.IntervalMin = *in.IntervalMin
	}

	hasIntegration := kind.Integration != nil && rules.Integrations != nil && rules.Integrations(kind.Integration.Name)
	for _, name := range notificationFieldNames() {
		v := in.Fields[name]
		if v == nil {
			continue
		}
		if _, takes := kind.field(name); !takes {
			return n, InvalidAttribute(path+"."+name, "%s does not apply to %s notifications.", name, n.TypeName)
		}
		n.SetField(name, strings.TrimSpace(*v))
	}
	for _, f := range kind.Fields {
		if f.Required && n.Field(f.Name) == "" && !(hasIntegration && f.Integration != "") {
			return n, MissingAttribute(path + "." + f.Name)
		}
	}
	if err := checkNotificationValues(path, kind, &n); err != nil {
		return n, err
	}

	if reach := kind.People; reach != nil {
		// Neither given: by email, as on the platform; one given: the other is off. Both are
		// stored, so a read shows how people are told.
		email := isTrue(in.EmailEnabled) || (in.EmailEnabled == nil && in.SMSEnabled == nil)
		sms := isTrue(in.SMSEnabled)
		if sms && !reach.SMS {
			return n, InvalidAttribute(path+".smsEnabled", "%s notifications are not sent by SMS.", n.TypeName)
		}
		if email && !reach.Email {
			return n, InvalidAttribute(path+".emailEnabled", "%s notifications are not sent by email.", n.TypeName)
		}
		if !email && !sms {
			return n, InvalidAttribute(path+".emailEnabled", "At least one of emailEnabled and smsEnabled must be true.")
		}
		n.EmailEnabled, n.SMSEnabled = &email, &sms
	} else if in.EmailEnabled != nil || in.SMSEnabled != nil {
		field := "emailEnabled"
		if in.EmailEnabled == nil {
			field = "smsEnabled"
		}
		return n, InvalidAttribute(path+"."+field, "%s does not apply to %s notifications.", field, n.TypeName)
	}

	roles := in.Roles
	if in.Role != nil {
		roles = append([]string{*in.Role}, roles...)
	}
	if len(roles) > 0 {
		if kind.People == nil || kind.People.Roles == nil || rules.Global {
			return n, InvalidAttribute(path+".role", "role does not apply to %s notifications.", n.TypeName)
		}
		for _, r := range roles {
			if !kind.People.Roles(r) {
				return n, Invalid(CodeInvalidEnumValue, path+".role", "Role %s is not a role of a %s notification.", r, n.TypeName)
			}
		}
		n.Roles = dedupe(roles)
	}
	return n, nil
}

// checkNotificationValues checks each field of n its kind declares a check for, after filling
// in its default when it is empty.
func checkNotificationValues(path string, kind Kind, n *Notification) error {
	for _, f := range kind.Fields {
		v := n.Field(f.Name)
		if v == "" {
			v = f.Default
			n.SetField(f.Name, v)
		}
		if v == "" {
			continue
		}
		if f.URL {
			if err := CheckHTTPURL(path+"."+f.Name, v); err != nil {
				return err
			}
		}
		if f.Check != nil {
			if err := f.Check(path+"."+f.Name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckEmailAddress is a Check of a field that is one plain email address.
func CheckEmailAddress(param, v string) error {
	if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
		return InvalidAttribute(param, "%q is not an email address.", v)
	}
	return nil
}

// CheckPhoneNumber is a Check of a field that is a phone number.
func CheckPhoneNumber(param, v string) error {
	if !phoneNumber.MatchString(v) {
		return InvalidAttribute(param, "%q is not a phone number.", v)
	}
	return nil
}

// CheckHTTPURL is a Check of a field that is an absolute http or https URL.
func CheckHTTPURL(param, v string) error {
	if !ValidHTTPURL(v) {
		return InvalidAttribute(param, "%s must be an absolute http or https URL.", fieldOf(param))
	}
	return nil
}

var phoneNumber = regexp.MustCompile(`^\+?[0-9][0-9 ().-]{5,20}$`)

// ValidHTTPURL reports whether s is an absolute http(s) URL with a host.
func ValidHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isTrue(b *bool) bool { return b != nil && *b }

func dedupe(ss []string) []string {
	out := make([]string, 0, len(ss))
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// MatcherInput is a matcher as a request carries it; read responses have used `field` for
// `fieldName`, so both are accepted.
type MatcherInput struct {
	FieldName *string `json:"fieldName"`
	Field     *string `json:"field"`
	Operator  *string `json:"operator"`
	Value     *string `json:"value"`
}

// AlertRuleInput is the rule part of an alert configuration request.
type AlertRuleInput struct {
	Enabled         *bool               `json:"enabled"`
	EventTypeName   *string             `json:"eventTypeName"`
	Matchers        []MatcherInput      `json:"matchers"`
	LabelMatchers   []LabelMatcherInput `json:"labelMatchers"`
	MetricThreshold *MetricThreshold    `json:"metricThreshold"`
	Threshold       *Threshold          `json:"threshold"`
	Notifications   []NotificationInput `json:"notifications"`
}

// Validate checks a rule and returns it as stored. An omitted `enabled` means disabled, as the
// document says of PUT; creating follows the same rule so that one request means one thing.
func (in AlertRuleInput) Validate(rules NotificationRules) (AlertRule, error) {
	var r AlertRule
	if in.EventTypeName == nil || *in.EventTypeName == "" {
		return r, MissingAttribute("eventTypeName")
	}
	r.EventTypeName = *in.EventTypeName
	info, ok := LookupEventType(r.EventTypeName)
	if !ok {
		return r, NotOneOf("eventTypeName", r.EventTypeName, EventTypeNames(), "Event type %s is not an alert type.", r.EventTypeName)
	}
	r.Enabled = in.Enabled != nil && *in.Enabled

	r.Matchers = []Matcher{}
	for i, m := range in.Matchers {
		mm, err := m.validate(fmt.Sprintf("matchers[%d]", i), info)
		if err != nil {
			return r, err
		}
		r.Matchers = append(r.Matchers, mm)
	}
	if len(in.LabelMatchers) > 0 && r.EventTypeName != EventTypePrometheusAlert {
		return r, InvalidAttribute("labelMatchers", "labelMatchers apply only to %s.", EventTypePrometheusAlert)
	}
	for i, m := range in.LabelMatchers {
		lm, err := m.Validate("labelMatchers", i)
		if err != nil {
			return r, err
		}
		r.LabelMatchers = append(r.LabelMatchers, lm)
	}

	switch {
	case r.EventTypeName == "OUTSIDE_METRIC_THRESHOLD":
		if in.Threshold != nil {
			return r, InvalidAttribute("threshold", "OUTSIDE_METRIC_THRESHOLD takes metricThreshold, not threshold.")
		}
		if in.MetricThreshold == nil {
			return r, MissingAttribute("metricThreshold")
		}
		mt, err := in.MetricThreshold.validate()
		if err != nil {
			return r, err
		}
		r.MetricThreshold = &mt
	default:
		if in.MetricThreshold != nil {
			return r, InvalidAttribute("metricThreshold", "metricThreshold applies only to OUTSIDE_METRIC_THRESHOLD.")
		}
		if in.Threshold != nil {
			if !info.Thresholded {
				return r, InvalidAttribute("threshold", "Event type %s takes no threshold.", r.EventTypeName)
			}
			t := *in.Threshold
			if t.Operator == "" {
				return r, MissingAttribute("threshold.operator")
			}
			if !ValidThresholdOperator(t.Operator) {
				return r, Invalid(CodeInvalidEnumValue, "threshold.operator", "threshold.operator must be GREATER_THAN or LESS_THAN.")
			}
			if t.Units != "" {
				if _, ok := UnitKindOf(t.Units); !ok {
					return r, NotOneOf("threshold.units", t.Units, UnitNames(), "Unknown units %s.", t.Units)
				}
			}
			r.Threshold = &t
		} else if info.Thresholded {
			return r, MissingAttribute("threshold")
		}
	}

	if len(in.Notifications) == 0 {
		return r, Errorf(KindInvalid, CodeMissingNotifications, []any{"notifications"}, "At least one notification is required.")
	}
	for i, n := range in.Notifications {
		path := fmt.Sprintf("notifications[%d]", i)
		nn, err := n.Validate(path, rules)
		if err != nil {
			return r, err
		}
		if err := nn.keepSecrets(path, i, rules.Current); err != nil {
			return r, err
		}
		r.Notifications = append(r.Notifications, nn)
	}
	return r, nil
}

// keepSecrets puts back the stored secret for each secret of n (notification i of a request)
// that is the mask a read showed of it, so that a configuration read, edited and written back
// keeps its credentials. The secret is that of current notification i when it has n's type
// (the configuration written back in its order), else of the first current notification of
// n's type whose secret masks to the given value (one removed or inserted before it). A mask
// that stands for no stored secret is refused rather than stored: a notification whose key is
// a row of asterisks would fail at every delivery. A secret tied to a target (a webhook's) is
// kept only while the target stays on the host it was configured for: a moved target needs
// its secret given again, so that a new host never receives what the secret signs.
func (n *Notification) keepSecrets(path string, i int, current []Notification) error {
	kind, _ := LookupKind(n.TypeName)
	candidates := current
	if i < len(current) {
		candidates = append([]Notification{current[i]}, current...)
	}
	keptFrom := map[string]Notification{}
	for _, f := range kind.Fields {
		given := n.Field(f.Name)
		if f.Mask == nil || given == "" {
			continue
		}
		kept := false
		for _, c := range candidates {
			if stored := c.Field(f.Name); c.TypeName == n.TypeName && stored != "" && f.Mask(stored) == given {
				n.SetField(f.Name, stored)
				kept, keptFrom[f.Name] = true, c
				break
			}
		}
		if !kept && IsMask(given) {
			return InvalidAttribute(path+"."+f.Name, "%s is masked: give the secret itself.", f.Name)
		}
	}
	for _, f := range kind.Fields {
		c, kept := keptFrom[f.Name]
		if !kept || f.Target == "" {
			continue
		}
		if !SameHost(c.Field(f.Target), n.Field(f.Target)) {
			return InvalidAttribute(path+"."+f.Name, "%s moved to another host: give %s again.", f.Target, f.Name)
		}
	}
	return nil
}

func (m MatcherInput) validate(path string, info EventTypeInfo) (Matcher, error) {
	fields := MatcherFields(info.Category)
	if len(fields) == 0 {
		return Matcher{}, InvalidAttribute("matchers", "Event type %s takes no matchers.", info.Name)
	}
	name := m.FieldName
	if name == nil {
		name = m.Field
	}
	if name == nil || *name == "" {
		return Matcher{}, MissingAttribute(path + ".fieldName")
	}
	if !contains(fields, *name) {
		return Matcher{}, NotOneOf(path+".fieldName", *name, fields, "Matcher field %s does not apply to %s alerts.", *name, info.Name)
	}
	if m.Operator == nil || *m.Operator == "" {
		return Matcher{}, MissingAttribute(path + ".operator")
	}
	if !ValidMatcherOperator(*m.Operator) {
		return Matcher{}, NotOneOf(path+".operator", *m.Operator, MatcherOperators(), "Unknown matcher operator %s.", *m.Operator)
	}
	if m.Value == nil {
		return Matcher{}, MissingAttribute(path + ".value")
	}
	out := Matcher{FieldName: *name, Operator: *m.Operator, Value: *m.Value}
	if out.Operator == "REGEX" {
		if _, err := regexp.Compile(out.Value); err != nil {
			return Matcher{}, InvalidAttribute(path+".value", "The value is not a valid regular expression.")
		}
	}
	if out.FieldName == "TYPE_NAME" && (out.Operator == "EQUALS" || out.Operator == "NOT_EQUALS") && !ValidTypeNameValue(out.Value) {
		return Matcher{}, Invalid(CodeInvalidEnumValue, path+".value", "TYPE_NAME is one of PRIMARY, SECONDARY, STANDALONE, CONFIG, ROUTER_PROCESS.")
	}
	return out, nil
}

func (mt MetricThreshold) validate() (MetricThreshold, error) {
	if mt.MetricName == "" {
		return mt, MissingAttribute("metricThreshold.metricName")
	}
	kind, ok := LookupMetric(mt.MetricName)
	if !ok {
		return mt, NotOneOf("metricThreshold.metricName", mt.MetricName, MetricNames(), "Unknown metric %s.", mt.MetricName)
	}
	if mt.Mode == "" {
		mt.Mode = "AVERAGE"
	}
	if mt.Mode != "AVERAGE" {
		return mt, Invalid(CodeInvalidEnumValue, "metricThreshold.mode", "metricThreshold.mode must be AVERAGE.")
	}
	if mt.Operator == "" {
		return mt, MissingAttribute("metricThreshold.operator")
	}
	if !ValidThresholdOperator(mt.Operator) {
		return mt, Invalid(CodeInvalidEnumValue, "metricThreshold.operator", "metricThreshold.operator must be GREATER_THAN or LESS_THAN.")
	}
	if mt.Units == "" {
		mt.Units = map[UnitKind]string{RawUnits: "RAW", DataUnits: "BYTES", TimeUnits: "MILLISECONDS"}[kind]
	}
	uk, ok := UnitKindOf(mt.Units)
	if !ok {
		return mt, NotOneOf("metricThreshold.units", mt.Units, UnitNames(), "Unknown units %s.", mt.Units)
	}
	if uk != kind {
		return mt, InvalidAttribute("metricThreshold.units", "Units %s do not measure %s.", mt.Units, mt.MetricName)
	}
	return mt, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
