package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
)

// Kick starts a session of the project, for the scheduler when it finds work no task may be
// coming for: the session drains waiting observations, takes back notices whose sender died
// and looks at every alert that came due. While a kick of the project is queued and not done
// (for up to a minute), another is a no-op, so kicks never pile up behind a busy project.
func (d *Dispatcher) Kick(ctx context.Context, groupID string) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeObservations, projectTask{GroupID: groupID}),
		asynq.Queue(QueueEngine), asynq.MaxRetry(50), asynq.Unique(time.Minute))
	if errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	return err
}
