package herald

// The catalogue: the enumerations of the API (docs/api.md) and the
// facts about them, as plain lookup tables and small pure functions.
//
// Every lookup is exact and case-sensitive: the API's enumerations are
// upper-case tokens, and "host_down" or " HOST_DOWN" is not a value of any of
// them. Functions that return slices return fresh copies, so callers may
// modify them freely.

import (
	"maps"
	"slices"
)

// Category is the alert-type category of an event type; maintenance windows
// silence by category and matchers are allowed only for some categories.
type Category string

// The categories. All but OTHER are also the values of a maintenance
// window's alertTypeNames (docs/lifecycle.md#maintenance-windows).
const (
	CategoryHost       Category = "HOST"
	CategoryReplicaSet Category = "REPLICA_SET"
	CategoryCluster    Category = "CLUSTER"
	CategoryAgent      Category = "AGENT"
	CategoryBackup     Category = "BACKUP"
	CategoryPrometheus Category = "PROMETHEUS" // alerts a Prometheus server sent
	CategoryHeartbeat  Category = "HEARTBEAT"  // a heartbeat missed or failed (heartbeat.go)
	CategoryOther      Category = "OTHER"      // project, org, user, team... not silenceable
)

// EventTypeInfo says what an alertable event type is.
type EventTypeInfo struct {
	Name     string
	Category Category
	// Thresholded is true when an alert configuration of this type takes a
	// `threshold` object ({operator, threshold[, units]}) that decides when
	// the condition holds (e.g. TOO_FEW_HEALTHY_MEMBERS).
	// OUTSIDE_METRIC_THRESHOLD is not Thresholded: it takes metricThreshold
	// instead.
	Thresholded bool
}

