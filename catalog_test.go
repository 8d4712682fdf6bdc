package herald

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// catalogNearMisses returns spellings close to v that no enumeration of the
// API accepts: wrong case, padding, a dropped or doubled character, a
// hyphen for an underscore.
func catalogNearMisses(v string) []string {
	out := []string{
		strings.ToLower(v),
		" " + v,
		v + " ",
		v[:len(v)-1],
		v + v[len(v)-1:],
		v + "S",
	}
	if len(v) > 1 {
		out = append(out, strings.ToUpper(v[:1])+strings.ToLower(v[1:]))
	}
	if strings.Contains(v, "_") {
		out = append(out, strings.ReplaceAll(v, "_", "-"), strings.ReplaceAll(v, "_", ""))
	}
	return out
}

// catalogCheckEnum checks that valid accepts every value of accept, refuses
// every near miss of them (unless the near miss is itself a value of
// accept), and refuses every value of refuse and the empty string.
func catalogCheckEnum(t *testing.T, name string, valid func(string) bool, accept, refuse []string) {
	t.Helper()
	for _, v := range accept {
		if !valid(v) {
			t.Errorf("%s(%q) = false, want true", name, v)
		}
		for _, m := range catalogNearMisses(v) {
			if slices.Contains(accept, m) {
				continue
			}
			if valid(m) {
				t.Errorf("%s(%q) = true (near miss of %q), want false", name, m, v)
			}
		}
	}
	for _, v := range append([]string{""}, refuse...) {
		if valid(v) {
			t.Errorf("%s(%q) = true, want false", name, v)
		}
	}
}

func TestCatalogEnumerations(t *testing.T) {
	tests := []struct {
		name   string
		valid  func(string) bool
		accept []string // every value the platform (or docs/) lists
		refuse []string // values of neighbouring enumerations
	}{
		{
			"ValidMaintenanceAlertType", ValidMaintenanceAlertType,
			[]string{"HOST", "REPLICA_SET", "CLUSTER", "AGENT", "BACKUP"},
			[]string{"OTHER", "SHARDED_CLUSTER", "HOST_DOWN", "REPLICASET"},
		},
		{
			"ValidMatcherOperator", ValidMatcherOperator,
			[]string{"EQUALS", "NOT_EQUALS", "CONTAINS", "NOT_CONTAINS", "STARTS_WITH", "ENDS_WITH", "REGEX"},
			[]string{"GREATER_THAN", "LESS_THAN", "EQUAL", "NOT_REGEX", "MATCHES"},
		},
		{
			"ValidTypeNameValue", ValidTypeNameValue,
			[]string{"PRIMARY", "SECONDARY", "STANDALONE", "CONFIG", "ROUTER_PROCESS"},
			[]string{"ARBITER", "MONGOS", "CONF", "HOST"},
		},
		{
			"ValidThresholdOperator", ValidThresholdOperator,
			[]string{"GREATER_THAN", "LESS_THAN"},
			[]string{"EQUALS", "GREATER_THAN_OR_EQUAL", "ABOVE", "BELOW"},
		},
		{
			"ValidProjectNotificationType", ValidProjectNotificationType,
			[]string{"EMAIL", "GROUP", "ORG", "USER", "SMS", "CHAT_A", "CHAT_B", "CHAT_C", "PAGING",
				"METRICS_A", "ALERTING_A", "ALERTING_B", "WEBHOOK"},
			// CHATA is the global spelling; ADMIN is global only; APM_A and
			// SCRAPER_A are integrations, not notification kinds.
			[]string{"CHATA", "ADMIN", "APM_A", "SCRAPER_A"},
		},
		{
			"ValidGlobalNotificationType", ValidGlobalNotificationType,
			[]string{"ADMIN", "GROUP", "USER", "EMAIL", "SMS", "CHATA", "CHAT_B", "PAGING", "CHAT_C", "WEBHOOK"},
			// CHAT_A is the project spelling; ORG and the alert-routing and
			// metrics kinds are not listed for global notifications.
			[]string{"CHAT_A", "ORG", "METRICS_A", "ALERTING_A", "ALERTING_B"},
		},
		{
			"ValidIntegrationType", ValidIntegrationType,
			[]string{"METRICS_A", "CHAT_A", "PAGING", "CHAT_B", "APM_A", "ALERTING_A", "ALERTING_B", "WEBHOOK",
				"SCRAPER_A", "CHAT_C"},
			[]string{"CHATA", "EMAIL", "SMS", "GROUP", "USER"},
		},
		{
			"ValidGlobalRole", ValidGlobalRole,
			[]string{"GLOBAL_AUTOMATION_ADMIN", "GLOBAL_BACKUP_ADMIN", "GLOBAL_MONITORING_ADMIN", "GLOBAL_OWNER",
				"GLOBAL_READ_ONLY", "GLOBAL_USER_ADMIN", "GLOBAL_BILLING_ADMIN"},
			[]string{"GROUP_OWNER", "ORG_OWNER", "GLOBAL_MEMBER", "OWNER"},
		},
		{
			"ValidOrgRole", ValidOrgRole,
			[]string{"ORG_OWNER", "ORG_MEMBER", "ORG_GROUP_CREATOR", "ORG_BILLING_ADMIN", "ORG_READ_ONLY"},
			[]string{"GROUP_OWNER", "GLOBAL_OWNER", "ORG_USER_ADMIN", "ORG_PROJECT_CREATOR"},
		},
		{
			"ValidProjectRole", ValidProjectRole,
			[]string{"GROUP_OWNER", "GROUP_MONITORING_ADMIN", "GROUP_USER_ADMIN", "GROUP_READ_ONLY",
				"GROUP_DATA_ACCESS_ADMIN", "GROUP_DATA_ACCESS_READ_WRITE", "GROUP_DATA_ACCESS_READ_ONLY",
				"GROUP_AUTOMATION_ADMIN", "GROUP_BACKUP_ADMIN"},
			[]string{"ORG_OWNER", "GLOBAL_OWNER", "PROJECT_OWNER", "GROUP_MEMBER"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalogCheckEnum(t, tt.name, tt.valid, tt.accept, tt.refuse)
		})
	}
}

