package channels

import (
	"errors"
	"testing"

	"github.com/heraldhq/herald"
)

// A sender's service address is the given one, else the default, joined to paths without a
// doubled slash; the chat senders refuse one that is not an absolute http or https URL, for
// good, without naming it.
func TestBaseURL(t *testing.T) {
	if got := BaseURL("", "https://api.example/"); got != "https://api.example" {
		t.Errorf("default: %q", got)
	}
	if got := BaseURL("http://127.0.0.1:8080/", "https://api.example"); got != "http://127.0.0.1:8080" {
		t.Errorf("given: %q", got)
	}
	if got, err := AbsoluteBaseURL("CHAT_A", "https://chat.example/", ""); err != nil || got != "https://chat.example" {
		t.Errorf("absolute: %q, %v", got, err)
	}
	for _, bad := range []string{"ftp://chat.example", "chat.example/api", "https://", "http://[::1"} {
		_, err := AbsoluteBaseURL("CHAT_A", bad, "https://chat.example")
		var f *Failure
		if !errors.As(err, &f) || f.Retry || f.Reason != "CHAT_A base URL is not an absolute http or https URL" {
			t.Errorf("%q: %v, want a permanent failure naming CHAT_A", bad, err)
		}
	}
}

// An alert without an id is refused for good: the services key what they open by it.
func TestKeyedAlert(t *testing.T) {
	a, err := KeyedAlert(Delivery{Alert: herald.Alert{ID: "65a1b2c3d4e5f60718293a4c"}})
	if err != nil || a.ID != "65a1b2c3d4e5f60718293a4c" {
		t.Errorf("alert with an id: %v, %v", a.ID, err)
	}
	_, err = KeyedAlert(Delivery{})
	var f *Failure
	if !errors.As(err, &f) || f.Retry || f.Reason != "alert has no id" {
		t.Errorf("alert without an id: %v, want a permanent failure", err)
	}
}
