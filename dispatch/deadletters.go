package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
)

// Dead letters are asynq's archived delivery tasks: asynq keeps them (asynqmon shows and
// replays them), and this reads them a project at a time for the API. Nothing else keeps a
// list of them.

// DeadLetter is a delivery that failed for good, as the API shows it.
type DeadLetter struct {
	ID        string      `json:"id"` // the delivery's id (its Idempotency-Key)
	AlertID   string      `json:"alertId"`
	Global    bool        `json:"global,omitempty"`
	Queue     string      `json:"queue"`
	Event     string      `json:"event"`
	UserID    string      `json:"userId,omitempty"`
	Via       string      `json:"via,omitempty"`
	LastError string      `json:"lastError"`
	FailedAt  herald.Time `json:"failedAt"`
	Retried   int         `json:"retried"`
}

// deadLetterPrefix is the start of a delivery task's id (Dispatcher.retry names them).
const deadLetterPrefix = "delivery:"

// deliveryQueues are the kinds' queues that Redis knows of (asynq knows a queue once a task
// was queued on it).
func (d *Dispatcher) deliveryQueues() ([]string, error) {
	qs, err := d.inspector.Queues()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, q := range qs {
		known[q] = true
	}
	var out []string
	for _, q := range DeliveryQueues() {
		if known[q] {
			out = append(out, q)
		}
	}
	return out, nil
}

// DeadLetters lists the project's dead letters, the most recently failed first.
func (d *Dispatcher) DeadLetters(ctx context.Context, groupID string) ([]DeadLetter, error) {
	qs, err := d.deliveryQueues()
	if err != nil {
		return nil, err
	}
	var out []DeadLetter
	for _, q := range qs {
		for page := 1; ; page++ {
			tasks, err := d.inspector.ListArchivedTasks(q, asynq.PageSize(500), asynq.Page(page))
			if err != nil {
				return nil, err
			}
			for _, t := range tasks {
				var n notice
				if json.Unmarshal(t.Payload, &n) != nil || n.GroupID != groupID || !strings.HasPrefix(t.ID, deadLetterPrefix) {
					continue
				}
				out = append(out, DeadLetter{ID: strings.TrimPrefix(t.ID, deadLetterPrefix), AlertID: n.AlertID, Global: n.Global,
					Queue: q, Event: n.Event, UserID: n.UserID, Via: n.Via, LastError: t.LastErr,
					FailedAt: herald.At(t.LastFailedAt), Retried: t.Retried})
			}
			if len(tasks) < 500 {
				break
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FailedAt.After(out[j].FailedAt.Time) })
	return out, nil
}

// ReplayDeadLetter runs the project's dead letter id again now: it is tried as any retry
// (superseded if what it said is no longer so).
func (d *Dispatcher) ReplayDeadLetter(ctx context.Context, groupID, id string) error {
	qs, err := d.deliveryQueues()
	if err != nil {
		return err
	}
	for _, q := range qs {
		t, err := d.inspector.GetTaskInfo(q, deadLetterPrefix+id)
		if errors.Is(err, asynq.ErrTaskNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var n notice
		if t.State != asynq.TaskStateArchived || json.Unmarshal(t.Payload, &n) != nil || n.GroupID != groupID {
			break
		}
		return d.inspector.RunTask(q, t.ID)
	}
	return herald.NotFound(herald.CodeDeadLetterNotFound, "dead letter", id)
}
