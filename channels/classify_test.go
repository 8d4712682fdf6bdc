package channels

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClassifyTransportErrors(t *testing.T) {
	refused := &Failure{Reason: "target address not allowed"}
	wrapped := fmt.Errorf("Post \"http://10.0.0.1/x\": dial tcp 10.0.0.1:80: %w", refused)
	if got := Classify(nil, wrapped); got != error(refused) {
		t.Errorf("Classify(wrapped Failure) = %#v, want it passed through", got)
	}
	for _, err := range []error{context.Canceled, context.DeadlineExceeded, errors.New("EOF")} {
		var f *Failure
		if got := Classify(nil, fmt.Errorf("Post \"http://h/secret-path\": %w", err)); !errors.As(got, &f) || !f.Retry || f.Status != 0 {
			t.Errorf("Classify(%v) = %v, want retryable", err, got)
		} else if strings.Contains(f.Error(), "secret-path") {
			t.Errorf("Classify(%v) = %q names the URL", err, f)
		}
	}
	// A response is ignored when there is a transport error.
	var f *Failure
	if got := Classify(&http.Response{StatusCode: 200}, context.Canceled); !errors.As(got, &f) {
		t.Errorf("Classify(200, err) = %v, want a failure", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 18, 40, 55, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                                 0,
		"7":                                7 * time.Second,
		" 120 ":                            2 * time.Minute,
		"0":                                0,
		"-3":                               0,
		"1.5":                              0,
		"soon":                             0,
		"99999999999999999999":             maxRetryAfter,
		"Sat, 21 Nov 2026 18:41:25 GMT":    30 * time.Second,
		"Sat, 21 Nov 2026 18:00:00 GMT":    0, // past
		"Saturday, 21-Nov-26 18:41:00 GMT": 5 * time.Second,
	}
	for v, want := range cases {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestFailureError(t *testing.T) {
	cases := []struct {
		f    Failure
		want string
	}{
		{Failure{Status: 503, Retry: true, RetryAfter: 7 * time.Second, Reason: "target answered 503 Service Unavailable"},
			"delivery failed: target answered 503 Service Unavailable (retryable, after 7s)"},
		{Failure{Status: 401, Rejected: true, Reason: "target answered 401 Unauthorized"},
			"delivery failed: target answered 401 Unauthorized (credentials rejected)"},
		{Failure{Retry: true, Reason: "connection refused"}, "delivery failed: connection refused (retryable)"},
		{Failure{Status: 404, Reason: "target answered 404 Not Found"}, "delivery failed: target answered 404 Not Found (permanent)"},
	}
	for _, c := range cases {
		if got := c.f.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