func TestCatalogMaintenanceAlertTypes(t *testing.T) {
	want := []string{"HOST", "REPLICA_SET", "CLUSTER", "AGENT", "BACKUP", "PROMETHEUS", "HEARTBEAT"}
	got := MaintenanceAlertTypes()
	if !slices.Equal(got, want) {
		t.Fatalf("MaintenanceAlertTypes() = %v, want %v", got, want)
	}
	got[0] = "CHANGED"
	if again := MaintenanceAlertTypes(); again[0] != "HOST" {
		t.Errorf("modifying the result of MaintenanceAlertTypes changed the table: %v", again)
	}
	if ValidMaintenanceAlertType("CHANGED") {
		t.Errorf("modifying the result of MaintenanceAlertTypes changed ValidMaintenanceAlertType")
	}
}

func TestCatalogMatcherFields(t *testing.T) {
	tests := []struct {
		c    Category
		want []string
	}{
		{CategoryHost, []string{"HOSTNAME", "PORT", "HOSTNAME_AND_PORT", "REPLICA_SET_NAME", "TYPE_NAME"}},
		{CategoryReplicaSet, []string{"REPLICA_SET_NAME", "SHARD_NAME", "CLUSTER_NAME"}},
		{CategoryCluster, []string{"CLUSTER_NAME", "SHARD_NAME"}},
		{CategoryHeartbeat, []string{"HEARTBEAT_NAME"}},
		{CategoryAgent, nil},
		{CategoryBackup, nil},
		{CategoryOther, nil},
		{Category(""), nil},
		{Category("host"), nil},
		{Category("SHARDED_CLUSTER"), nil},
	}
	for _, tt := range tests {
		got := MatcherFields(tt.c)
		if !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("MatcherFields(%q) = %#v, want %#v", tt.c, got, tt.want)
		}
	}
	got := MatcherFields(CategoryHost)
	got[0] = "CHANGED"
	if again := MatcherFields(CategoryHost); again[0] != "HOSTNAME" {
		t.Errorf("modifying the result of MatcherFields changed the table: %v", again)
	}
}

