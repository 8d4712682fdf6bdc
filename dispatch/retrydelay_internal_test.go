package dispatch

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald/channels"
)

func TestRetryDelay(t *testing.T) {
	delivery, step := asynq.NewTask(TypeDelivery, nil), asynq.NewTask(TypeObservations, nil)
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
		{"a delivery whose worker died: at once, however often it failed", 6, asynq.ErrLeaseExpired, delivery, 100 * time.Millisecond},
	} {
		if got := retryDelay(c.n, c.err, c.task); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
