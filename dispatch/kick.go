package dispatch

import (
	"context"
	"errors"
	"sync"
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
	if err != nil && !errors.Is(err, asynq.ErrDuplicateTask) {
		return err
	}
	d.kick(ctx, groupID) // and an idle worker starts it at once
	return nil
}

// loops are an engine's loops at its projects (runProject: a task's, or a kick's), so that a
// kick (store.Kicks: work was queued for the project) reaches one of them at once: one
// waiting in-process for its project's next due time runs a session now, one in a session
// runs another after it. A kick for a project no loop is at starts one (start), unless the
// worker has no room for it: the work's task is queued anyway.
type loops struct {
	mu    sync.Mutex
	at    map[string]*projectLoops
	start func(groupID string, p *projectLoops) bool // runs a loop of p (counted already) unless full
}

// projectLoops are the loops of one project.
type projectLoops struct {
	n      int           // loops at the project
	kicked chan struct{} // a kick no loop took yet (capacity 1: kicks meanwhile are one)
}

// took says whether a kick came for the project that no loop took yet, and takes it.
func (p *projectLoops) took() bool { return ready(p.kicked) }

// ready says whether ch has something to take now: it is closed, or it holds a value, taken.
func ready(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// setStart sets how a kicked loop starts (nil: kicks start none).
func (l *loops) setStart(start func(groupID string, p *projectLoops) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start = start
}

// enter counts a loop at project groupID.
func (l *loops) enter(groupID string) *projectLoops {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enterLocked(groupID)
}

func (l *loops) enterLocked(groupID string) *projectLoops {
	if l.at == nil {
		l.at = map[string]*projectLoops{}
	}
	p := l.at[groupID]
	if p == nil {
		p = &projectLoops{kicked: make(chan struct{}, 1)}
		l.at[groupID] = p
	}
	p.n++
	return p
}

// leave ends a loop at project groupID. The last to leave with a kick not taken hands its
// place to a new loop, so that a kick that came as it left is not left waiting for a poll.
func (l *loops) leave(groupID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.at[groupID]
	if p.n == 1 && p.took() && l.start != nil && l.start(groupID, p) {
		return
	}
	if p.n--; p.n == 0 {
		delete(l.at, groupID)
	}
}

// kick tells a loop at project groupID to look at it now, or starts one.
func (l *loops) kick(groupID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.at[groupID]; p != nil {
		select {
		case p.kicked <- struct{}{}:
		default: // one is pending already
		}
		return
	}
	if l.start == nil {
		return
	}
	if p := l.enterLocked(groupID); !l.start(groupID, p) {
		if p.n--; p.n == 0 {
			delete(l.at, groupID)
		}
	}
}