func TestCatalogEventTypes(t *testing.T) {
	// Every alert-and-configuration event type the spec names (Events), the
	// alertable ones of its backup list, and the platform's usual alert types,
	// with their categories.
	want := map[string]Category{
		// The spec's alert-and-configuration list.
		"OUTSIDE_METRIC_THRESHOLD":          CategoryHost,
		"HOST_DOWN":                         CategoryHost,
		"REPLICA_SET":                       CategoryReplicaSet,
		"SHARDED_CLUSTER":                   CategoryCluster,
		"BACKUP":                            CategoryBackup,
		"BACKUP_AGENT_DOWN":                 CategoryAgent,
		"MONITORING_AGENT_DOWN":             CategoryAgent,
		"RS_BIND_ERROR":                     CategoryReplicaSet,
		"BACKUP_TOO_MANY_RETRIES":           CategoryBackup,
		"BACKUP_IN_UNEXPECTED_STATE":        CategoryBackup,
		"TOO_FEW_HEALTHY_MEMBERS":           CategoryReplicaSet,
		"TOO_MANY_UNHEALTHY_MEMBERS":        CategoryReplicaSet,
		"RESYNC_REQUIRED":                   CategoryBackup, // also in the spec's backup list
		"AUTOMATION_CONFIG_PUBLISHED_AUDIT": CategoryOther,
		"DATA_EXPLORER":                     CategoryOther,
		"DATA_EXPLORER_CRUD":                CategoryOther,
		// The spec's backup list, alertable ones.
		"BAD_CLUSTERSHOTS":                  CategoryBackup,
		"INCONSISTENT_BACKUP_CONFIGURATION": CategoryBackup,
		"OPLOG_BEHIND":                      CategoryBackup,
		"RESYNC_PERFORMED":                  CategoryBackup,
		// Herald's own: alerts from Prometheus.
		"PROMETHEUS_ALERT": CategoryPrometheus,
		"HEARTBEAT_MISSED": CategoryHeartbeat,
		"HEARTBEAT_FAILED": CategoryHeartbeat,
		// The platform's usual alert types.
		"HOST_RECOVERING":                 CategoryHost,
		"HOST_ROLLBACK":                   CategoryHost,
		"HOST_NOT_ENOUGH_DISK_SPACE":      CategoryHost,
		"HOST_EXPOSED":                    CategoryHost,
		"HOST_SSL_CERTIFICATE_STALE":      CategoryHost,
		"HOST_HAS_INDEX_SUGGESTIONS":      CategoryHost,
		"NO_PRIMARY":                      CategoryReplicaSet,
		"PRIMARY_ELECTED":                 CategoryReplicaSet,
		"TOO_MANY_ELECTIONS":              CategoryReplicaSet,
		"MEMBER_ADDED":                    CategoryReplicaSet,
		"MEMBER_REMOVED":                  CategoryReplicaSet,
		"CLUSTER_MONGOS_IS_MISSING":       CategoryCluster,
		"SHARD_REMOVED":                   CategoryCluster,
		"AUTOMATION_AGENT_DOWN":           CategoryAgent,
		"MONITORING_AGENT_VERSION_BEHIND": CategoryAgent,
		"BACKUP_AGENT_VERSION_BEHIND":     CategoryAgent,
		"AUTOMATION_AGENT_VERSION_BEHIND": CategoryAgent,
		"USERS_AWAITING_APPROVAL":         CategoryOther,
		"JOINED_GROUP":                    CategoryOther,
		"REMOVED_FROM_GROUP":              CategoryOther,
		"USER_ROLES_CHANGED_AUDIT":        CategoryOther,
	}
	thresholded := []string{"TOO_FEW_HEALTHY_MEMBERS", "TOO_MANY_UNHEALTHY_MEMBERS", "TOO_MANY_ELECTIONS"}

	for name, cat := range want {
		info, ok := LookupEventType(name)
		if !ok {
			t.Errorf("LookupEventType(%q): unknown", name)
			continue
		}
		wantInfo := EventTypeInfo{Name: name, Category: cat, Thresholded: slices.Contains(thresholded, name)}
		if info != wantInfo {
			t.Errorf("LookupEventType(%q) = %+v, want %+v", name, info, wantInfo)
		}
		for _, m := range catalogNearMisses(name) {
			if _, ok := want[m]; ok {
				continue
			}
			if _, ok := LookupEventType(m); ok {
				t.Errorf("LookupEventType(%q) (near miss of %q) known, want unknown", m, name)
			}
		}
	}

	// Not alertable: audit records and "all is well again" counterparts of
	// the spec's backup list, the lifecycle events of docs/decisions.md#events, the
	// maintenance categories themselves.
	for _, name := range []string{"", "CLUSTER_STATE_CHANGED_AUDIT", "GOOD_CLUSTERSHOT", "OPLOG_CURRENT",
		"CONSISTENT_BACKUP_CONFIGURATION", "RS_STATE_CHANGED_AUDIT", "SYNC_REQUIRED_AUDIT",
		"ALERT_ACKNOWLEDGED_AUDIT", "ALERT_CONFIG_ADDED_AUDIT", "MAINTENANCE_WINDOW_ADDED_AUDIT",
		"HOST", "CLUSTER", "AGENT", "OTHER", "ASSERT_REGULAR"} {
		if info, ok := LookupEventType(name); ok {
			t.Errorf("LookupEventType(%q) = %+v, want unknown", name, info)
		}
	}

	names := EventTypeNames()
	if !slices.IsSorted(names) {
		t.Errorf("EventTypeNames() not sorted: %v", names)
	}
	if len(names) != len(want) {
		t.Errorf("EventTypeNames() has %d names, want %d (an addition needs a row in this test)", len(names), len(want))
	}
	for _, n := range names {
		if _, ok := want[n]; !ok {
			t.Errorf("EventTypeNames() has %q, which this test does not expect", n)
		}
		info, _ := LookupEventType(n)
		if info.Category != CategoryOther && !ValidMaintenanceAlertType(string(info.Category)) {
			t.Errorf("%s: category %q is neither OTHER nor a maintenance alert type", n, info.Category)
		}
		if n == "OUTSIDE_METRIC_THRESHOLD" && info.Thresholded {
			t.Errorf("OUTSIDE_METRIC_THRESHOLD takes metricThreshold, not threshold")
		}
	}
}