// catalogEventTypes holds every alertable eventTypeName of an alert configuration.
// Name is filled in by LookupEventType from the key.
//
// Thresholded: the spec (global alert configuration) names only
// TOO_FEW_HEALTHY_MEMBERS and TOO_MANY_UNHEALTHY_MEMBERS. TOO_MANY_ELECTIONS
// is added because its condition is meaningless without a number ("more than
// N elections in the last hour"), as on the platform. HOST_NOT_ENOUGH_DISK_SPACE
// is not: the agent reports it as a plain condition (low free space as the
// host itself judges it); operators who want a number use a metric threshold.
var catalogEventTypes = map[string]EventTypeInfo{
	// Host. From the spec: HOST_DOWN, OUTSIDE_METRIC_THRESHOLD (the spec
	// returns hostId/hostnameAndPort for both). The rest are the platform's
	// usual host alert types.
	"HOST_DOWN":                  {Category: CategoryHost},
	"HOST_EXPOSED":               {Category: CategoryHost},
	"HOST_HAS_INDEX_SUGGESTIONS": {Category: CategoryHost},
	"HOST_NOT_ENOUGH_DISK_SPACE": {Category: CategoryHost},
	"HOST_RECOVERING":            {Category: CategoryHost},
	"HOST_ROLLBACK":              {Category: CategoryHost},
	"HOST_SSL_CERTIFICATE_STALE": {Category: CategoryHost},
	"OUTSIDE_METRIC_THRESHOLD":   {Category: CategoryHost},

	// Replica set. From the spec: REPLICA_SET, RS_BIND_ERROR,
	// TOO_FEW_HEALTHY_MEMBERS, TOO_MANY_UNHEALTHY_MEMBERS. The rest are the
	// platform's usual replica-set alert types.
	"MEMBER_ADDED":               {Category: CategoryReplicaSet},
	"MEMBER_REMOVED":             {Category: CategoryReplicaSet},
	"NO_PRIMARY":                 {Category: CategoryReplicaSet},
	"PRIMARY_ELECTED":            {Category: CategoryReplicaSet},
	"REPLICA_SET":                {Category: CategoryReplicaSet},
	"RS_BIND_ERROR":              {Category: CategoryReplicaSet},
	"TOO_FEW_HEALTHY_MEMBERS":    {Category: CategoryReplicaSet, Thresholded: true},
	"TOO_MANY_ELECTIONS":         {Category: CategoryReplicaSet, Thresholded: true},
	"TOO_MANY_UNHEALTHY_MEMBERS": {Category: CategoryReplicaSet, Thresholded: true},

	// Sharded cluster. From the spec: SHARDED_CLUSTER. The rest are the
	// platform's usual cluster alert types.
	"CLUSTER_MONGOS_IS_MISSING": {Category: CategoryCluster},
	"SHARD_REMOVED":             {Category: CategoryCluster},
	"SHARDED_CLUSTER":           {Category: CategoryCluster},

	// Agent. From the spec: BACKUP_AGENT_DOWN, MONITORING_AGENT_DOWN. The
	// rest are the platform's usual agent alert types.
	"AUTOMATION_AGENT_DOWN":           {Category: CategoryAgent},
	"AUTOMATION_AGENT_VERSION_BEHIND": {Category: CategoryAgent},
	"BACKUP_AGENT_DOWN":               {Category: CategoryAgent},
	"BACKUP_AGENT_VERSION_BEHIND":     {Category: CategoryAgent},
	"MONITORING_AGENT_DOWN":           {Category: CategoryAgent},
	"MONITORING_AGENT_VERSION_BEHIND": {Category: CategoryAgent},

	// Backup. From the spec: BACKUP, BACKUP_TOO_MANY_RETRIES,
	// BACKUP_IN_UNEXPECTED_STATE, and from its "Backup category" list the
	// alertable ones (conditions that go wrong, not *_AUDIT records or the
	// "all is well again" counterparts GOOD_CLUSTERSHOT, OPLOG_CURRENT,
	// CONSISTENT_BACKUP_CONFIGURATION): BAD_CLUSTERSHOTS,
	// INCONSISTENT_BACKUP_CONFIGURATION, OPLOG_BEHIND, RESYNC_PERFORMED,
	// RESYNC_REQUIRED. RESYNC_REQUIRED is backup, not replica set, because the
	// spec's backup list names it ("backup requires a resync").
	"BACKUP":                            {Category: CategoryBackup},
	"BACKUP_IN_UNEXPECTED_STATE":        {Category: CategoryBackup},
	"BACKUP_TOO_MANY_RETRIES":           {Category: CategoryBackup},
	"BAD_CLUSTERSHOTS":                  {Category: CategoryBackup},
	"INCONSISTENT_BACKUP_CONFIGURATION": {Category: CategoryBackup},
	"OPLOG_BEHIND":                      {Category: CategoryBackup},
	"RESYNC_PERFORMED":                  {Category: CategoryBackup},
	"RESYNC_REQUIRED":                   {Category: CategoryBackup},

	// Other: not silenceable by a maintenance window, no matchers. From the
	// spec's alert-and-configuration list: AUTOMATION_CONFIG_PUBLISHED_AUDIT,
	// DATA_EXPLORER, DATA_EXPLORER_CRUD (its categories "Automation
	// Configuration" and "Data Explorer Accessed"). The rest are the
	// platform's usual project and user alert types.
	"AUTOMATION_CONFIG_PUBLISHED_AUDIT": {Category: CategoryOther},
	"DATA_EXPLORER":                     {Category: CategoryOther},
	"DATA_EXPLORER_CRUD":                {Category: CategoryOther},
	"JOINED_GROUP":                      {Category: CategoryOther},
	"REMOVED_FROM_GROUP":                {Category: CategoryOther},
	"USER_ROLES_CHANGED_AUDIT":          {Category: CategoryOther},
	"USERS_AWAITING_APPROVAL":           {Category: CategoryOther},

	// Prometheus: alerts a Prometheus server posts to the Alertmanager front door (or to the
	// observations endpoint). Selected by labelMatchers, not matchers; a maintenance window
	// silences them by naming PROMETHEUS.
	EventTypePrometheusAlert: {Category: CategoryPrometheus},

	// Heartbeats: the engine opens these when a heartbeat goes silent or reports a failure;
	// their target is the heartbeat's name (matcher HEARTBEAT_NAME).
	EventTypeHeartbeatMissed: {Category: CategoryHeartbeat},
	EventTypeHeartbeatFailed: {Category: CategoryHeartbeat},
}

