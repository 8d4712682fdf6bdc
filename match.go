package herald

// Matching observations (docs/lifecycle.md#observations) to alert rules: which rule an observation is about,
// whether its condition holds, and which target it names. Pure functions; the alert engine
// calls them for every item of every observations request, so they stay cheap (compiled
// matcher regular expressions are cached).

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// TargetKey names the entity observation o is about, so that one condition opens one alert per
// configuration and target however often it is reported: built from the target fields that apply
// (hostId; else clusterId/clusterName + replicaSetName/shardName; ...), stable and unambiguous
// (escape or length-prefix parts so different targets never collide).
//
// The key is a kind letter followed by length-prefixed parts ("4:host"):
//   - "p" + the label set (each name and value, in name order) for an alert from Prometheus:
//     one label set (one fingerprint) is one alert per configuration;
//   - "h" + hostId when o names a host: a host is its id (hostnameAndPort, replica set and type
//     describe it and may change);
//   - otherwise "g" + cluster (clusterId, or else clusterName, tagged "i" or "n" so an id never
//     equals a name) + replicaSetName + shardName + sourceTypeName (a backup of a replica set
//     and of a config server of the same names are different targets);
//   - "g" with every part empty is an observation naming no target at all (validation refuses
//     such conditions), one per configuration.
//
// The metric and event type are not part of the key: they are fixed by the configuration.
func (o Observation) TargetKey() string {
	var b strings.Builder
	part := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	if o.HeartbeatName != "" {
		b.WriteByte('b')
		part(o.HeartbeatName)
		return b.String()
	}
	if o.IsPrometheus() {
		b.WriteByte('p')
		labelSetKey(&b, o.Labels)
		return b.String()
	}
	if o.HostID != "" {
		b.WriteByte('h')
		part(o.HostID)
		return b.String()
	}
	b.WriteByte('g')
	switch {
	case o.ClusterID != "":
		b.WriteByte('i')
		part(o.ClusterID)
	case o.ClusterName != "":
		b.WriteByte('n')
		part(o.ClusterName)
	default:
		b.WriteByte('-')
	}
	part(o.ReplicaSetName)
	part(o.ShardName)
	part(o.SourceTypeName)
	return b.String()
}

// Matches reports whether rule is about o: same eventTypeName (a measurement is about
// OUTSIDE_METRIC_THRESHOLD with rule.MetricThreshold.MetricName == o.MetricName), and every matcher
// holds on o's fields: HOSTNAME (host part of hostnameAndPort), PORT, HOSTNAME_AND_PORT,
// REPLICA_SET_NAME, TYPE_NAME, SHARD_NAME, CLUSTER_NAME; operators EQUALS, NOT_EQUALS, CONTAINS,
// NOT_CONTAINS, STARTS_WITH, ENDS_WITH, REGEX (the whole value must match, as the platform's
// Java regex `matches` does). A matcher whose field o does not have does not hold. Every label
// matcher (labelMatchers, for PROMETHEUS_ALERT) holds on o's labels. Disabled rules never match.
//
// Comparisons are exact and case-sensitive, as the platform's String methods are. An unknown
// field or operator, or a regular expression that does not compile, does not hold. A
// hostnameAndPort without a port ("db1", "[::1]", "::1") has a hostname and no port.
func (r AlertRule) Matches(o Observation) bool {
	if !r.Enabled {
		return false
	}
	if o.IsMeasurement() {
		if r.EventTypeName != "OUTSIDE_METRIC_THRESHOLD" || r.MetricThreshold == nil || r.MetricThreshold.MetricName != o.MetricName {
			return false
		}
	} else if o.EventTypeName == "" || o.EventTypeName != r.EventTypeName {
		return false
	}
	for _, m := range r.Matchers {
		if !m.holds(o) {
			return false
		}
	}
	return MatchAll(r.LabelMatchers, o.Labels)
}

