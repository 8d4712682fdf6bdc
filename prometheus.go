package herald

// Alerts from Prometheus (event type PROMETHEUS_ALERT) in Herald's model, as pure functions:
// what a valid one is, what it is about (its label set), when it stops firing unless Prometheus
// reports it again, and what a re-report may change. docs/lifecycle.md#alerts-from-prometheus
// says the same in prose.

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a Prometheus alert's label set and annotations. Prometheus itself sets none; these
// keep one alert well inside what a notice, a log line and an alert document may hold while
// leaving room for the label sets real rules make (a few dozen labels, runbook texts).
const (
	MaxPrometheusLabels      = 128       // labels, and annotations, of one alert
	MaxLabelNameLength       = 256       // bytes of a label or annotation name
	MaxLabelValueLength      = 4096      // bytes of a label value
	MaxAnnotationValueLength = 16 * 1024 // bytes of an annotation value
	MaxGeneratorURLLength    = 4096      // bytes of a generator URL
)

// MaxUnroutedAlerts bounds the Prometheus alerts a project keeps that no alert configuration
// took (UnroutedAlert): a new one past it is not kept, until others end.
const MaxUnroutedAlerts = 10_000

// PrometheusResolveTimeout is how long a Prometheus alert posted without endsAt fires unless it
// is posted again: Alertmanager's default resolve_timeout.
const PrometheusResolveTimeout = 5 * time.Minute

// IsPrometheus reports whether the observation is an alert from Prometheus.
func (o Observation) IsPrometheus() bool { return o.EventTypeName == EventTypePrometheusAlert }

// validatePrometheus checks a PROMETHEUS_ALERT item (active already checked): at least one
// label, names and values UTF-8 and bounded, a generator URL that is an http(s) URL, an end not
// before its start, and none of the target fields of other conditions (its labels are its
// target).
func (o Observation) validatePrometheus(bad func(field, format string, args ...any) error) error {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"hostId", o.HostID != ""}, {"hostnameAndPort", o.HostnameAndPort != ""}, {"typeName", o.TypeName != ""},
		{"replicaSetName", o.ReplicaSetName != ""}, {"clusterId", o.ClusterID != ""}, {"clusterName", o.ClusterName != ""},
		{"shardName", o.ShardName != ""}, {"sourceTypeName", o.SourceTypeName != ""},
		{"currentValue", o.CurrentValue != nil}, {"disks", len(o.Disks) > 0},
	} {
		if f.set {
			return bad(f.name, "a PROMETHEUS_ALERT is identified by its labels and takes no %s", f.name)
		}
	}
	if len(o.Labels) == 0 {
		return bad("labels", "a PROMETHEUS_ALERT needs at least one label")
	}
	if err := checkLabelSet("labels", o.Labels, MaxLabelValueLength, bad); err != nil {
		return err
	}
	if err := checkLabelSet("annotations", o.Annotations, MaxAnnotationValueLength, bad); err != nil {
		return err
	}
	if o.GeneratorURL != "" && (len(o.GeneratorURL) > MaxGeneratorURLLength || !ValidHTTPURL(o.GeneratorURL)) {
		return bad("generatorURL", "an absolute http or https URL of at most %d bytes", MaxGeneratorURLLength)
	}
	if o.EndsAt != nil && o.At != nil && o.EndsAt.Before(o.At.Time) {
		return bad("endsAt", "the end %s is before the start %s", o.EndsAt, o.At)
	}
	return nil
}

// checkLabelSet bounds a label set or annotations (field) and refuses names that are empty,
// not UTF-8 or hold control characters, and values that are not UTF-8.
func checkLabelSet(field string, ls Labels, maxValue int, bad func(field, format string, args ...any) error) error {
	if len(ls) > MaxPrometheusLabels {
		return bad(field, "at most %d entries", MaxPrometheusLabels)
	}
	for _, name := range slices.Sorted(maps.Keys(ls)) { // sorted: the same request names the same entry
		if name == "" || len(name) > MaxLabelNameLength || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
			return bad(field, "the name %s is not 1 to %d bytes of UTF-8 without control characters", strconv.Quote(name), MaxLabelNameLength)
		}
		if v := ls[name]; len(v) > maxValue || !utf8.ValidString(v) {
			return bad(field+"."+name, "a value is at most %d bytes of UTF-8", maxValue)
		}
	}
	return nil
}