// LookupEventType reports what an alert configuration eventTypeName is.
func LookupEventType(name string) (EventTypeInfo, bool) {
	info, ok := catalogEventTypes[name]
	if !ok {
		return EventTypeInfo{}, false
	}
	info.Name = name
	return info, true
}

// EventTypeNames returns every alertable event type name, sorted.
func EventTypeNames() []string { return slices.Sorted(maps.Keys(catalogEventTypes)) }

// catalogMaintenanceAlertTypes are the values of a maintenance window's
// alertTypeNames, in the platform's order (docs/lifecycle.md#maintenance-windows
// fixes the list to the platform's five), and Herald's PROMETHEUS.
var catalogMaintenanceAlertTypes = []string{
	string(CategoryHost),
	string(CategoryReplicaSet),
	string(CategoryCluster),
	string(CategoryAgent),
	string(CategoryBackup),
	string(CategoryPrometheus),
	string(CategoryHeartbeat),
}

// MaintenanceAlertTypes returns HOST, REPLICA_SET, CLUSTER, AGENT, BACKUP, PROMETHEUS, HEARTBEAT.
func MaintenanceAlertTypes() []string { return catalogClone(catalogMaintenanceAlertTypes) }

// ValidMaintenanceAlertType reports whether s is an accepted alertTypeNames value.
func ValidMaintenanceAlertType(s string) bool {
	for _, t := range catalogMaintenanceAlertTypes {
		if s == t {
			return true
		}
	}
	return false
}

// catalogMatcherFields are the matchers.fieldName values per category (spec: global
// alert configuration; applied to project configurations too). Other
// categories take no matchers.
var catalogMatcherFields = map[Category][]string{
	CategoryHost:       {"HOSTNAME", "PORT", "HOSTNAME_AND_PORT", "REPLICA_SET_NAME", "TYPE_NAME"},
	CategoryReplicaSet: {"REPLICA_SET_NAME", "SHARD_NAME", "CLUSTER_NAME"},
	CategoryCluster:    {"CLUSTER_NAME", "SHARD_NAME"},
	CategoryHeartbeat:  {"HEARTBEAT_NAME"},
}

// MatcherFields returns the matcher field names allowed for event types of
// category c, in the spec's order; nil means matchers are not allowed.
func MatcherFields(c Category) []string { return catalogClone(catalogMatcherFields[c]) }

// The remaining enumerations are plain sets, each from the spec section named.
var (
	// Global alert configuration: matchers.operator.
	catalogMatcherOperators = catalogSet("CONTAINS", "ENDS_WITH", "EQUALS", "NOT_CONTAINS", "NOT_EQUALS", "REGEX", "STARTS_WITH")

	// Global alert configuration: value of a TYPE_NAME matcher.
	catalogTypeNameValues = catalogSet("CONFIG", "PRIMARY", "ROUTER_PROCESS", "SECONDARY", "STANDALONE")

	// Global alert configuration: metricThreshold.operator and threshold.operator.
	catalogThresholdOperators = catalogSet("GREATER_THAN", "LESS_THAN")

	// Global API key: roleName values, plus GLOBAL_BILLING_ADMIN that a
	// returned key can carry.
	catalogGlobalRoles = catalogSet("GLOBAL_AUTOMATION_ADMIN", "GLOBAL_BACKUP_ADMIN", "GLOBAL_BILLING_ADMIN",
		"GLOBAL_MONITORING_ADMIN", "GLOBAL_OWNER", "GLOBAL_READ_ONLY", "GLOBAL_USER_ADMIN")

	// Organization roles: ORG_MEMBER is seen in the spec, ORG_OWNER is named
	// in docs/decisions.md#roles; the rest are the platform's usual organization roles.
	catalogOrgRoles = catalogSet("ORG_BILLING_ADMIN", "ORG_GROUP_CREATOR", "ORG_MEMBER", "ORG_OWNER", "ORG_READ_ONLY")

	// Project roles: GROUP_READ_ONLY, GROUP_DATA_ACCESS_READ_WRITE and
	// GROUP_USER_ADMIN are seen in the spec, GROUP_OWNER and
	// GROUP_MONITORING_ADMIN are named in docs/decisions.md#roles; the rest are the
	// platform's usual project roles.
	catalogProjectRoles = catalogSet("GROUP_AUTOMATION_ADMIN", "GROUP_BACKUP_ADMIN", "GROUP_DATA_ACCESS_ADMIN",
		"GROUP_DATA_ACCESS_READ_ONLY", "GROUP_DATA_ACCESS_READ_WRITE", "GROUP_MONITORING_ADMIN",
		"GROUP_OWNER", "GROUP_READ_ONLY", "GROUP_USER_ADMIN")
)

