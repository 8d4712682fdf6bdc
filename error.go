package herald

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies an Error; the HTTP layer maps it to a status code.
type ErrorKind int

const (
	KindInvalid      ErrorKind = iota + 1 // 400: the request is malformed or names bad values
	KindUnauthorized                      // 401 without a challenge: authenticated, but the role does not allow it
	KindNotFound                          // 404
	KindConflict                          // 409
	KindRateLimited                       // 429
	KindInternal                          // 500
	KindUnavailable                       // 503: try again later (RetryAfter says when)
)

// Error is a failure a client is told about: a kind, the API's errorCode, a human detail and the
// parameters the detail names (a field, an id). Detail never carries internals or secrets.
type Error struct {
	Kind       ErrorKind
	Code       string
	Detail     string
	Parameters []any
	// RetryAfter, when set, is how long the client should wait before trying again (a 429 or 503).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// Errorf builds an Error; params are the values the detail names, in order.
func Errorf(kind ErrorKind, code string, params []any, format string, args ...any) *Error {
	if params == nil {
		params = []any{}
	}
	return &Error{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...), Parameters: params}
}

// Invalid is a 400 naming one attribute or parameter.
func Invalid(code, name, format string, args ...any) *Error {
	return Errorf(KindInvalid, code, []any{name}, format, args...)
}

// InvalidAttribute is a 400 INVALID_ATTRIBUTE for a field whose value is not allowed.
func InvalidAttribute(field string, format string, args ...any) *Error {
	return Invalid(CodeInvalidAttribute, field, format, args...)
}

// MissingAttribute is a 400 MISSING_ATTRIBUTE for a required field that is absent.
func MissingAttribute(field string) *Error {
	return Invalid(CodeMissingAttribute, field, "The required attribute %s was not specified.", field)
}

// NotFound is a 404 with a resource-specific code, naming the id that was not found.
func NotFound(code, what, id string) *Error {
	return Errorf(KindNotFound, code, []any{id}, "No %s with ID %s exists.", what, id)
}

// Unauthorized is the 401 USER_UNAUTHORIZED of a caller whose roles do not allow the request.
func Unauthorized() *Error {
	return Errorf(KindUnauthorized, CodeUserUnauthorized, nil, "Current user is not authorized to perform this action.")
}

// ErrorOf returns the *Error in err's chain, or nil.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil // without errors.As's target on the heap: most calls have nothing to look at
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsNotFound reports whether err is a not-found Error.
func IsNotFound(err error) bool {
	e := ErrorOf(err)
	return e != nil && e.Kind == KindNotFound
}

// The errorCode values of the API (docs/api.md#errors).
const (
	CodeResourceNotFound          = "RESOURCE_NOT_FOUND"
	CodeAlertNotFound             = "ALERT_NOT_FOUND"
	CodeDeadLetterNotFound        = "DEAD_LETTER_NOT_FOUND"
	CodeAlertConfigNotFound       = "ALERT_CONFIG_NOT_FOUND"
	CodeGroupNotFound             = "GROUP_NOT_FOUND"
	CodeOrgNotFound               = "ORG_NOT_FOUND"
	CodeMaintenanceWindowNotFound = "MAINTENANCE_WINDOW_NOT_FOUND"
	CodeIntegrationNotFound       = "INTEGRATION_NOT_FOUND"
	CodeAPIKeyNotFound            = "API_KEY_NOT_FOUND"
	CodeEventNotFound             = "EVENT_NOT_FOUND"
	CodeHostNotFound              = "HOST_NOT_FOUND"
	CodeDiskPartitionNotFound     = "DISK_PARTITION_NOT_FOUND"
	CodeUserNotFound              = "USER_NOT_FOUND"
	CodeHeartbeatNotFound         = "HEARTBEAT_NOT_FOUND"

	CodeInvalidJSON               = "INVALID_JSON"
	CodeInvalidAttribute          = "INVALID_ATTRIBUTE"
	CodeMissingAttribute          = "MISSING_ATTRIBUTE"
	CodeInvalidEnumValue          = "INVALID_ENUM_VALUE"
	CodeInvalidQueryParameter     = "INVALID_QUERY_PARAMETER"
	CodeAttributeReadOnly         = "ATTRIBUTE_READ_ONLY"
	CodeMissingNotifications      = "MISSING_NOTIFICATIONS"
	CodeNotificationIntervalRange = "NOTIFICATION_INTERVAL_OUT_OF_RANGE"
	CodeWindowStartAfterEnd       = "MAINTENANCE_WINDOW_START_DATE_AFTER_END_DATE"
	CodeInvalidDate               = "INVALID_DATE"
	CodeIntegrationTypeMismatch   = "INTEGRATION_TYPE_MISMATCH"
	CodeInvalidObservation        = "INVALID_OBSERVATION"
	CodeRequestTooLarge           = "REQUEST_TOO_LARGE"
	CodeUnsupportedMediaType      = "UNSUPPORTED_MEDIA_TYPE"
	CodeMethodNotAllowed          = "METHOD_NOT_ALLOWED"
	CodeUserUnauthorized          = "USER_UNAUTHORIZED"
	CodeIntegrationAlreadyExists  = "INTEGRATION_ALREADY_EXISTS"
	CodeUsernameAlreadyExists     = "USER_ALREADY_EXISTS"
	CodeGroupNameAlreadyExists    = "GROUP_ALREADY_EXISTS"
	CodeOrgNameAlreadyExists      = "ORG_ALREADY_EXISTS"
	CodeHeartbeatAlreadyExists    = "HEARTBEAT_ALREADY_EXISTS"
	CodeRateLimited               = "RATE_LIMITED"
	CodeBasicRequiresHTTPS        = "BASIC_AUTH_REQUIRES_HTTPS"
	CodeObservationBacklogFull    = "OBSERVATION_BACKLOG_FULL"
	CodeUnexpectedError           = "UNEXPECTED_ERROR"
	CodeServiceUnavailable        = "SERVICE_UNAVAILABLE"
)