// catalogSpecMetrics is the list of measurement types of project alerts
// (metricName) copied from the platform's API document, one line per bullet.
var catalogSpecMetrics = []string{
	"ASSERT_REGULAR", "ASSERT_WARNING", "ASSERT_MSG", "ASSERT_USER",
	"BACKGROUND_FLUSH_AVG",
	"CACHE_BYTES_READ_INTO", "CACHE_BYTES_WRITTEN_FROM", "CACHE_DIRTY_BYTES", "CACHE_USED_BYTES", "TICKETS_AVAILABLE_READS", "TICKETS_AVAILABLE_WRITE",
	"CONNECTIONS",
	"CURSORS_TOTAL_OPEN", "CURSORS_TOTAL_TIMED_OUT",
	"EXTRA_INFO_PAGE_FAULTS", "GLOBAL_ACCESSES_NOT_IN_MEMORY", "GLOBAL_PAGE_FAULT_EXCEPTIONS_THROWN",
	"GLOBAL_LOCK_CURRENT_QUEUE_TOTAL", "GLOBAL_LOCK_CURRENT_QUEUE_READERS", "GLOBAL_LOCK_CURRENT_QUEUE_WRITERS",
	"INDEX_COUNTERS_BTREE_ACCESSES", "INDEX_COUNTERS_BTREE_HITS", "INDEX_COUNTERS_BTREE_MISSES", "INDEX_COUNTERS_BTREE_MISS_RATIO",
	"JOURNALING_COMMITS_IN_WRITE_LOCK", "JOURNALING_MB", "JOURNALING_WRITE_DATA_FILES_MB",
	"MEMORY_RESIDENT", "MEMORY_VIRTUAL", "MEMORY_MAPPED", "COMPUTED_MEMORY",
	"NETWORK_BYTES_IN", "NETWORK_BYTES_OUT", "NETWORK_NUM_REQUESTS",
	"OPLOG_RATE_GB_PER_HOUR", "OPLOG_MASTER_TIME", "OPLOG_MASTER_LAG_TIME_DIFF", "OPLOG_SLAVE_LAG_MASTER_TIME",
	"DB_STORAGE_TOTAL", "DB_DATA_SIZE_TOTAL",
	"OPCOUNTER_CMD", "OPCOUNTER_QUERY", "OPCOUNTER_UPDATE", "OPCOUNTER_DELETE", "OPCOUNTER_GETMORE", "OPCOUNTER_INSERT",
	"OPCOUNTER_REPL_CMD", "OPCOUNTER_REPL_UPDATE", "OPCOUNTER_REPL_DELETE", "OPCOUNTER_REPL_INSERT",
	"DOCUMENT_METRICS_RETURNED", "DOCUMENT_METRICS_INSERTED", "DOCUMENT_METRICS_UPDATED", "DOCUMENT_METRICS_DELETED",
	"OPERATIONS_SCAN_AND_ORDER",
	"OP_EXECUTION_TIME_READS", "OP_EXECUTION_TIME_WRITES", "OP_EXECUTION_TIME_COMMANDS",
	"RESTARTS_IN_LAST_HOUR",
	"SYSTEM_MEMORY_USED", "SYSTEM_MEMORY_FREE", "SYSTEM_MEMORY_AVAILABLE",
	"SYSTEM_NETWORK_BYTES_IN", "SYSTEM_NETWORK_BYTES_OUT",
	"SWAP_USAGE_USED", "SWAP_USAGE_FREE",
	"QUERY_EXECUTOR_SCANNED", "QUERY_EXECUTOR_SCANNED_OBJECTS", "QUERY_TARGETING_SCANNED_PER_RETURNED", "QUERY_TARGETING_SCANNED_OBJECTS_PER_RETURNED",
}