// MatcherOperators are the matchers.operator values, sorted.
func MatcherOperators() []string { return slices.Sorted(maps.Keys(catalogMatcherOperators)) }

// GlobalRoles, OrgRoles and ProjectRoles are the role names of each scope, sorted.
func GlobalRoles() []string  { return slices.Sorted(maps.Keys(catalogGlobalRoles)) }
func OrgRoles() []string     { return slices.Sorted(maps.Keys(catalogOrgRoles)) }
func ProjectRoles() []string { return slices.Sorted(maps.Keys(catalogProjectRoles)) }

// ValidMatcherOperator reports whether s is a matchers.operator value.
func ValidMatcherOperator(s string) bool { return catalogMatcherOperators[s] }

// ValidTypeNameValue reports whether s is a value of a TYPE_NAME matcher.
func ValidTypeNameValue(s string) bool { return catalogTypeNameValues[s] }

// ValidThresholdOperator reports whether s is a threshold or metricThreshold operator.
func ValidThresholdOperator(s string) bool { return catalogThresholdOperators[s] }

// ValidProjectNotificationType reports whether s is a typeName of a project
// alert configuration's notification (the registry of kinds, kinds.go).
func ValidProjectNotificationType(s string) bool {
	k, ok := LookupKind(s)
	return ok && k.Accepts(s, false)
}

// ValidGlobalNotificationType reports whether s is a typeName of a global
// alert configuration's notification: the spec's global typeName values, plus
// CHAT_C and WEBHOOK whose fields the same paragraph describes. Note CHATA,
// not CHAT_A.
func ValidGlobalNotificationType(s string) bool {
	k, ok := LookupKind(s)
	return ok && k.Accepts(s, true)
}

// ValidIntegrationType reports whether s is a third-party integration type: the path values,
// SCRAPER_A (accepted in the body) and CHAT_C (the fields-per-type table gives it a row with
// its required field chatCWebhookUrl), as their IntegrationTypes declare them.
func ValidIntegrationType(s string) bool { return KnownIntegrationType(s) }

// ValidGlobalRole reports whether s is a global role name.
func ValidGlobalRole(s string) bool { return catalogGlobalRoles[s] }

// ValidOrgRole reports whether s is an organization role name.
func ValidOrgRole(s string) bool { return catalogOrgRoles[s] }

// ValidProjectRole reports whether s is a project (group) role name.
func ValidProjectRole(s string) bool { return catalogProjectRoles[s] }

// UnitKind is the family a `units` value belongs to; values convert only
// within one family.
type UnitKind int

// The unit kinds.
const (
	RawUnits  UnitKind = iota // RAW: counts, rates, ratios
	DataUnits                 // bits and bytes and their binary multiples
	TimeUnits                 // milliseconds to days
)

type catalogUnit struct {
	kind UnitKind
	// factor is the size of one unit in the kind's base unit (bit for data,
	// millisecond for time). Every factor of a kind divides the larger ones
	// exactly, so the ratio of two factors is an exact integer in float64.
	factor float64
}

const (
	catalogKibi = 1024
	catalogMebi = catalogKibi * 1024
	catalogGibi = catalogMebi * 1024
	catalogTebi = catalogGibi * 1024
	catalogPebi = catalogTebi * 1024
)

