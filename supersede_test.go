package herald

import (
	"testing"
)

func TestNoticeSuperseded(t *testing.T) {
	now := lcM(10)
	rule := lcRule([2]int{0, 5}, [2]int{0, 5})
	fp := rule.Notifications[1].Fingerprint()
	edited := lcRule([2]int{0, 5}, [2]int{0, 5})
	edited.Notifications[1].SetField("emailAddress", "someone-else@example.com")
	open := NoticeAbout{Notification: 1, Fingerprint: fp}
	closing := NoticeAbout{Closing: true, Notification: 1, Fingerprint: fp}
	for _, c := range []struct {
		name   string
		notice NoticeAbout
		alert  Alert
		rule   *AlertRule
		silent bool // a maintenance window silences the alert
		want   string
	}{
		{"opening of an open alert", open, lcAlert(StatusOpen), &rule, false, ""},
		{"opening of a tracking alert (repeat slot)", open, lcAlert(StatusTracking), &rule, false, ""},
		{"opening of a closed alert", open, lcAlert(StatusClosed), &rule, false, SupersededClosed},
		{"opening of a cancelled alert", open, lcAlert(StatusCancelled), &rule, false, SupersededCancelled},
		{"opening of an acknowledged alert", open, lcAcked(StatusOpen, lcM(20)), &rule, false, SupersededAcknowledged},
		{"opening after the acknowledgement expired", open, lcAcked(StatusOpen, lcM(5)), &rule, false, ""},
		{"opening while a maintenance window silences the alert", open, lcAlert(StatusOpen), &rule, true, SupersededSilenced},
		{"resolution while a maintenance window silences the alert", closing, lcAlert(StatusClosed), &rule, true, ""},
		{"configuration deleted", open, lcAlert(StatusOpen), nil, false, SupersededConfigGone},
		{"notification edited", open, lcAlert(StatusOpen), &edited, false, SupersededNotification},
		{"notification removed", NoticeAbout{Notification: 2, Fingerprint: fp}, lcAlert(StatusOpen), &rule, false, SupersededNotification},
		{"notice of an older Herald: no fingerprint", NoticeAbout{Notification: 1}, lcAlert(StatusOpen), &edited, false, ""},
		{"resolution of a closed alert", closing, lcAlert(StatusClosed), &rule, false, ""},
		{"resolution of a closed, acknowledged alert", closing, lcAcked(StatusClosed, lcM(20)), &rule, false, ""},
		{"resolution to an edited notification", closing, lcAlert(StatusClosed), &edited, false, SupersededNotification},
		{"resolution, configuration deleted", closing, lcAlert(StatusClosed), nil, false, SupersededConfigGone},
	} {
		if got := c.notice.Superseded(c.alert, c.rule, c.silent, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestFingerprintChangesWithAnySetting(t *testing.T) {
	n := Notification{TypeName: "WEBHOOK", DelayMin: 0, IntervalMin: 5, Fields: map[string]string{"webhookUrl": "https://a.example/hook", "webhookSecret": "s3cret"}}
	same := n
	if n.Fingerprint() != same.Fingerprint() {
		t.Fatal("the same notification has two fingerprints")
	}
	for name, change := range map[string]func(*Notification){
		"url":      func(m *Notification) { m.SetField("webhookUrl", "https://b.example/hook") },
		"secret":   func(m *Notification) { m.SetField("webhookSecret", "other") },
		"interval": func(m *Notification) { m.IntervalMin = 10 },
	} {
		m := n
		change(&m)
		if m.Fingerprint() == n.Fingerprint() {
			t.Errorf("changing the %s keeps the fingerprint", name)
		}
	}
	if fp := n.Fingerprint(); len(fp) != 16 {
		t.Errorf("fingerprint %q", fp)
	}
}
