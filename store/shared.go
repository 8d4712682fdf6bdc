package store

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// sharedTrips sends the pipelines that concurrent callers want run as few round trips: those
// waiting at the same moment go to Redis as one pipeline. Under load (dozens of API requests
// waiting on their check at once) each pays a share of one write, one read and one pass of
// Redis's event loop instead of its own; alone, a caller waits no longer than its own round
// trip would take.
//
// Merging changes nothing a caller sees: the pipelines are plain ones (no MULTI), so their
// commands ran in no fixed order against other clients' anyway, and each command keeps its
// own reply and error: one caller's failing command (WRONGTYPE, NOSCRIPT) fails only that
// caller. What fails the whole round trip (the connection lost, Redis down) fails every
// caller in it. On Redis Cluster the one pipeline is split per node as any pipeline is.
//
// There is no goroutine to start or stop: the first caller to find nothing in flight starts
// one that sends round trips while callers are waiting, and ends when none is.
type sharedTrips struct {
	rdb redis.UniversalClient

	mu      sync.Mutex
	waiting []*sharedTrip
	sending bool // a goroutine is sending (it takes what is waiting before it ends)

	pipes sync.Pool // of redis.Pipeliner, emptied: see pipeline
	trips sync.Pool // of *sharedTrip whose caller had its answers: see runFinished
}

// maxSharedTrip bounds how many callers' pipelines go in one round trip (the rest go in the
// next), so that one round trip's writes and replies stay small.
const maxSharedTrip = 256

// sharedTrip is one caller's pipeline waiting for its round trip.
type sharedTrip struct {
	ctx  context.Context
	cmds []redis.Cmder
	// done is sent one value (into its buffer of one: the sender never waits) once every
	// command of cmds has its reply or error, after which the sender no longer touches the
	// trip. A trip whose caller received it is its caller's alone, and is used again (with
	// its channel, empty again); one whose caller's ctx ended first is left to the collector.
	done chan struct{}
}

// run sends cmds in the next round trip and returns as Pipeline.Exec does: the first error of
// its commands (each has its own). A caller whose ctx ends returns at once with ctx's error;
// its commands are then sent only if their round trip had already begun, and it must not read
// them.
func (t *sharedTrips) run(ctx context.Context, cmds []redis.Cmder) error {
	_, err := t.runFinished(ctx, cmds)
	return err
}

// runFinished is run, and says whether cmds' round trip is over (false when ctx ended first:
// it may still be sending them).
func (t *sharedTrips) runFinished(ctx context.Context, cmds []redis.Cmder) (finished bool, err error) {
	if len(cmds) == 0 {
		return true, nil
	}
	trip, _ := t.trips.Get().(*sharedTrip)
	if trip == nil {
		trip = &sharedTrip{done: make(chan struct{}, 1)}
	}
	trip.ctx, trip.cmds = ctx, cmds
	t.mu.Lock()
	t.waiting = append(t.waiting, trip)
	if !t.sending {
		t.sending = true
		go t.send()
	}
	t.mu.Unlock()
	select {
	case <-trip.done:
		*trip = sharedTrip{done: trip.done}
		t.trips.Put(trip)
		return true, firstError(cmds)
	case <-ctx.Done(): // trip is the sender's still
		return false, ctx.Err()
	}
}

// send sends round trips until no caller is waiting.
func (t *sharedTrips) send() {
	var trip []*sharedTrip
	for {
		t.mu.Lock()
		if len(t.waiting) == 0 {
			t.sending = false
			t.mu.Unlock()
			return
		}
		n := min(len(t.waiting), maxSharedTrip)
		trip = append(trip[:0], t.waiting[:n]...)
		rest := copy(t.waiting, t.waiting[n:])
		clear(t.waiting[rest:])
		t.waiting = t.waiting[:rest]
		t.mu.Unlock()
		t.roundTrip(trip)
		clear(trip)
	}
}

// roundTrip sends the pipelines of trip as one, and tells each caller its answers are in.
func (t *sharedTrips) roundTrip(trip []*sharedTrip) {
	pipe := t.rdb.Pipeline()
	for _, c := range trip {
		if err := c.ctx.Err(); err != nil {
			// Its caller has gone: nothing of it is sent (and should it still be waiting,
			// it learns why).
			setErr(c.cmds, err)
			continue
		}
		_ = pipe.BatchProcess(c.ctx, c.cmds...)
	}
	if pipe.Len() > 0 {
		// The round trip is every caller's: it is not cut short by one caller's ctx ending;
		// the client's own timeouts bound it. Its result is each command's, but for an error
		// that is not a reply (the connection's, a hook's): the whole round trip failed, and
		// every caller in it gets the error, as each would have from a pipeline of its own.
		if sent, err := pipe.Exec(context.Background()); err != nil && !isReply(err) {
			setErr(sent, err)
		}
	}
	for _, c := range trip {
		c.done <- struct{}{} // the last of c touched here: its caller may use it again at once
	}
}

// firstError is the first error among cmds, as Pipeline.Exec returns it.
func firstError(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// isReply says whether err is an error Redis answered (a command's own, WRONGTYPE, NOSCRIPT,
// redis.Nil) rather than one of the round trip.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

func setErr(cmds []redis.Cmder, err error) {
	for _, c := range cmds {
		c.SetErr(err)
	}
}

// pipelined runs the commands queued on pipe (one of s.rdb.Pipeline's) in a round trip
// shared with other callers waiting at the same moment: as pipe.Exec, but cheaper under load.
func (s *Store) pipelined(ctx context.Context, pipe redis.Pipeliner) error {
	return s.shared.run(ctx, pipe.Cmds())
}

// pipeline is an empty pipeline to queue a call's commands on, for pipelinedOnce: the
// requests every API call makes (CheckAuth, Fetch) reuse them rather than make their own
// (a pipeline and the slice of its commands are a few allocations each).
func (s *Store) pipeline() redis.Pipeliner {
	if p, ok := s.shared.pipes.Get().(redis.Pipeliner); ok {
		return p
	}
	return s.rdb.Pipeline()
}

// pipelinedOnce is pipelined of a pipe of s.pipeline, which it then empties and keeps for
// reuse: the caller must not use pipe after (its commands are its own, and stay readable).
func (s *Store) pipelinedOnce(ctx context.Context, pipe redis.Pipeliner) error {
	_, err := s.pipelinedOnceFinished(ctx, pipe)
	return err
}

// pipelinedOnceFinished is pipelinedOnce, and says whether the round trip of pipe's commands
// is over (false when ctx ended first: it may still be sending them, and writing their
// replies).
func (s *Store) pipelinedOnceFinished(ctx context.Context, pipe redis.Pipeliner) (bool, error) {
	finished, err := s.shared.runFinished(ctx, pipe.Cmds())
	if finished { // else its round trip may still read the slice of its commands
		clear(pipe.Cmds())
		pipe.Discard()
		s.shared.pipes.Put(pipe)
	}
	return finished, err
}