// catalogUnits holds the 16 `units` values of the spec (Units). Data uses binary
// multiples, as the platform does: KILOBYTES = 1024 bytes, KILOBITS = 1024 bits.
var catalogUnits = map[string]catalogUnit{
	"RAW": {RawUnits, 1},

	"BITS":      {DataUnits, 1},
	"BYTES":     {DataUnits, 8},
	"KILOBITS":  {DataUnits, catalogKibi},
	"KILOBYTES": {DataUnits, 8 * catalogKibi},
	"MEGABITS":  {DataUnits, catalogMebi},
	"MEGABYTES": {DataUnits, 8 * catalogMebi},
	"GIGABITS":  {DataUnits, catalogGibi},
	"GIGABYTES": {DataUnits, 8 * catalogGibi},
	"TERABYTES": {DataUnits, 8 * catalogTebi},
	"PETABYTES": {DataUnits, 8 * catalogPebi},

	"MILLISECONDS": {TimeUnits, 1},
	"SECONDS":      {TimeUnits, 1000},
	"MINUTES":      {TimeUnits, 60 * 1000},
	"HOURS":        {TimeUnits, 60 * 60 * 1000},
	"DAYS":         {TimeUnits, 24 * 60 * 60 * 1000},
}

// UnitKindOf reports the kind of a `units` value.
// UnitNames are the units values, sorted.
func UnitNames() []string { return slices.Sorted(maps.Keys(catalogUnits)) }

func UnitKindOf(units string) (UnitKind, bool) {
	f, ok := catalogUnits[units]
	return f.kind, ok
}

// ConvertUnits converts v from one `units` value to another of the same kind.
// ok is false when either is unknown or the kinds differ (RAW converts only
// to RAW).
func ConvertUnits(v float64, from, to string) (float64, bool) {
	f, okf := catalogUnits[from]
	t, okt := catalogUnits[to]
	if !okf || !okt || f.kind != t.kind {
		return 0, false
	}
	// Multiply or divide by the exact integer ratio: one rounding, so that
	// e.g. 1.5 MINUTES is exactly 90 SECONDS and back.
	if f.factor >= t.factor {
		return v * (f.factor / t.factor), true
	}
	return v / (t.factor / f.factor), true
}

