package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channelstest"
)

// Webhooks (user input) to loopback or link-local addresses are refused unless the operator
// allows private targets (HERALD_ALLOW_PRIVATE_TARGETS); refused before any packet is sent.
func TestWebhookPrivateTargets(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	send := func(allow bool, url string) error {
		notifiers, _ := senders(nil, allow)
		d := channels.Delivery{ID: "a-0-1", Event: channels.EventOpen, Alert: channelstest.HostAlert(),
			Notification: herald.Notification{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": url}}}
		return notifiers["WEBHOOK"].Notify(context.Background(), d)
	}
	for _, url := range []string{rc.URL + "/hook", "http://169.254.169.254/latest/meta-data", strings.Replace(rc.URL, "127.0.0.1", "localhost", 1) + "/hook"} {
		err := send(false, url)
		var f *channels.Failure
		if !errors.As(err, &f) || f.Retry || f.Rejected {
			t.Errorf("%s: refused for good by default, got %v", url, err)
		}
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("the receiver got %d requests though private targets are refused", n)
	}
	if err := send(true, rc.URL+"/hook"); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("the receiver got %d requests, want 1", n)
	}
}
