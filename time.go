package herald

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Time is an instant as the API shows it: ISO 8601 in UTC, to the whole second
// ("2026-11-21T18:40:55Z"), the form scripts written for the platform parse. Times are kept at
// that precision everywhere (At truncates), so what is stored is exactly what is shown; the
// alert engine keeps its own sub-second due times where it needs them.
type Time struct{ time.Time }

// TimeLayout is the one layout Herald writes times in.
const TimeLayout = "2006-01-02T15:04:05Z"

// At converts t to a Time: UTC, truncated to the second.
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// ParseTime reads an ISO 8601 date-time (RFC 3339, any offset, optional fraction) or a bare
// date (taken as midnight UTC).
func ParseTime(s string) (Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return At(t), true
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return At(t), true
		}
	}
	return Time{}, false
}

func (t Time) String() string { return t.UTC().Format(TimeLayout) }

// MarshalJSON writes the API form, in one allocation (every document and response has times).
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads what ParseTime reads. A bad value is a *json.UnmarshalTypeError of
// type Time whose Value is the JSON text given: encoding/json fills in the Field path of that
// type of error (and of no other), so that the answer can name the attribute, not only the value.
func (t *Time) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*t = Time{}
		return nil
	}
	v, ok := Time{}, len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	if ok {
		v, ok = ParseTime(s[1 : len(s)-1])
	}
	if !ok {
		return &json.UnmarshalTypeError{Value: s, Type: reflect.TypeFor[Time]()}
	}
	*t = v
	return nil
}

// Clock tells the time; tests and the engine pass their own.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

// RequestTimeProblem says why t, a time a request carries, is refused, or "" when it is taken:
// before EarliestRequestTime, or, for a time something happened (happened), more than
// MaxRequestTimeAhead after now.
func RequestTimeProblem(t time.Time, happened bool, now time.Time) string {
	switch {
	case t.Before(EarliestRequestTime):
		return "it must be " + At(EarliestRequestTime).String() + " or later"
	case happened && t.After(now.Add(MaxRequestTimeAhead)):
		return fmt.Sprintf("it must be at most %d hours after the server's clock (%s)", int(MaxRequestTimeAhead/time.Hour), At(now))
	}
	return ""
}

// CheckRequestTime refuses t, the time a request gives as field (nil: none given), with 400
// INVALID_DATE naming the field when RequestTimeProblem refuses it.
func CheckRequestTime(field string, t *Time, happened bool, now time.Time) error {
	if t == nil {
		return nil
	}
	if p := RequestTimeProblem(t.Time, happened, now); p != "" {
		return Invalid(CodeInvalidDate, field, "Attribute %s is %s: %s.", field, t, p)
	}
	return nil
}
