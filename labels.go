package herald

// Label sets and label matchers, as Prometheus and Alertmanager define them: an alert from
// Prometheus is identified by its label set's fingerprint, and alert configurations, silences
// (maintenance windows that carry matchers) and alert listings select alerts with matchers in
// Alertmanager's syntax (`severity="critical"`, `job=~"api|db"`, `team!~"ops.*"`). Both are
// Alertmanager's own code (prometheus/common's model, Alertmanager's pkg/labels and its
// parser), so that Herald's answers are Alertmanager's.

import (
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/matcher/compat"
	"github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
)

// EventTypePrometheusAlert is the event type of alerts a Prometheus server sent.
const EventTypePrometheusAlert = "PROMETHEUS_ALERT"

// Labels is a Prometheus label set: names to values.
type Labels map[string]string

// Fingerprint is the label set's identity as Prometheus and Alertmanager compute it
// (model.LabelSet.Fingerprint), as 16 hex digits: amtool and Alertmanager's API show the same
// value for the same labels.
func (ls Labels) Fingerprint() string {
	set := make(model.LabelSet, len(ls))
	for n, v := range ls {
		set[model.LabelName(n)] = model.LabelValue(v)
	}
	return set.Fingerprint().String()
}

// LabelMatcher is one Alertmanager matcher, in the shape Alertmanager's API v2 uses for
// silences: name, value, whether the value is a regular expression, whether it must equal (or
// must not).
type LabelMatcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// Operator is the matcher's operator in Alertmanager's syntax: =, !=, =~ or !~.
func (m LabelMatcher) Operator() string {
	switch {
	case m.IsRegex && m.IsEqual:
		return "=~"
	case m.IsRegex:
		return "!~"
	case m.IsEqual:
		return "="
	}
	return "!="
}

// matchType is the matcher's type in Alertmanager's terms.
func (m LabelMatcher) matchType() labels.MatchType {
	switch {
	case m.IsRegex && m.IsEqual:
		return labels.MatchRegexp
	case m.IsRegex:
		return labels.MatchNotRegexp
	case m.IsEqual:
		return labels.MatchEqual
	}
	return labels.MatchNotEqual
}

// String is the matcher in Alertmanager's syntax, the value quoted.
func (m LabelMatcher) String() string {
	return m.Name + m.Operator() + strconv.Quote(m.Value)
}

// Validate refuses an empty name, a name or value that is not UTF-8, and a regular expression
// that Alertmanager's matcher does not compile.
func (m LabelMatcher) Validate() error {
	if m.Name == "" || !utf8.ValidString(m.Name) || !utf8.ValidString(m.Value) {
		return fmt.Errorf("bad matcher %q", m.String())
	}
	if m.IsRegex {
		if _, err := labels.NewMatcher(m.matchType(), m.Name, m.Value); err != nil {
			return fmt.Errorf("bad regular expression in matcher %s: %v", m.String(), err)
		}
	}
	return nil
}

// Matches reports whether labels satisfy the matcher, as Alertmanager's matcher decides
// (labels.Matcher): a missing label has the empty value (so `team=""` matches alerts without
// a team); a regular expression must match the whole value. One that does not compile
// matches nothing.
func (m LabelMatcher) Matches(ls Labels) bool {
	v := ls[m.Name]
	if !m.IsRegex { // no regular expression to compile: the matcher is made here
		return (&labels.Matcher{Type: m.matchType(), Name: m.Name, Value: m.Value}).Matches(v)
	}
	am := regexMatcher(m)
	return am != nil && am.Matches(v)
}

// regexMatchers are Alertmanager's matchers of the regular expressions matched so far, each
// compiled once (nil: does not compile); emptied when it reaches regexCacheMax.
var regexMatchers struct {
	sync.Mutex
	m map[LabelMatcher]*labels.Matcher
}

func regexMatcher(m LabelMatcher) *labels.Matcher {
	regexMatchers.Lock()
	defer regexMatchers.Unlock()
	if am, ok := regexMatchers.m[m]; ok {
		return am
	}
	am, err := labels.NewMatcher(m.matchType(), m.Name, m.Value)
	if err != nil {
		am = nil
	}
	if regexMatchers.m == nil || len(regexMatchers.m) >= regexCacheMax {
		regexMatchers.m = map[LabelMatcher]*labels.Matcher{}
	}
	regexMatchers.m[m] = am
	return am
}

// MatchAll reports whether labels satisfy every matcher (no matchers: every label set).
func MatchAll(ms []LabelMatcher, labels Labels) bool {
	for _, m := range ms {
		if !m.Matches(labels) {
			return false
		}
	}
	return true
}

// parseMatcher is the parser Alertmanager's API reads a filter's matcher with by default:
// its UTF-8 parser, falling back to the classic one (compat.FallbackMatcherParser).
var parseMatcher = compat.FallbackMatcherParser(promslog.NewNopLogger())

// ParseLabelMatcher parses one matcher in Alertmanager's syntax (`severity="critical"`,
// `job=~"api|db"`, an amtool argument `alertname=X`), with Alertmanager's own parser, as its
// API parses each filter.
func ParseLabelMatcher(s string) (LabelMatcher, error) {
	am, err := parseMatcher(s, "api")
	if err != nil {
		return LabelMatcher{}, fmt.Errorf("matcher %q: %v", s, err)
	}
	m := LabelMatcher{Name: am.Name, Value: am.Value,
		IsRegex: am.Type == labels.MatchRegexp || am.Type == labels.MatchNotRegexp,
		IsEqual: am.Type == labels.MatchRegexp || am.Type == labels.MatchEqual}
	return m, m.Validate()
}
