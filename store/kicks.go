package store

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Kicks are the engine's wake-up calls. The dispatcher announces each piece of work it queues
// for a project's session (a batch of observations, the scheduler's kick) on the kicks
// channel, and the workers listening start a session of the project at once, rather than at
// their next poll of asynq's queues. A kick is a hint only: the work's task is queued as
// before, and a kick nobody hears (no worker listening, a connection lost) costs a poll.
// Listening costs nothing while nothing is kicked.
var kicksChannel = key(globalTag, "kicks")

// Kick announces that project groupID has work queued for a session.
func (s *Store) Kick(ctx context.Context, groupID string) error {
	return s.rdb.Publish(ctx, kicksChannel, groupID).Err()
}

// Kicks hears the kicks published on a store's Redis, until closed.
type Kicks struct {
	ps  *redis.PubSub
	ids chan string
}

// ListenKicks starts listening; it returns once Redis confirmed it, so every kick published
// after it returns is heard (while the connection holds: go-redis reconnects and listens again).
func (s *Store) ListenKicks(ctx context.Context) (*Kicks, error) {
	ps := s.rdb.Subscribe(ctx, kicksChannel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	k := &Kicks{ps: ps, ids: make(chan string, 256)}
	msgs := ps.Channel()
	go func() {
		defer close(k.ids)
		for m := range msgs {
			k.ids <- m.Payload
		}
	}()
	return k, nil
}

// C gives the project id of each kick heard, in order; it is closed once the listener is.
func (k *Kicks) C() <-chan string { return k.ids }

// Close stops listening.
func (k *Kicks) Close() error { return k.ps.Close() }