// prometheusOnly refuses the fields of a Prometheus alert on any other item.
func (o Observation) prometheusOnly(bad func(field, format string, args ...any) error) error {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"labels", o.Labels != nil}, {"annotations", o.Annotations != nil},
		{"generatorURL", o.GeneratorURL != ""}, {"endsAt", o.EndsAt != nil},
	} {
		if f.set {
			return bad(f.name, "%s applies only to %s", f.name, EventTypePrometheusAlert)
		}
	}
	return nil
}

// labelSetKey is a label set as a target key part: its pairs in name order, each part
// length-prefixed, so two label sets have the same key only when they are equal (the 64-bit
// fingerprint only names them: it could, however rarely, collide).
func labelSetKey(b *strings.Builder, ls Labels) {
	for _, n := range slices.Sorted(maps.Keys(ls)) {
		for _, s := range [2]string{n, ls[n]} {
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
}

// ExpiresAt is when a Prometheus alert reported at now stops firing unless it is reported
// again: its endsAt, else now + PrometheusResolveTimeout (as Alertmanager does). Zero for any
// other observation: a condition holds until it is reported cleared.
func (o Observation) ExpiresAt(now time.Time) time.Time {
	if !o.IsPrometheus() {
		return time.Time{}
	}
	if o.EndsAt != nil {
		return o.EndsAt.Time.Round(0)
	}
	return now.Round(0).Add(PrometheusResolveTimeout)
}

// FiringAt reports whether the observation still says its condition holds at now: false for a
// Prometheus alert whose endsAt has passed by the time it is evaluated (Prometheus resolved
// it, or stopped re-sending it), true otherwise. Holds decides the rest.
func (o Observation) FiringAt(now time.Time) bool {
	return !o.IsPrometheus() || o.EndsAt == nil || o.EndsAt.After(now)
}

// Expired reports whether an alert that ends unless reported again (a Prometheus alert) has
// passed its expiry at now.
func (s Schedule) Expired(now time.Time) bool { return !s.Expires.IsZero() && !now.Before(s.Expires) }

// RefreshDigest names what a re-report of a Prometheus alert may change in its alert (its
// annotations and generator URL; its labels are its identity): a re-report with the alert's
// digest changes nothing but the expiry, so the engine can renew it without reading the alert.
func RefreshDigest(annotations Labels, generatorURL string) string {
	var b strings.Builder
	labelSetKey(&b, annotations)
	b.WriteString(strconv.Itoa(len(generatorURL)))
	b.WriteByte(':')
	b.WriteString(generatorURL)
	sum := sha1.Sum([]byte(b.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// RefreshDigest of the alert (see the function).
func (a Alert) RefreshDigest() string { return RefreshDigest(a.Annotations, a.GeneratorURL) }

// RefreshDigest of the observation (see the function).
func (o Observation) RefreshDigest() string { return RefreshDigest(o.Annotations, o.GeneratorURL) }

// refreshPrometheus records a re-report's annotations and generator URL when they changed
// (Prometheus renders annotation templates at every evaluation).
func refreshPrometheus(a Alert, o Observation, now time.Time) Alert {
	if a.RefreshDigest() == o.RefreshDigest() {
		return a
	}
	a.Annotations, a.GeneratorURL = maps.Clone(o.Annotations), o.GeneratorURL
	a.Updated = At(now)
	return a
}

// LabelMatcherInput is a label matcher as a request carries it: isEqual defaults to true and
// isRegex to false, as in Alertmanager's API.
type LabelMatcherInput struct {
	Name    *string `json:"name"`
	Value   *string `json:"value"`
	IsRegex *bool   `json:"isRegex"`
	IsEqual *bool   `json:"isEqual"`
}

// Validate checks matcher i of field (e.g. "labelMatchers") and returns it as stored.
func (in LabelMatcherInput) Validate(field string, i int) (LabelMatcher, error) {
	path := fmt.Sprintf("%s[%d]", field, i)
	if in.Name == nil || *in.Name == "" {
		return LabelMatcher{}, MissingAttribute(path + ".name")
	}
	if in.Value == nil {
		return LabelMatcher{}, MissingAttribute(path + ".value")
	}
	m := LabelMatcher{Name: *in.Name, Value: *in.Value, IsRegex: isTrue(in.IsRegex), IsEqual: in.IsEqual == nil || *in.IsEqual}
	if len(m.Name) > MaxLabelNameLength || len(m.Value) > MaxLabelValueLength {
		return LabelMatcher{}, InvalidAttribute(path, "A matcher's name is at most %d bytes and its value %d.", MaxLabelNameLength, MaxLabelValueLength)
	}
	if err := m.Validate(); err != nil {
		return LabelMatcher{}, InvalidAttribute(path, "%s", err.Error())
	}
	return m, nil
}
