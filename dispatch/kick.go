package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
)

// kickUnique bounds how long a queued kick makes the next a no-op. A kick a killed worker was
// running holds its uniqueness until this runs out (asynq gives the task itself back only
// after its own 30 s lease), so it is short: a few reconcile runs at most may queue a kick
// each, and a session with nothing to do costs little.
const kickUnique = 5 * time.Second

// Kick starts a session of the project, for the scheduler when it finds work no task may be
// coming for: the session drains waiting observations, takes back notices whose sender died
// and looks at every alert that came due. While a kick of the project is queued and not done
// (for up to kickUnique), another is a no-op, so kicks never pile up behind a busy project.
func (d *Dispatcher) Kick(ctx context.Context, groupID string) error {
	_, err := d.client.EnqueueContext(ctx, newTask(TypeObservations, projectTask{GroupID: groupID}),
		asynq.Queue(QueueEngine), asynq.MaxRetry(50), asynq.Unique(kickUnique))
	if errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	return err
}