func TestCatalogMetrics(t *testing.T) {
	// Measured in data units: memory, cache bytes, storage sizes, journaling
	// MB, network bytes, the oplog rate in GB, system memory and swap.
	data := []string{
		"CACHE_BYTES_READ_INTO", "CACHE_BYTES_WRITTEN_FROM", "CACHE_DIRTY_BYTES", "CACHE_USED_BYTES",
		"JOURNALING_MB", "JOURNALING_WRITE_DATA_FILES_MB",
		"MEMORY_RESIDENT", "MEMORY_VIRTUAL", "MEMORY_MAPPED", "COMPUTED_MEMORY",
		"NETWORK_BYTES_IN", "NETWORK_BYTES_OUT",
		"OPLOG_RATE_GB_PER_HOUR",
		"DB_STORAGE_TOTAL", "DB_DATA_SIZE_TOTAL",
		"SYSTEM_MEMORY_USED", "SYSTEM_MEMORY_FREE", "SYSTEM_MEMORY_AVAILABLE",
		"SYSTEM_NETWORK_BYTES_IN", "SYSTEM_NETWORK_BYTES_OUT",
		"SWAP_USAGE_USED", "SWAP_USAGE_FREE",
	}
	// Measured in time units.
	times := []string{
		"BACKGROUND_FLUSH_AVG",
		"OPLOG_MASTER_TIME", "OPLOG_MASTER_LAG_TIME_DIFF", "OPLOG_SLAVE_LAG_MASTER_TIME",
		"OP_EXECUTION_TIME_READS", "OP_EXECUTION_TIME_WRITES", "OP_EXECUTION_TIME_COMMANDS",
	}
	// Everything else is a count, rate or ratio.

	if len(catalogSpecMetrics) != 70 {
		t.Fatalf("the spec's list has %d names here, want 70 (copy error?)", len(catalogSpecMetrics))
	}
	for _, name := range catalogSpecMetrics {
		wantKind := RawUnits
		switch {
		case slices.Contains(data, name):
			wantKind = DataUnits
		case slices.Contains(times, name):
			wantKind = TimeUnits
		}
		kind, ok := LookupMetric(name)
		if !ok {
			t.Errorf("LookupMetric(%q): unknown", name)
			continue
		}
		if kind != wantKind {
			t.Errorf("LookupMetric(%q) = %d, want %d", name, kind, wantKind)
		}
		for _, m := range catalogNearMisses(name) {
			if slices.Contains(catalogSpecMetrics, m) {
				continue
			}
			if _, ok := LookupMetric(m); ok {
				t.Errorf("LookupMetric(%q) (near miss of %q) known, want unknown", m, name)
			}
		}
	}
	for _, name := range []string{"", "HOST_DOWN", "MEMORY", "OPCOUNTER_REPL_QUERY", "DISK_PARTITION_SPACE_USED_DATA"} {
		if _, ok := LookupMetric(name); ok {
			t.Errorf("LookupMetric(%q) known, want unknown", name)
		}
	}

	names := MetricNames()
	if !slices.IsSorted(names) {
		t.Errorf("MetricNames() not sorted")
	}
	wantNames := slices.Sorted(slices.Values(catalogSpecMetrics))
	if !slices.Equal(names, wantNames) {
		t.Errorf("MetricNames() = %v,\nwant the spec's list %v", names, wantNames)
	}
}

