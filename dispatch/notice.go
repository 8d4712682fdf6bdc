package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// notice is one delivery a step decided on, as the outbox and retry tasks carry it: ids, no
// secrets.
type notice = deliveryTask

// newNotice is notification idx of alert a's notice of kind ev, fps the fingerprints of its
// configuration's notifications (fingerprints). Its id is the same however often the notice is
// tried: the alert, the notification and which notice of it this is.
func newNotice(sc store.Scope, a herald.Alert, fps []string, idx int, ev channels.Event, seq int) notice {
	// Concatenated rather than formatted (fmt.Sprintf): a storm makes one for every alert.
	id := a.ID + "-" + strconv.Itoa(idx) + "-" + strconv.Itoa(seq)
	if ev == channels.EventClose {
		id = a.ID + "-" + strconv.Itoa(idx) + "-close"
	}
	n := notice{GroupID: sc.GroupID, Global: sc.Global, AlertID: a.ID, ConfigID: a.AlertConfigID,
		Notification: idx, Event: string(ev), DeliveryID: id}
	if idx < len(fps) {
		n.Fingerprint = fps[idx]
	}
	return n
}

// fingerprints are the Fingerprint of each of rule's notifications, in order: a session's
// configurations hold them (configSet), so that they are computed once a load rather than
// twice a notice (an encoding and a hash each), when it is decided and when it is sent.
func fingerprints(rule herald.AlertRule) []string {
	out := make([]string, len(rule.Notifications))
	for i, nt := range rule.Notifications {
		out[i] = nt.Fingerprint()
	}
	return out
}

func (n notice) scope() store.Scope { return store.Scope{GroupID: n.GroupID, Global: n.Global} }

// encode is n as the outbox and retry tasks carry it.
func (n notice) encode() []byte {
	b, _ := json.Marshal(n) // strings, an int and a bool: it always encodes
	return b
}

// stepNotices are the notices of a step of an alert whose configuration's notifications have
// fingerprints fps.
func stepNotices(sc store.Scope, st herald.Step, fps []string) []notice {
	var out []notice
	for _, i := range st.Notify {
		ev := channels.EventUpdate
		if st.Schedule.Sent[i] == 1 {
			ev = channels.EventOpen
		}
		out = append(out, newNotice(sc, st.Alert, fps, i, ev, st.Schedule.Sent[i]))
	}
	for _, i := range st.Resolve {
		out = append(out, newNotice(sc, st.Alert, fps, i, channels.EventClose, 0))
	}
	return out
}

// integrationKind is the integration type that supplies defaults to a notification kind.
func integrationKind(typeName string) string {
	k, _ := herald.LookupKind(typeName)
	return k.IntegrationName()
}

// recoverOutbox hands the notices of engines that died before sending them to retry tasks.
func (s *session) recoverOutbox(ctx context.Context) error {
	for _, sc := range s.scopes() {
		abandoned, err := s.lock.ClaimOutbox(ctx, sc, s.e.Clock.Now(), s.e.Lease, claimBatch)
		if err != nil || len(abandoned) == 0 {
			if err != nil {
				return err
			}
			continue
		}
		recovered := 0
		var unreadable [][]byte // kept aside (store.SetAside), not dropped: a newer version's, or damaged
		for _, entry := range abandoned {
			notices, err := store.OutboxNotices(entry)
			if err != nil {
				unreadable = append(unreadable, entry)
				continue
			}
			for _, raw := range notices {
				var n notice
				if err := json.Unmarshal(raw, &n); err != nil {
					unreadable = append(unreadable, raw)
					continue
				}
				if err := s.e.dispatcher.retry(ctx, n, s.kindOf(n), s.e.DeliveryRetries, 0); err != nil {
					return err
				}
				recovered++
			}
		}
		if len(unreadable) > 0 {
			if err := s.lock.SetAside(ctx, sc, unreadable...); err != nil {
				return err
			}
			s.e.Observer.EngineError(ErrOutboxSetAside, len(unreadable))
			s.e.Log.Error("outbox entries this worker cannot read were set aside, not sent: a newer version's, or damaged",
				zap.String("groupId", sc.GroupID), zap.Bool("global", sc.Global), zap.Int("entries", len(unreadable)))
		}
		s.e.Log.Info("recovered notices an engine left behind", zap.String("groupId", sc.GroupID), zap.Int("notices", recovered))
		if err := s.lock.DoneOutbox(ctx, sc, abandoned...); err != nil {
			return err
		}
	}
	return nil
}

// retryDelay honours a target's Retry-After, and otherwise backs off exponentially. A task
// whose worker died under it goes again at once: its target did nothing to be backed off
// from. (The worker's reclaimer hands such a task back without a retry, 10–15 s after its
// lease ran out; asynq's recoverer, which retries it with ErrLeaseExpired a minute or two
// late, has only those the reclaimer left it: reclaim.go.)
//
// A resolution waiting for its opening (errWaitingForOpening) looks again every second, and
// that is no failed try (isFailure): the opening's try is under way and takes seconds, or its
// sender died and the resolution goes as soon as the try is abandoned (abandonTries) or its
// mark lapses. Backing off as from a failure put up to the whole wait again behind that. An
// owners' notice waiting for its credential's removal (errRemovalPending) looks every second
// too, for as little a reason.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return 100 * time.Millisecond
	}
	if waiting(err) {
		return time.Second
	}
	if errors.Is(err, errStore) {
		return storeRetryDelay
	}
	if wait := pacedWait(err); wait > 0 {
		return max(wait-paceLead, 0) // started before its slot, it waits for it (pace.go)
	}
	var f *channels.Failure
	if errors.As(err, &f) && f.RetryAfter > 0 {
		// asynq keeps the retry's due time in whole seconds and may start it early: a second
		// more keeps it no sooner than the target asked.
		return f.RetryAfter + time.Second
	}
	if errors.Is(err, errBusy) || taskTypes[t.Type()].retry == retrySoon {
		return 100 * time.Millisecond * time.Duration(min(n+1, 20))
	}
	return min(time.Second<<min(n, 10), 10*time.Minute)
}

// isFailure says whether a task's error is a failed try, which asynq counts against the task's
// retries (and retryDelay backs off by): a busy project, a resolution waiting for its
// opening, an owners' notice waiting for its removal, a delivery waiting for its target's
// slot (pace.go), or a delivery task's store error, is no failure of the work or of its
// target.
func isFailure(err error) bool {
	return !errors.Is(err, errBusy) && !waiting(err) && !errors.Is(err, errStore) && !onlyPaced(err)
}

// errStore marks a delivery task's store error: the task runs again after storeRetryDelay,
// and the run is no failed try, so that a last try is never archived unrecorded.
var errStore = errors.New("store error")

const storeRetryDelay = 5 * time.Second

// storeSpare is the run a delivery task has beyond its tries, for a store error in its last.
const storeSpare = 1

// storeFailed marks err, a store error, as errStore (nil stays nil).
func storeFailed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errStore, err)
}

// waiting says whether a task's error is a wait for other work to be done (a resolution's
// opening, an owners' notice's removal), looked at again every second, and no failed try.
func waiting(err error) bool {
	return errors.Is(err, errWaitingForOpening) || errors.Is(err, errRemovalPending)
}
