package channels

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
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