var catalogAllUnits = []string{"RAW", "BITS", "BYTES", "KILOBITS", "KILOBYTES", "MEGABITS", "MEGABYTES",
	"GIGABITS", "GIGABYTES", "TERABYTES", "PETABYTES", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS"}

func TestCatalogUnitKindOf(t *testing.T) {
	want := map[string]UnitKind{
		"RAW":  RawUnits,
		"BITS": DataUnits, "BYTES": DataUnits, "KILOBITS": DataUnits, "KILOBYTES": DataUnits,
		"MEGABITS": DataUnits, "MEGABYTES": DataUnits, "GIGABITS": DataUnits, "GIGABYTES": DataUnits,
		"TERABYTES": DataUnits, "PETABYTES": DataUnits,
		"MILLISECONDS": TimeUnits, "SECONDS": TimeUnits, "MINUTES": TimeUnits, "HOURS": TimeUnits, "DAYS": TimeUnits,
	}
	if len(want) != 16 || len(catalogAllUnits) != 16 {
		t.Fatalf("the spec lists 16 units")
	}
	for _, u := range catalogAllUnits {
		k, ok := UnitKindOf(u)
		if !ok || k != want[u] {
			t.Errorf("UnitKindOf(%q) = %d, %v; want %d, true", u, k, ok, want[u])
		}
	}
	catalogCheckEnum(t, "UnitKindOf", func(s string) bool { _, ok := UnitKindOf(s); return ok }, catalogAllUnits,
		[]string{"KB", "MB", "GB", "TERABITS", "PETABITS", "MILLISECOND", "SECOND", "MICROSECONDS", "WEEKS", "PERCENT"})
}

func TestCatalogConvertUnits(t *testing.T) {
	tests := []struct {
		v        float64
		from, to string
		want     float64
	}{
		{1, "GIGABYTES", "MEGABYTES", 1024},
		{1024, "MEGABYTES", "GIGABYTES", 1},
		{8, "BITS", "BYTES", 1},
		{1, "BYTES", "BITS", 8},
		{1, "KILOBYTES", "BYTES", 1024},
		{1, "KILOBITS", "BITS", 1024},
		{1, "KILOBYTES", "KILOBITS", 8},
		{1, "MEGABITS", "KILOBITS", 1024},
		{1, "GIGABITS", "MEGABITS", 1024},
		{1, "GIGABYTES", "GIGABITS", 8},
		{1, "TERABYTES", "GIGABYTES", 1024},
		{1, "PETABYTES", "TERABYTES", 1024},
		{1, "PETABYTES", "BYTES", 1 << 50},
		{1, "PETABYTES", "BITS", 1 << 53},
		{512, "MEGABYTES", "GIGABYTES", 0.5},
		{1, "HOURS", "MILLISECONDS", 3600000},
		{1.5, "MINUTES", "SECONDS", 90},
		{90, "SECONDS", "MINUTES", 1.5},
		{1, "SECONDS", "MILLISECONDS", 1000},
		{1, "DAYS", "HOURS", 24},
		{1, "DAYS", "MINUTES", 1440},
		{36, "HOURS", "DAYS", 1.5},
		{250, "MILLISECONDS", "SECONDS", 0.25},
		{42, "RAW", "RAW", 42},
		{-3, "SECONDS", "MILLISECONDS", -3000},
		{0, "GIGABYTES", "BYTES", 0},
		{7.25, "MEGABYTES", "MEGABYTES", 7.25},
	}
	for _, tt := range tests {
		got, ok := ConvertUnits(tt.v, tt.from, tt.to)
		if !ok || got != tt.want {
			t.Errorf("ConvertUnits(%v, %s, %s) = %v, %v; want %v, true", tt.v, tt.from, tt.to, got, ok, tt.want)
		}
	}

	refused := [][2]string{
		{"BYTES", "SECONDS"}, {"SECONDS", "BYTES"},
		{"RAW", "BYTES"}, {"BYTES", "RAW"}, {"RAW", "SECONDS"}, {"MILLISECONDS", "RAW"},
		{"HOURS", "GIGABITS"},
		{"bytes", "BITS"}, {"BYTES", "bits"}, {"", "RAW"}, {"RAW", ""}, {"KB", "BYTES"},
	}
	for _, r := range refused {
		if got, ok := ConvertUnits(1, r[0], r[1]); ok {
			t.Errorf("ConvertUnits(1, %s, %s) = %v, true; want refused", r[0], r[1], got)
		}
	}

	// Round trips between every pair of one kind, and refusals across kinds.
	for _, a := range catalogAllUnits {
		for _, b := range catalogAllUnits {
			ka, _ := UnitKindOf(a)
			kb, _ := UnitKindOf(b)
			there, ok := ConvertUnits(1.5, a, b)
			if ok != (ka == kb) {
				t.Errorf("ConvertUnits(1.5, %s, %s) ok = %v, want %v", a, b, ok, ka == kb)
				continue
			}
			if !ok {
				continue
			}
			back, ok := ConvertUnits(there, b, a)
			if !ok || math.Abs(back-1.5) > 1e-12 {
				t.Errorf("1.5 %s -> %v %s -> %v %s, want 1.5", a, there, b, back, a)
			}
		}
	}
}
