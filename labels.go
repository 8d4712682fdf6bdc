package herald

// Label sets and label matchers, as Prometheus and Alertmanager define them: an alert from
// Prometheus is identified by its label set's fingerprint, and alert configurations, silences
// (maintenance windows that carry matchers) and alert listings select alerts with matchers in
// Alertmanager's syntax (`severity="critical"`, `job=~"api|db"`, `{env!="dev",team!~"ops.*"}`).

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EventTypePrometheusAlert is the event type of alerts a Prometheus server sent.
const EventTypePrometheusAlert = "PROMETHEUS_ALERT"

// Labels is a Prometheus label set: names to values.
type Labels map[string]string

// Fingerprint is the label set's identity as Prometheus and Alertmanager compute it (FNV-1a 64
// over the names in order, each name and value followed by the byte 0xff), as 16 hex digits:
// amtool and Alertmanager's API show the same value for the same labels.
func (ls Labels) Fingerprint() string {
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	slices.Sort(names)
	h := fnv.New64a()
	sep := []byte{0xff}
	for _, n := range names {
		h.Write([]byte(n))
		h.Write(sep)
		h.Write([]byte(ls[n]))
		h.Write(sep)
	}
	return fmt.Sprintf("%016x", h.Sum64())
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

// String is the matcher in Alertmanager's syntax, the value quoted.
func (m LabelMatcher) String() string {
	return m.Name + m.Operator() + strconv.Quote(m.Value)
}

// Validate refuses an empty name, a name or value that is not UTF-8, and a regular expression
// that does not compile.
func (m LabelMatcher) Validate() error {
	if m.Name == "" || !utf8.ValidString(m.Name) || !utf8.ValidString(m.Value) {
		return fmt.Errorf("bad matcher %q", m.String())
	}
	if m.IsRegex {
		if _, err := regexp.Compile(m.Value); err != nil {
			return fmt.Errorf("bad regular expression in matcher %s: %v", m.String(), err)
		}
	}
	return nil
}

// Matches reports whether labels satisfy the matcher. A missing label has the empty value, as
// in Alertmanager (so `team=""` matches alerts without a team). A regular expression must match
// the whole value; one that does not compile matches nothing.
func (m LabelMatcher) Matches(labels Labels) bool {
	v := labels[m.Name]
	if !m.IsRegex {
		return (v == m.Value) == m.IsEqual
	}
	// (?s): a dot matches a newline too, as in Alertmanager.
	re := wholeMatch("(?s:" + m.Value + ")")
	if re == nil {
		return false
	}
	return re.MatchString(v) == m.IsEqual
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

// ParseLabelMatchers parses a list of matchers in Alertmanager's syntax: optionally wrapped in
// braces, separated by commas, each `name op value` with op one of = != =~ !~ and the value
// either double-quoted (Go escapes) or bare (up to the next comma). Names may be quoted too.
// An empty list (`""` or `{}`) is no matchers.
func ParseLabelMatchers(s string) ([]LabelMatcher, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return nil, fmt.Errorf("matchers %q: missing closing brace", s)
		}
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	var out []LabelMatcher
	for s != "" {
		m, rest, err := parseLabelMatcher(s)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("matchers: expected a comma before %q", rest)
		}
		s = strings.TrimSpace(rest[1:])
		if s == "" {
			return nil, fmt.Errorf("matchers: a trailing comma")
		}
	}
	return out, nil
}

// ParseLabelMatcher parses exactly one matcher (amtool's `alertname=X` arguments).
func ParseLabelMatcher(s string) (LabelMatcher, error) {
	m, rest, err := parseLabelMatcher(strings.TrimSpace(s))
	if err != nil {
		return m, err
	}
	if strings.TrimSpace(rest) != "" {
		return m, fmt.Errorf("matcher %q: unexpected %q after the value", s, rest)
	}
	return m, nil
}

func parseLabelMatcher(s string) (LabelMatcher, string, error) {
	var m LabelMatcher
	name, rest, err := quotedOrBare(s, "=!~,")
	if err != nil {
		return m, "", err
	}
	m.Name = strings.TrimSpace(name)
	rest = strings.TrimLeft(rest, " \t")
	switch {
	case strings.HasPrefix(rest, "=~"):
		m.IsRegex, m.IsEqual, rest = true, true, rest[2:]
	case strings.HasPrefix(rest, "!~"):
		m.IsRegex, rest = true, rest[2:]
	case strings.HasPrefix(rest, "!="):
		rest = rest[2:]
	case strings.HasPrefix(rest, "="):
		m.IsEqual, rest = true, rest[1:]
	default:
		return m, "", fmt.Errorf("matcher %q: expected one of = != =~ !~ after the name", s)
	}
	value, rest, err := quotedOrBare(strings.TrimLeft(rest, " \t"), ",")
	if err != nil {
		return m, "", err
	}
	m.Value = value
	if err := m.Validate(); err != nil {
		return m, "", err
	}
	return m, rest, nil
}

// quotedOrBare reads a double-quoted Go string, or else everything up to the first byte of
// stop (trimmed of surrounding spaces), and returns it with what follows.
func quotedOrBare(s, stop string) (string, string, error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", fmt.Errorf("matchers: an unterminated quoted string in %q", s)
		}
		v, _ := strconv.Unquote(q)
		return v, s[len(q):], nil
	}
	i := strings.IndexAny(s, stop)
	if i < 0 {
		i = len(s)
	}
	return strings.TrimSpace(s[:i]), s[i:], nil
}
