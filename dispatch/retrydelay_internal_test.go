package dispatch

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald/channels"
)

func TestRetryDelay(t *testing.T) {
	delivery, step, owners := asynq.NewTask(TypeDelivery, nil), asynq.NewTask(TypeObservations, nil), asynq.NewTask(TypeOwnersTold, nil)
	for _, c := range []struct {
		name string
		n    int
		err  error
		task *asynq.Task
		want time.Duration
	}{
		{"first failure of a delivery", 0, errors.New("500"), delivery, time.Second},
		{"fourth failure of a delivery", 3, errors.New("500"), delivery, 8 * time.Second},
		{"backoff is capped", 30, errors.New("500"), delivery, 10 * time.Minute},
		{"Retry-After, and a second more", 3, &channels.Failure{RetryAfter: 30 * time.Second}, delivery, 31 * time.Second},
		{"a busy project", 2, errBusy, step, 300 * time.Millisecond},
		{"a project's work failed", 30, errors.New("redis: timeout"), step, 2 * time.Second},
		{"an owners' notice the mail server deferred: as a delivery", 3, errors.New("451"), owners, 8 * time.Second},
		{"an owners' notice waiting for its removal: a second", 6, errRemovalPending, owners, time.Second},
		{"a delivery whose worker died: at once, however often it failed", 6, asynq.ErrLeaseExpired, delivery, 100 * time.Millisecond},
		{"a resolution waiting for its opening: a second, however often it failed", 6, errWaitingForOpening, delivery, time.Second},
		{"a delivery waiting for its target's slot: due a second before it", 6, &pacedError{wait: 10 * time.Second}, delivery, 9 * time.Second},
		{"a paced target that asked for a wait: due a second before its slot after it", 2,
			&pacedError{wait: 30 * time.Second, failure: &channels.Failure{RetryAfter: 30 * time.Second}}, delivery, 29 * time.Second},
	} {
		if got := retryDelay(c.n, c.err, c.task); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// A busy project, a resolution waiting for its opening, or a delivery waiting for its target's
// slot, is no failed try: it spends none of the task's retries. Anything else is one, a 429
// from a paced target included.
func TestIsFailure(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errBusy, false},
		{errWaitingForOpening, false},
		{fmt.Errorf("person u1: %w", errWaitingForOpening), false},
		{errRemovalPending, false},
		{&pacedError{wait: time.Second}, false},
		{&pacedError{wait: time.Second, failure: &channels.Failure{Status: 429, RetryAfter: time.Second}}, true},
		{errors.New("500"), true},
		{asynq.ErrLeaseExpired, true},
	} {
		if got := isFailure(c.err); got != c.want {
			t.Errorf("isFailure(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
