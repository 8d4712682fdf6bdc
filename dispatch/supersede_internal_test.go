package dispatch

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// A try may have reached its target when it succeeded or got no answer; a target that
// answered with a failure did not take it.
func TestMayHaveReached(t *testing.T) {
	for _, c := range []struct {
		name string
		res  outcome
		err  error
		want bool
	}{
		{"delivered", delivered, nil, true},
		{"timed out: no answer", retryLater, &channels.Failure{Retry: true, Reason: "timeout"}, true},
		{"unclassified error", retryLater, errors.New("boom"), true},
		{"answered 500", retryLater, &channels.Failure{Status: 500, Retry: true}, false},
		{"answered 429", retryLater, &channels.Failure{Status: 429, Retry: true}, false},
		{"answered 404", givenUp, &channels.Failure{Status: 404}, false},
		{"refused credential", rejected, &channels.Failure{Status: 401, Rejected: true}, false},
		{"refused before any request (private target)", givenUp, &channels.Failure{Reason: "target refused"}, false},
		{"superseded", superseded, nil, false},
		{"waiting behind the opening", retryLater, errWaitingForOpening, true},
	} {
		if got := mayHaveReached(c.res, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A notice carries what it was about: its notification's fingerprint, and whether it is a
// resolution; each target of an alert has its own name.
func TestNoticeCarriesWhatItWasAbout(t *testing.T) {
	rule := herald.AlertRule{Notifications: []herald.Notification{
		{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://a.example/hook"}},
		{TypeName: "GROUP", Roles: []string{"GROUP_OWNER"}},
	}}
	a := herald.Alert{ID: "a1", AlertConfigID: "c1"}
	sc := store.Scope{GroupID: "g1"}
	open := newNotice(sc, a, fingerprints(rule), 0, channels.EventOpen, 1)
	closing := newNotice(sc, a, fingerprints(rule), 1, channels.EventClose, 0)
	if open.Fingerprint != rule.Notifications[0].Fingerprint() || closing.Fingerprint != rule.Notifications[1].Fingerprint() {
		t.Errorf("fingerprints %q, %q", open.Fingerprint, closing.Fingerprint)
	}
	if ab := open.about(); ab.Closing || ab.Notification != 0 || ab.Fingerprint != open.Fingerprint {
		t.Errorf("opening about %+v", ab)
	}
	if !closing.about().Closing {
		t.Error("a resolution is not about closing")
	}
	// Its delivery id names the alert, the notification and which notice of it this is, the
	// same however often it is tried (a receiver's idempotency key).
	if repeat := newNotice(sc, a, fingerprints(rule), 1, channels.EventUpdate, 12); open.DeliveryID != "a1-0-1" ||
		repeat.DeliveryID != "a1-1-12" || closing.DeliveryID != "a1-1-close" {
		t.Errorf("delivery ids %q, %q, %q; want a1-0-1, a1-1-12, a1-1-close", open.DeliveryID, repeat.DeliveryID, closing.DeliveryID)
	}
	if gone := newNotice(sc, a, fingerprints(rule), 5, channels.EventOpen, 1); gone.Fingerprint != "" {
		t.Errorf("a notice of a notification the rule lacks has fingerprint %q", gone.Fingerprint)
	}
	targets := map[string]bool{}
	for _, r := range []recipient{{}, {userID: "u1", via: "EMAIL"}, {userID: "u1", via: "SMS"}, {userID: "u2", via: "EMAIL"}} {
		targets[reachTarget(closing, r)] = true
	}
	if len(targets) != 4 {
		t.Errorf("targets %v, want four apart", targets)
	}
}

// A session's configurations hold each notification's fingerprint as Fingerprint computes
// it, in order, and a configuration loaded again after an edit holds the new one.
func TestConfigSetFingerprints(t *testing.T) {
	rule := herald.AlertRule{Notifications: []herald.Notification{
		{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://a.example/hook"}},
		{TypeName: "GROUP", Roles: []string{"GROUP_OWNER"}},
	}}
	cs := &configSet{configs: map[string]herald.AlertRule{}, global: map[string]bool{}, byType: map[string][]string{},
		fingerprints: map[string][]string{}}
	cs.add("c1", rule, false)
	got := cs.fingerprints["c1"]
	if len(got) != 2 || got[0] != rule.Notifications[0].Fingerprint() || got[1] != rule.Notifications[1].Fingerprint() || got[0] == got[1] {
		t.Fatalf("fingerprints %q", got)
	}
	edited := rule
	edited.Notifications = []herald.Notification{{TypeName: "WEBHOOK", Fields: map[string]string{"webhookUrl": "https://b.example/hook"}}}
	cs.add("c1", edited, false)
	if got := cs.fingerprints["c1"]; len(got) != 1 || got[0] != edited.Notifications[0].Fingerprint() || got[0] == rule.Notifications[0].Fingerprint() {
		t.Errorf("after the edit: fingerprints %q", got)
	}
}

// The engine's audit event about an alert is herald.NewEvent's by no one, for the alert's
// project, with the alert's fields and a raw record of its status only.
func TestEngineEventIsNewEvents(t *testing.T) {
	now := time.Unix(1_800_000_000, 123_000_000)
	a := herald.Alert{ID: "a1", GroupID: "g1", AlertConfigID: "c1", Status: herald.StatusOpen, HostID: "h1",
		ReplicaSetName: "rs", ClusterID: "cl", ClusterName: "cn", MetricName: "m", CurrentValue: &herald.CurrentValue{Number: 2, Units: "RAW"}}
	got := (&session{}).event(herald.EventAlertUnacknowledged, a, now)
	want := herald.NewEvent(herald.EventAlertUnacknowledged, herald.Principal{}, herald.Scope{GroupID: a.GroupID}, now)
	want.ID = got.ID
	want.AlertID, want.AlertConfigID = a.ID, a.AlertConfigID
	want.HostID, want.ReplicaSetName, want.ClusterID, want.ClusterName = a.HostID, a.ReplicaSetName, a.ClusterID, a.ClusterName
	want.MetricName, want.CurrentValue = a.MetricName, a.CurrentValue
	want.Raw = map[string]any{"status": a.Status}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engine event:\n%+v\nwant:\n%+v", got, want)
	}
	if !herald.ValidID(got.ID) {
		t.Errorf("id %q", got.ID)
	}
}