// catalogMetrics holds every measurement type (metricName) of the spec with the kind
// of units it is measured in. Grouped as in the spec.
var catalogMetrics = map[string]UnitKind{
	// Assertion rates.
	"ASSERT_MSG":     RawUnits,
	"ASSERT_REGULAR": RawUnits,
	"ASSERT_USER":    RawUnits,
	"ASSERT_WARNING": RawUnits,

	// Average time of a background flush.
	"BACKGROUND_FLUSH_AVG": TimeUnits,

	// Storage-engine cache sizes and traffic are bytes; tickets are a count.
	"CACHE_BYTES_READ_INTO":    DataUnits,
	"CACHE_BYTES_WRITTEN_FROM": DataUnits,
	"CACHE_DIRTY_BYTES":        DataUnits,
	"CACHE_USED_BYTES":         DataUnits,
	"TICKETS_AVAILABLE_READS":  RawUnits,
	"TICKETS_AVAILABLE_WRITE":  RawUnits,

	"CONNECTIONS": RawUnits,

	"CURSORS_TOTAL_OPEN":      RawUnits,
	"CURSORS_TOTAL_TIMED_OUT": RawUnits,

	// Page-fault and not-in-memory rates.
	"EXTRA_INFO_PAGE_FAULTS":              RawUnits,
	"GLOBAL_ACCESSES_NOT_IN_MEMORY":       RawUnits,
	"GLOBAL_PAGE_FAULT_EXCEPTIONS_THROWN": RawUnits,

	// Lock queue lengths.
	"GLOBAL_LOCK_CURRENT_QUEUE_READERS": RawUnits,
	"GLOBAL_LOCK_CURRENT_QUEUE_TOTAL":   RawUnits,
	"GLOBAL_LOCK_CURRENT_QUEUE_WRITERS": RawUnits,

	// Index counter rates and the miss ratio.
	"INDEX_COUNTERS_BTREE_ACCESSES":   RawUnits,
	"INDEX_COUNTERS_BTREE_HITS":       RawUnits,
	"INDEX_COUNTERS_BTREE_MISSES":     RawUnits,
	"INDEX_COUNTERS_BTREE_MISS_RATIO": RawUnits,

	// Journaling: the commit count is raw; the *_MB ones are data volumes.
	"JOURNALING_COMMITS_IN_WRITE_LOCK": RawUnits,
	"JOURNALING_MB":                    DataUnits,
	"JOURNALING_WRITE_DATA_FILES_MB":   DataUnits,

	// Process memory.
	"COMPUTED_MEMORY": DataUnits,
	"MEMORY_MAPPED":   DataUnits,
	"MEMORY_RESIDENT": DataUnits,
	"MEMORY_VIRTUAL":  DataUnits,

	// Network: bytes (per second) are data; the request count is raw.
	"NETWORK_BYTES_IN":     DataUnits,
	"NETWORK_BYTES_OUT":    DataUnits,
	"NETWORK_NUM_REQUESTS": RawUnits,

	// Oplog: OPLOG_RATE_GB_PER_HOUR is a data volume (per hour, like the
	// network metrics are per second), thresholded in data units such as
	// GIGABYTES; the other three are replication times or lags.
	"OPLOG_MASTER_LAG_TIME_DIFF":  TimeUnits,
	"OPLOG_MASTER_TIME":           TimeUnits,
	"OPLOG_RATE_GB_PER_HOUR":      DataUnits,
	"OPLOG_SLAVE_LAG_MASTER_TIME": TimeUnits,

	// Database sizes.
	"DB_DATA_SIZE_TOTAL": DataUnits,
	"DB_STORAGE_TOTAL":   DataUnits,

	// Operation, replicated-operation and document rates.
	"OPCOUNTER_CMD":             RawUnits,
	"OPCOUNTER_DELETE":          RawUnits,
	"OPCOUNTER_GETMORE":         RawUnits,
	"OPCOUNTER_INSERT":          RawUnits,
	"OPCOUNTER_QUERY":           RawUnits,
	"OPCOUNTER_UPDATE":          RawUnits,
	"OPCOUNTER_REPL_CMD":        RawUnits,
	"OPCOUNTER_REPL_DELETE":     RawUnits,
	"OPCOUNTER_REPL_INSERT":     RawUnits,
	"OPCOUNTER_REPL_UPDATE":     RawUnits,
	"DOCUMENT_METRICS_DELETED":  RawUnits,
	"DOCUMENT_METRICS_INSERTED": RawUnits,
	"DOCUMENT_METRICS_RETURNED": RawUnits,
	"DOCUMENT_METRICS_UPDATED":  RawUnits,
	"OPERATIONS_SCAN_AND_ORDER": RawUnits,

	// Average milliseconds per operation (spec).
	"OP_EXECUTION_TIME_COMMANDS": TimeUnits,
	"OP_EXECUTION_TIME_READS":    TimeUnits,
	"OP_EXECUTION_TIME_WRITES":   TimeUnits,

	"RESTARTS_IN_LAST_HOUR": RawUnits,

	// System memory and network (bytes, bytes per second: spec) and swap.
	"SWAP_USAGE_FREE":          DataUnits,
	"SWAP_USAGE_USED":          DataUnits,
	"SYSTEM_MEMORY_AVAILABLE":  DataUnits,
	"SYSTEM_MEMORY_FREE":       DataUnits,
	"SYSTEM_MEMORY_USED":       DataUnits,
	"SYSTEM_NETWORK_BYTES_IN":  DataUnits,
	"SYSTEM_NETWORK_BYTES_OUT": DataUnits,

	// Query executor: documents or index keys scanned (rates) and the
	// scanned-per-returned targeting ratios are counts, not bytes.
	"QUERY_EXECUTOR_SCANNED":                       RawUnits,
	"QUERY_EXECUTOR_SCANNED_OBJECTS":               RawUnits,
	"QUERY_TARGETING_SCANNED_OBJECTS_PER_RETURNED": RawUnits,
	"QUERY_TARGETING_SCANNED_PER_RETURNED":         RawUnits,
}

// LookupMetric reports whether name is a measurement type and the kind of
// units it is measured in.
func LookupMetric(name string) (UnitKind, bool) {
	k, ok := catalogMetrics[name]
	return k, ok
}

// MetricNames returns every measurement type, sorted.
func MetricNames() []string { return slices.Sorted(maps.Keys(catalogMetrics)) }

func catalogSet(values ...string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}

func catalogClone(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
