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
	} {
		if got := retryDelay(c.n, c.err, c.task); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// A busy project, or a resolution waiting for its opening, is no failed try: it spends none
// of the task's retries. Anything else is one.
func TestIsFailure(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errBusy, false},
		{errWaitingForOpening, false},
		{fmt.Errorf("person u1: %w", errWaitingForOpening), false},
		{errRemovalPending, false},
		{errors.New("500"), true},
		{asynq.ErrLeaseExpired, true},
	} {
		if got := isFailure(c.err); got != c.want {
			t.Errorf("isFailure(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
