package herald

import (
	"testing"
)

func TestMatches(t *testing.T) {
	yes := true
	v := 1.0
	host := Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h1", HostnameAndPort: "db1.example.com:27017",
		TypeName: "PRIMARY", ReplicaSetName: "rs-prod", ShardName: "shard-01", ClusterName: "cluster-a"}
	bare := Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h2"} // no target descriptions
	v6 := Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h3", HostnameAndPort: "[2001:db8::1]:27018"}
	noPort := Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h4", HostnameAndPort: "db4"}
	mem := Observation{MetricName: "MEMORY_RESIDENT", Value: &v, Units: "GIGABYTES", HostID: "h1", HostnameAndPort: "db1:27017"}

	rule := func(m ...Matcher) AlertRule { return AlertRule{Enabled: true, EventTypeName: "HOST_DOWN", Matchers: m} }
	m := func(field, op, value string) Matcher { return Matcher{FieldName: field, Operator: op, Value: value} }
	metricRule := func(metric string) AlertRule {
		return AlertRule{Enabled: true, EventTypeName: "OUTSIDE_METRIC_THRESHOLD",
			MetricThreshold: &MetricThreshold{MetricName: metric, Operator: "GREATER_THAN", Threshold: 1, Units: "GIGABYTES"}}
	}

	tests := []struct {
		name string
		rule AlertRule
		obs  Observation
		want bool
	}{
		// Event type and enabled.
		{"same event type, no matchers", rule(), host, true},
		{"other event type", AlertRule{Enabled: true, EventTypeName: "HOST_RECOVERING"}, host, false},
		{"disabled", AlertRule{EventTypeName: "HOST_DOWN"}, host, false},
		{"measurement: metric rule of that metric", metricRule("MEMORY_RESIDENT"), mem, true},
		{"measurement: metric rule of another metric", metricRule("MEMORY_VIRTUAL"), mem, false},
		{"measurement: disabled metric rule", func() AlertRule { r := metricRule("MEMORY_RESIDENT"); r.Enabled = false; return r }(), mem, false},
		{"measurement: not a condition rule", rule(), mem, false},
		{"measurement: OUTSIDE_METRIC_THRESHOLD rule without metricThreshold", AlertRule{Enabled: true, EventTypeName: "OUTSIDE_METRIC_THRESHOLD"}, mem, false},
		{"measurement with matcher", func() AlertRule {
			r := metricRule("MEMORY_RESIDENT")
			r.Matchers = []Matcher{m("PORT", "EQUALS", "27017")}
			return r
		}(), mem, true},

		// Every field.
		{"HOSTNAME is the host part", rule(m("HOSTNAME", "EQUALS", "db1.example.com")), host, true},
		{"HOSTNAME is not hostnameAndPort", rule(m("HOSTNAME", "EQUALS", "db1.example.com:27017")), host, false},
		{"HOSTNAME of an IPv6 address", rule(m("HOSTNAME", "EQUALS", "2001:db8::1")), v6, true},
		{"HOSTNAME without a port", rule(m("HOSTNAME", "EQUALS", "db4")), noPort, true},
		{"PORT", rule(m("PORT", "EQUALS", "27017")), host, true},
		{"PORT other", rule(m("PORT", "EQUALS", "27018")), host, false},
		{"PORT of an IPv6 address", rule(m("PORT", "EQUALS", "27018")), v6, true},
		{"HOSTNAME_AND_PORT", rule(m("HOSTNAME_AND_PORT", "EQUALS", "db1.example.com:27017")), host, true},
		{"REPLICA_SET_NAME", rule(m("REPLICA_SET_NAME", "EQUALS", "rs-prod")), host, true},
		{"TYPE_NAME", rule(m("TYPE_NAME", "EQUALS", "PRIMARY")), host, true},
		{"TYPE_NAME other", rule(m("TYPE_NAME", "EQUALS", "SECONDARY")), host, false},
		{"SHARD_NAME", rule(m("SHARD_NAME", "EQUALS", "shard-01")), host, true},
		{"CLUSTER_NAME", rule(m("CLUSTER_NAME", "EQUALS", "cluster-a")), host, true},
		{"unknown field", rule(m("HOST_ID", "EQUALS", "h1")), host, false},

		// Every operator, holding and not.
		{"EQUALS is case-sensitive", rule(m("REPLICA_SET_NAME", "EQUALS", "RS-PROD")), host, false},
		{"NOT_EQUALS holds", rule(m("REPLICA_SET_NAME", "NOT_EQUALS", "rs-test")), host, true},
		{"NOT_EQUALS fails", rule(m("REPLICA_SET_NAME", "NOT_EQUALS", "rs-prod")), host, false},
		{"CONTAINS holds", rule(m("HOSTNAME", "CONTAINS", ".example.")), host, true},
		{"CONTAINS fails", rule(m("HOSTNAME", "CONTAINS", "prod")), host, false},
		{"NOT_CONTAINS holds", rule(m("HOSTNAME", "NOT_CONTAINS", "test")), host, true},
		{"NOT_CONTAINS fails", rule(m("HOSTNAME", "NOT_CONTAINS", "example")), host, false},
		{"STARTS_WITH holds", rule(m("SHARD_NAME", "STARTS_WITH", "shard-")), host, true},
		{"STARTS_WITH fails", rule(m("SHARD_NAME", "STARTS_WITH", "01")), host, false},
		{"ENDS_WITH holds", rule(m("SHARD_NAME", "ENDS_WITH", "-01")), host, true},
		{"ENDS_WITH fails", rule(m("SHARD_NAME", "ENDS_WITH", "shard")), host, false},
		{"REGEX full match", rule(m("HOSTNAME", "REGEX", `db[0-9]+\.example\.com`)), host, true},
		{"REGEX partial match does not hold", rule(m("HOSTNAME", "REGEX", `db[0-9]+`)), host, false},
		{"REGEX suffix match does not hold", rule(m("HOSTNAME", "REGEX", `example\.com`)), host, false},
		{"REGEX alternation is anchored as a whole", rule(m("HOSTNAME", "REGEX", `db1|db1\.example\.com`)), host, true},
		{"REGEX alternation partial", rule(m("HOSTNAME", "REGEX", `db1|xyz`)), host, false},
		{"REGEX flags apply", rule(m("HOSTNAME", "REGEX", `(?i)DB4`)), noPort, true},
		{"REGEX flags do not unanchor", rule(m("HOSTNAME", "REGEX", `(?m)db`)), noPort, false},
		{"REGEX that does not compile", rule(m("HOSTNAME", "REGEX", `db(`)), host, false},
		{"REGEX escaping the anchors does not compile", rule(m("HOSTNAME", "REGEX", `xyz)|(db1`)), host, false},
		{"unknown operator", rule(m("HOSTNAME", "LIKE", "db1.example.com")), host, false},

		// All matchers must hold.
		{"two matchers hold", rule(m("TYPE_NAME", "EQUALS", "PRIMARY"), m("PORT", "EQUALS", "27017")), host, true},
		{"one of two fails", rule(m("TYPE_NAME", "EQUALS", "PRIMARY"), m("PORT", "EQUALS", "1")), host, false},

		// Missing fields never hold, not even negated.
		{"missing REPLICA_SET_NAME, EQUALS", rule(m("REPLICA_SET_NAME", "EQUALS", "")), bare, false},
		{"missing REPLICA_SET_NAME, NOT_EQUALS", rule(m("REPLICA_SET_NAME", "NOT_EQUALS", "rs-prod")), bare, false},
		{"missing HOSTNAME, NOT_CONTAINS", rule(m("HOSTNAME", "NOT_CONTAINS", "x")), bare, false},
		{"missing PORT (no port in hostnameAndPort)", rule(m("PORT", "NOT_EQUALS", "27017")), noPort, false},
		{"missing TYPE_NAME, REGEX .*", rule(m("TYPE_NAME", "REGEX", ".*")), bare, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.Matches(tt.obs); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	yes, no := true, false
	meas := func(metric string, v float64, units string) Observation {
		return Observation{MetricName: metric, Value: &v, Units: units, HostID: "h1"}
	}
	metric := func(metric, op string, threshold float64, units string) AlertRule {
		return AlertRule{Enabled: true, EventTypeName: "OUTSIDE_METRIC_THRESHOLD",
			MetricThreshold: &MetricThreshold{MetricName: metric, Mode: "AVERAGE", Operator: op, Threshold: threshold, Units: units}}
	}
	cond := func(active *bool, cv *CurrentValue) Observation {
		return Observation{EventTypeName: "TOO_FEW_HEALTHY_MEMBERS", Active: active, ReplicaSetName: "rs0", CurrentValue: cv}
	}
	thresholded := func(op string, threshold float64, units string) AlertRule {
		return AlertRule{Enabled: true, EventTypeName: "TOO_FEW_HEALTHY_MEMBERS", Threshold: &Threshold{Operator: op, Threshold: threshold, Units: units}}
	}
	plain := AlertRule{Enabled: true, EventTypeName: "TOO_FEW_HEALTHY_MEMBERS"}

	tests := []struct {
		name string
		rule AlertRule
		obs  Observation
		want bool
	}{
		{"2048 MEGABYTES > 1 GIGABYTES", metric("MEMORY_RESIDENT", "GREATER_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 2048, "MEGABYTES"), true},
		{"512 MEGABYTES not > 1 GIGABYTES", metric("MEMORY_RESIDENT", "GREATER_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 512, "MEGABYTES"), false},
		{"exactly 1024 MEGABYTES is not beyond 1 GIGABYTES", metric("MEMORY_RESIDENT", "GREATER_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 1024, "MEGABYTES"), false},
		{"2 SECONDS > 1500 MILLISECONDS", metric("OPLOG_SLAVE_LAG_MASTER_TIME", "GREATER_THAN", 1500, "MILLISECONDS"), meas("OPLOG_SLAVE_LAG_MASTER_TIME", 2, "SECONDS"), true},
		{"1 SECONDS not > 1500 MILLISECONDS", metric("OPLOG_SLAVE_LAG_MASTER_TIME", "GREATER_THAN", 1500, "MILLISECONDS"), meas("OPLOG_SLAVE_LAG_MASTER_TIME", 1, "SECONDS"), false},
		{"900 MILLISECONDS > 0.5 SECONDS", metric("BACKGROUND_FLUSH_AVG", "GREATER_THAN", 0.5, "SECONDS"), meas("BACKGROUND_FLUSH_AVG", 900, "MILLISECONDS"), true},
		{"LESS_THAN holds", metric("CONNECTIONS", "LESS_THAN", 10, "RAW"), meas("CONNECTIONS", 3, "RAW"), true},
		{"LESS_THAN fails", metric("CONNECTIONS", "LESS_THAN", 10, "RAW"), meas("CONNECTIONS", 30, "RAW"), false},
		{"LESS_THAN at the threshold fails", metric("CONNECTIONS", "LESS_THAN", 10, "RAW"), meas("CONNECTIONS", 10, "RAW"), false},
		{"LESS_THAN with conversion", metric("MEMORY_RESIDENT", "LESS_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 512, "MEGABYTES"), true},
		{"incompatible units do not hold", metric("MEMORY_RESIDENT", "GREATER_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 5000, "SECONDS"), false},
		{"RAW against data units does not hold", metric("MEMORY_RESIDENT", "LESS_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 0, "RAW"), false},
		{"unknown units do not hold", metric("MEMORY_RESIDENT", "GREATER_THAN", 1, "GIGABYTES"), meas("MEMORY_RESIDENT", 5000, "FURLONGS"), false},
		{"unknown operator does not hold", metric("CONNECTIONS", "EQUALS", 10, "RAW"), meas("CONNECTIONS", 10, "RAW"), false},
		{"measurement without value", metric("CONNECTIONS", "GREATER_THAN", 1, "RAW"), Observation{MetricName: "CONNECTIONS", Units: "RAW"}, false},
		{"measurement against a rule without metricThreshold", plain, meas("CONNECTIONS", 10, "RAW"), false},

		{"active condition holds", plain, cond(&yes, nil), true},
		{"inactive condition does not hold", plain, cond(&no, nil), false},
		{"condition without active does not hold", plain, cond(nil, nil), false},
		{"thresholded, no currentValue: active decides", thresholded("LESS_THAN", 2, ""), cond(&yes, nil), true},
		{"thresholded, currentValue beyond", thresholded("LESS_THAN", 2, ""), cond(&yes, &CurrentValue{Number: 1, Units: "RAW"}), true},
		{"thresholded, currentValue within", thresholded("LESS_THAN", 2, ""), cond(&yes, &CurrentValue{Number: 3, Units: "RAW"}), false},
		{"thresholded, at the threshold", thresholded("GREATER_THAN", 3, "RAW"), cond(&yes, &CurrentValue{Number: 3, Units: "RAW"}), false},
		{"thresholded, GREATER_THAN beyond", thresholded("GREATER_THAN", 3, "RAW"), cond(&yes, &CurrentValue{Number: 4, Units: "RAW"}), true},
		{"thresholded, units converted", thresholded("GREATER_THAN", 1, "MINUTES"), cond(&yes, &CurrentValue{Number: 90, Units: "SECONDS"}), true},
		{"thresholded, units converted, within", thresholded("GREATER_THAN", 1, "MINUTES"), cond(&yes, &CurrentValue{Number: 45, Units: "SECONDS"}), false},
		{"thresholded, incompatible units", thresholded("GREATER_THAN", 1, "MINUTES"), cond(&yes, &CurrentValue{Number: 90, Units: "BYTES"}), false},
		{"thresholded, currentValue without units compared as is", thresholded("GREATER_THAN", 1, "MINUTES"), cond(&yes, &CurrentValue{Number: 2}), true},
		{"thresholded but inactive", thresholded("LESS_THAN", 2, ""), cond(&no, &CurrentValue{Number: 1, Units: "RAW"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.Holds(tt.obs); got != tt.want {
				t.Errorf("Holds = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTargetKey(t *testing.T) {
	yes := true
	v := 1.0
	// Every pair of these names a different target.
	distinct := []struct {
		name string
		obs  Observation
	}{
		{"host a:b", Observation{HostID: "a:b"}},
		{"host a", Observation{HostID: "a"}},
		{"rs b", Observation{ReplicaSetName: "b"}},
		{"rs a:b", Observation{ReplicaSetName: "a:b"}},
		{"rs a, shard b", Observation{ReplicaSetName: "a", ShardName: "b"}},
		{"rs a", Observation{ReplicaSetName: "a"}},
		{"shard a", Observation{ShardName: "a"}},
		{"rs 1:a", Observation{ReplicaSetName: "1:a"}},
		{"shard 1:a", Observation{ShardName: "1:a"}},
		{"cluster id x", Observation{ClusterID: "x"}},
		{"cluster name x", Observation{ClusterName: "x"}},
		{"cluster id x, rs r", Observation{ClusterID: "x", ReplicaSetName: "r"}},
		{"cluster id x, shard r", Observation{ClusterID: "x", ShardName: "r"}},
		{"cluster id x, rs r, shard s", Observation{ClusterID: "x", ReplicaSetName: "r", ShardName: "s"}},
		{"rs r, backup of a replica set", Observation{ReplicaSetName: "r", SourceTypeName: "REPLICA_SET"}},
		{"rs r, backup of a config server", Observation{ReplicaSetName: "r", SourceTypeName: "CONFIG_SERVER"}},
		{"nothing", Observation{}},
	}
	seen := map[string]string{}
	for _, d := range distinct {
		k := d.obs.TargetKey()
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the key %q", d.name, other, k)
		}
		seen[k] = d.name
	}

	// These name the same target.
	same := []struct {
		name string
		a, b Observation
	}{
		{"host: descriptions and event do not matter",
			Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h1", HostnameAndPort: "db1:27017", TypeName: "PRIMARY"},
			Observation{MetricName: "CONNECTIONS", Value: &v, Units: "RAW", HostID: "h1", HostnameAndPort: "db1:27018", ReplicaSetName: "rs0"}},
		{"cluster id wins over cluster name",
			Observation{ClusterID: "x", ClusterName: "one", ShardName: "s"},
			Observation{ClusterID: "x", ClusterName: "two", ShardName: "s"}},
		{"a host is its id, whatever replica set it reports",
			Observation{HostID: "a", ReplicaSetName: "b"}, Observation{HostID: "a"}},
		{"stable", Observation{ReplicaSetName: "rs0"}, Observation{ReplicaSetName: "rs0"}},
	}
	for _, s := range same {
		if ka, kb := s.a.TargetKey(), s.b.TargetKey(); ka != kb {
			t.Errorf("%s: %q != %q", s.name, ka, kb)
		}
	}
}
