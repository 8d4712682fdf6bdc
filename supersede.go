package herald

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// A notice is decided when a step is committed and sent later, perhaps much later (a target
// that fails, a retry task an hour on, a dead letter replayed). Every try re-checks it against
// the present: what it says may no longer be true, or its target may no longer be the one it
// was decided for. A notice that fails the check is superseded: not sent, and recorded with
// why.

// Why a notice was superseded (the reason its attempt is recorded with).
const (
	SupersededConfigGone   = "its alert configuration was deleted"
	SupersededAlertGone    = "its alert no longer exists"
	SupersededNotification = "its notification was edited or removed since"
	SupersededClosed       = "its alert closed since"
	SupersededCancelled    = "its alert was cancelled since"
	SupersededAcknowledged = "its alert is acknowledged"
	SupersededSilenced     = "a maintenance window silences its alert"
	SupersededNeverOpened  = "the alert's opening never reached this target"
)

// NoticeAbout is what a notice was about when its step was committed.
type NoticeAbout struct {
	Closing      bool   // a resolution notice; else an opening or a repeat
	Notification int    // the index of its notification in the configuration
	Fingerprint  string // the notification's Fingerprint then ("" for a notice of an older Herald: not checked)
}

// Superseded says why a notice about alert a, of the configuration rule (nil: deleted), must
// not be sent at now, silenced saying whether a maintenance window silences a now; "" when it
// still should be:
//   - its configuration no longer has the notification, or the notification changed (its
//     fingerprint differs): it is not sent to whatever target the notification names now;
//   - an opening or a repeat of an alert that closed, was cancelled or is acknowledged says
//     something no longer true; one of an alert a maintenance window silences now is not sent
//     while it does (Advance skips the slots a window covers: the alert resumes at its next);
//   - a resolution is sent once its alert closed, whatever came since (but see
//     SupersededNeverOpened: the engine checks that the target saw the opening).
func (n NoticeAbout) Superseded(a Alert, rule *AlertRule, silenced bool, now time.Time) string {
	switch {
	case rule == nil:
		return SupersededConfigGone
	case n.Notification < 0 || n.Notification >= len(rule.Notifications):
		return SupersededNotification
	case n.Fingerprint != "" && rule.Notifications[n.Notification].Fingerprint() != n.Fingerprint:
		return SupersededNotification
	case n.Closing:
		return ""
	case a.Status == StatusClosed:
		return SupersededClosed
	case a.Status == StatusCancelled:
		return SupersededCancelled
	case a.Acknowledged(now):
		return SupersededAcknowledged
	case silenced:
		return SupersededSilenced
	}
	return ""
}

// Fingerprint names the notification's settings (any change changes it) without revealing
// them: a notice carries it to tell whether its notification was edited since.
func (n Notification) Fingerprint() string {
	b, _ := json.Marshal(n) // plain struct: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