// holds reports whether matcher m holds on o.
func (m Matcher) holds(o Observation) bool {
	v, ok := matcherField(m.FieldName, o)
	if !ok || v == "" {
		return false
	}
	switch m.Operator {
	case "EQUALS":
		return v == m.Value
	case "NOT_EQUALS":
		return v != m.Value
	case "CONTAINS":
		return strings.Contains(v, m.Value)
	case "NOT_CONTAINS":
		return !strings.Contains(v, m.Value)
	case "STARTS_WITH":
		return strings.HasPrefix(v, m.Value)
	case "ENDS_WITH":
		return strings.HasSuffix(v, m.Value)
	case "REGEX":
		re := wholeMatch(m.Value)
		return re != nil && re.MatchString(v)
	}
	return false
}

// matcherField is the value of o that a matcher's fieldName names; false for an unknown field.
func matcherField(field string, o Observation) (string, bool) {
	switch field {
	case "HOSTNAME":
		h, _ := splitHostPort(o.HostnameAndPort)
		return h, true
	case "PORT":
		_, p := splitHostPort(o.HostnameAndPort)
		return p, true
	case "HOSTNAME_AND_PORT":
		return o.HostnameAndPort, true
	case "REPLICA_SET_NAME":
		return o.ReplicaSetName, true
	case "TYPE_NAME":
		return o.TypeName, true
	case "SHARD_NAME":
		return o.ShardName, true
	case "CLUSTER_NAME":
		return o.ClusterName, true
	case "HEARTBEAT_NAME":
		return o.HeartbeatName, true
	}
	return "", false
}

// splitHostPort splits "host:port" and "[v6]:port"; a value without a port is all host
// (brackets of a bare "[v6]" removed, and a bare IPv6 address "::1" kept whole).
func splitHostPort(s string) (host, port string) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1], ""
	}
	return s, ""
}

// regexCache holds the compiled whole-match form of matcher patterns (nil for one that does
// not compile). Patterns come from alert configurations, so there are few; the cache is
// emptied if configuration churn ever grows it past regexCacheMax.
var regexCache struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

const regexCacheMax = 4096

// wholeMatch is pattern anchored at both ends of the text (Java's Matcher.matches), nil when
// it does not compile. \A and \z hold whatever flags the pattern sets, since flags set inside
// the group end with it.
func wholeMatch(pattern string) *regexp.Regexp {
	regexCache.Lock()
	defer regexCache.Unlock()
	if re, ok := regexCache.m[pattern]; ok {
		return re
	}
	// The pattern must compile alone first: "a)|(b" would otherwise escape the anchoring group.
	var re *regexp.Regexp
	if _, err := regexp.Compile(pattern); err == nil {
		re, _ = regexp.Compile(`\A(?:` + pattern + `)\z`)
	}
	if regexCache.m == nil || len(regexCache.m) >= regexCacheMax {
		regexCache.m = map[string]*regexp.Regexp{}
	}
	regexCache.m[pattern] = re
	return re
}

// Holds reports whether the condition of rule holds for o: a measurement whose value, converted
// from o.Units to the threshold's units (ConvertUnits), is beyond the MetricThreshold
// (GREATER_THAN: value > threshold; LESS_THAN: value < threshold); a condition that is active and,
// when the rule has a Threshold and o has a currentValue, whose currentValue is beyond it (units
// converted when both have units). Units that cannot convert: does not hold.
//
// A measurement without a value, a rule without a metricThreshold for a measurement, and an
// unknown operator do not hold. When only one of a threshold and a currentValue has units the
// numbers are compared as they are.
func (r AlertRule) Holds(o Observation) bool {
	if o.IsMeasurement() {
		mt := r.MetricThreshold
		if mt == nil || o.Value == nil {
			return false
		}
		v, ok := ConvertUnits(*o.Value, o.Units, mt.Units)
		return ok && beyond(v, mt.Operator, mt.Threshold)
	}
	if o.Active == nil || !*o.Active {
		return false
	}
	th, cv := r.Threshold, o.CurrentValue
	if th == nil || cv == nil {
		return true
	}
	v := cv.Number
	if th.Units != "" && cv.Units != "" {
		var ok bool
		if v, ok = ConvertUnits(v, cv.Units, th.Units); !ok {
			return false
		}
	}
	return beyond(v, th.Operator, th.Threshold)
}

// beyond reports whether v is past threshold in the direction operator names.
func beyond(v float64, operator string, threshold float64) bool {
	switch operator {
	case "GREATER_THAN":
		return v > threshold
	case "LESS_THAN":
		return v < threshold
	}
	return false
}
