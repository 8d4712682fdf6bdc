package channels

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
)

// PostJSON is the POST of v, in JSON, to target, with Content-Type application/json,
// User-Agent Herald and then the header pairs given (name, value, ...), which may replace
// them. What cannot be encoded or built is a permanent *Failure naming kind: never the target,
// whose path may hold a key.
func PostJSON(ctx context.Context, kind, target string, v any, header ...string) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, &Failure{Reason: kind + " request could not be encoded"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, &Failure{Reason: kind + " request could not be built"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req, nil
}

// ForEvent is what a service calls event ev: open for an alert opened or still open, closed for
// one closed or cancelled (a cancelled alert will never close, so its incident is ended rather
// than left open), acknowledged for an acknowledgement. ok is false for no known event.
func ForEvent(ev Event, open, closed, acknowledged string) (name string, ok bool) {
	switch ev {
	case EventOpen, EventUpdate:
		return open, true
	case EventClose, EventCancel:
		return closed, true
	case EventAcknowledge:
		return acknowledged, true
	}
	return "", false
}

// NoEvent is the failure of a delivery of no known event.
func NoEvent() *Failure { return &Failure{Reason: "delivery has no known event"} }

// KeyedAlert is d's alert, refused with a permanent *Failure when it has no id: the services
// key what they open by it.
func KeyedAlert(d Delivery) (herald.Alert, error) {
	if d.Alert.ID == "" {
		return d.Alert, &Failure{Reason: "alert has no id"}
	}
	return d.Alert, nil
}

// BaseURL is a service's address as a sender joins paths to it: given, else def, without a
// trailing slash.
func BaseURL(given, def string) string { return strings.TrimSuffix(cmp.Or(given, def), "/") }

// AbsoluteBaseURL is BaseURL, refused with a permanent *Failure naming kind unless it is an
// absolute http or https URL.
func AbsoluteBaseURL(kind, given, def string) (string, error) {
	base := cmp.Or(given, def)
	if !herald.ValidHTTPURL(base) {
		return "", &Failure{Reason: kind + " base URL is not an absolute http or https URL"}
	}
	return strings.TrimSuffix(base, "/"), nil
}
