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
	refused := &Failure{Reason: ReasonTargetNotAllowed}
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

func TestClassifyStatus(t *testing.T) {
	cases := []struct {
		status          int
		retryAfter      string
		ok              bool
		retry, rejected bool
		after           time.Duration
	}{
		{status: 200, ok: true},
		{status: 202, ok: true},
		{status: 204, ok: true},
		{status: 408, retry: true},
		{status: 429, retry: true},
		{status: 429, retryAfter: "7", retry: true, after: 7 * time.Second},
		{status: 500, retry: true},
		{status: 503, retryAfter: "3", retry: true, after: 3 * time.Second},
		{status: 500, retryAfter: "3", retry: true}, // Retry-After is read on 429 and 503 only
		{status: 401, rejected: true},
		{status: 403, rejected: true},
		{status: 400},
		{status: 404},
		{status: 302},
		{status: 101},
	}
	for _, c := range cases {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
		if c.retryAfter != "" {
			resp.Header.Set("Retry-After", c.retryAfter)
		}
		err := Classify(resp, nil)
		if c.ok {
			if err != nil {
				t.Errorf("%d: got %v, want delivered", c.status, err)
			}
			continue
		}
		var f *Failure
		if !errors.As(err, &f) {
			t.Errorf("%d: got %v, want a *Failure", c.status, err)
			continue
		}
		if f.Status != c.status || f.Retry != c.retry || f.Rejected != c.rejected || f.RetryAfter != c.after || f.Reason == "" {
			t.Errorf("%d Retry-After %q: got %+v, want retry %v rejected %v after %s", c.status, c.retryAfter, f, c.retry, c.rejected, c.after)
		}
	}
	if f, ok := Classify(nil, nil).(*Failure); !ok || !f.Retry {
		t.Errorf("Classify(nil, nil) = %v, want a retryable failure", f)
	}
}
