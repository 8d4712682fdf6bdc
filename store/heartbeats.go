package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Heartbeats live on their project's slot: documents at hb:<id>, listed by creation in hbs,
// names in the hbnames hash (name → id, for uniqueness). Their ping tokens are found by hash
// (hbtoken:<sha256 hex> → "<groupId>/<id>"), and their deadlines are one sorted set for the
// whole installation (hbdue, member "<groupId>/<id>", score the deadline in ms) that the
// engine polls for what came due: no scan of every heartbeat. The due set and the token refs
// are on other slots than the document, so they are written in their own commands, ordered so
// that a write lost between them never makes a heartbeat missed early nor never looked at:
// the engine re-reads the document of every due entry and moves the entry to the document's
// own deadline (HeartbeatWrite.Due) when they disagree.

func heartbeats(groupID string) collection      { return collection{groupTag(groupID), "hb"} }
func heartbeatNames(groupID string) string      { return key(groupTag(groupID), "hbnames") }
func heartbeatWatchdogs(groupID string) string  { return key(groupTag(groupID), "hbwatch") }
func heartbeatToken(hash string) string         { return key(keysTag, "hbtoken", hash) }
func heartbeatsDue() string                     { return key(globalTag, "hbdue") }
func heartbeatMember(groupID, id string) string { return groupID + "/" + id }

func errHeartbeatNotFound(id string) error {
	return herald.NotFound(herald.CodeHeartbeatNotFound, "heartbeat", id)
}

func errHeartbeatName(name string) error {
	return herald.Errorf(herald.KindInvalid, herald.CodeHeartbeatAlreadyExists, []any{"name", name},
		"A heartbeat named %q already exists in this project.", name)
}

// HeartbeatWrite is what a change of a heartbeat writes besides its document: its audit
// events, the observations it queues for the engine (in the same transaction, so that a ping
// that closes an alert is never recorded without its observation), and its deadline (zero:
// none, it leaves the due set).
type HeartbeatWrite struct {
	Events       []herald.Event
	Observations []herald.Observation
	Due          time.Time
}

// HeartbeatRef names a heartbeat in the due set.
type HeartbeatRef struct{ GroupID, ID string }

// Now is Redis' clock: heartbeats' pings and deadlines are all stamped and compared by it, so
// that the clocks of the API and engine hosts never make a heartbeat missed early.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	t, err := s.rdb.Time(ctx).Result()
	return t.Round(0), err
}

// CreateHeartbeat stores a new heartbeat, its token ref and deadline, and its audit event; a
// name the project has already is refused.
func (s *Store) CreateHeartbeat(ctx context.Context, h herald.Heartbeat, due time.Time, ev herald.Event) error {
	// Due first: a heartbeat whose document is written is always looked at.
	if err := s.scheduleHeartbeat(ctx, h.GroupID, h.ID, due); err != nil {
		return err
	}
	if err := s.rdb.Set(ctx, heartbeatToken(h.TokenHash), heartbeatMember(h.GroupID, h.ID), 0).Err(); err != nil {
		return err
	}
	hs, names := heartbeats(h.GroupID), heartbeatNames(h.GroupID)
	return s.watchRetry(ctx, func(tx *redis.Tx) error {
		if taken, err := tx.HExists(ctx, names, h.Name).Result(); err != nil {
			return err
		} else if taken {
			s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(h.GroupID, h.ID)) // one left behind is dropped when due
			s.rdb.Del(ctx, heartbeatToken(h.TokenHash))
			return errHeartbeatName(h.Name)
		}
		_, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			if err := set(ctx, pipe, hs.doc(h.ID), h); err != nil {
				return err
			}
			pipe.ZAdd(ctx, hs.index(), redis.Z{Score: score(h.Created), Member: h.ID})
			pipe.HSet(ctx, names, h.Name, h.ID)
			indexWatchdog(ctx, pipe, h)
			return recordEvent(ctx, pipe, events(h.GroupID, ""), ev)
		})
		return err
	}, names)
}

// watchRetry runs fn watching keys, again while another client changes them meanwhile.
func (s *Store) watchRetry(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error {
	const attempts = 20
	for range attempts {
		err := s.rdb.Watch(ctx, fn, keys...)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
	}
	return fmt.Errorf("store: %v changed %d times while writing", keys, attempts)
}

// Heartbeat reads one heartbeat.
func (s *Store) Heartbeat(ctx context.Context, groupID, id string) (herald.Heartbeat, error) {
	return getByID[herald.Heartbeat](ctx, s.rdb, heartbeats(groupID).doc, id, errHeartbeatNotFound)
}

// indexWatchdog keeps h in its project's set of heartbeats with label matchers, or out of it.
func indexWatchdog(ctx context.Context, pipe redis.Pipeliner, h herald.Heartbeat) {
	if len(h.LabelMatchers) > 0 {
		pipe.SAdd(ctx, heartbeatWatchdogs(h.GroupID), h.ID)
	} else {
		pipe.SRem(ctx, heartbeatWatchdogs(h.GroupID), h.ID)
	}
}

// WatchdogHeartbeats are a project's heartbeats with label matchers, which alerts posted to
// the Alertmanager front door ping: one round trip when there are none.
func (s *Store) WatchdogHeartbeats(ctx context.Context, groupID string) ([]herald.Heartbeat, error) {
	ids, err := s.rdb.SMembers(ctx, heartbeatWatchdogs(groupID)).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return getMany[herald.Heartbeat](ctx, s, heartbeats(groupID), ids)
}

// Heartbeats lists a project's heartbeats, oldest first.
func (s *Store) Heartbeats(ctx context.Context, groupID string, p Page) ([]herald.Heartbeat, int, error) {
	hs := heartbeats(groupID)
	return list[herald.Heartbeat](ctx, s, hs, hs.index(), TimeRange{}, false, p)
}

// HeartbeatByToken is the heartbeat whose token hashes to hash: ok false when there is none.
func (s *Store) HeartbeatByToken(ctx context.Context, hash string) (ref HeartbeatRef, ok bool, err error) {
	v, err := s.rdb.Get(ctx, heartbeatToken(hash)).Result()
	if errors.Is(err, redis.Nil) {
		return ref, false, nil
	}
	if err != nil {
		return ref, false, err
	}
	ref.GroupID, ref.ID, ok = strings.Cut(v, "/")
	return ref, ok, nil
}

// UpdateHeartbeat changes a heartbeat: change modifies it and says what else to write. A new
// name is checked free, a new token hash replaces the old one's ref, and the deadline is set.
func (s *Store) UpdateHeartbeat(ctx context.Context, groupID, id string, change func(*herald.Heartbeat) (HeartbeatWrite, error)) (herald.Heartbeat, error) {
	if !herald.ValidID(id) {
		return herald.Heartbeat{}, errHeartbeatNotFound(id)
	}
	hs := heartbeats(groupID)
	docKey := hs.doc(id)
	nameKey := heartbeatNames(groupID)
	var out, before herald.Heartbeat
	var w HeartbeatWrite
	err := s.watchRetry(ctx, func(tx *redis.Tx) error {
		var h herald.Heartbeat
		if err := get(ctx, tx, docKey, &h, errHeartbeatNotFound(id)); err != nil {
			return err
		}
		before = h
		var err error
		if w, err = change(&h); err != nil {
			return err
		}
		if h.Name != before.Name {
			if other, err := tx.HGet(ctx, nameKey, h.Name).Result(); err == nil && other != id {
				return errHeartbeatName(h.Name)
			} else if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
		}
		if h.TokenHash != before.TokenHash {
			// The new ref first: a token the caller is told of always works.
			if err := s.rdb.Set(ctx, heartbeatToken(h.TokenHash), heartbeatMember(groupID, id), 0).Err(); err != nil {
				return err
			}
		}
		if !w.Due.IsZero() {
			// Before the document: a deadline in the set that is later than the document's is
			// moved back by the engine's check; one missing would never be looked at.
			if err := s.scheduleHeartbeat(ctx, groupID, id, w.Due); err != nil {
				return err
			}
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			if h.Name != before.Name {
				pipe.HDel(ctx, nameKey, before.Name)
				pipe.HSet(ctx, nameKey, h.Name, id)
			}
			if err := queueObservations(ctx, pipe, groupID, w.Observations); err != nil {
				return err
			}
			if err := recordEvents(ctx, pipe, events(groupID, ""), w.Events); err != nil {
				return err
			}
			indexWatchdog(ctx, pipe, h)
			return set(ctx, pipe, hs.doc(id), h)
		})
		out = h
		return err
	}, docKey, nameKey)
	if err != nil {
		return out, err
	}
	if out.TokenHash != before.TokenHash {
		s.rdb.Del(ctx, heartbeatToken(before.TokenHash)) // a ref left behind finds no matching hash
	}
	if w.Due.IsZero() {
		s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(groupID, id)) // one left behind is dropped when due
	}
	return out, nil
}

// DeleteHeartbeat removes a heartbeat, queueing obs (the observations that close its open
// alerts) and recording ev in the same step.
func (s *Store) DeleteHeartbeat(ctx context.Context, groupID, id string, obs []herald.Observation, ev herald.Event) error {
	if !herald.ValidID(id) {
		return errHeartbeatNotFound(id)
	}
	hs := heartbeats(groupID)
	docKey := hs.doc(id)
	var h herald.Heartbeat
	// Watched: the name freed is the one the heartbeat has when it goes, not one it had
	// before a rename meanwhile.
	err := s.watchRetry(ctx, func(tx *redis.Tx) error {
		if err := get(ctx, tx, docKey, &h, errHeartbeatNotFound(id)); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Del(ctx, docKey)
			pipe.ZRem(ctx, hs.index(), id)
			pipe.HDel(ctx, heartbeatNames(groupID), h.Name)
			pipe.SRem(ctx, heartbeatWatchdogs(groupID), id)
			if err := queueObservations(ctx, pipe, groupID, obs); err != nil {
				return err
			}
			return recordEvent(ctx, pipe, events(groupID, ""), ev)
		})
		return err
	}, docKey)
	if err != nil {
		return err
	}
	s.rdb.Del(ctx, heartbeatToken(h.TokenHash))
	s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(groupID, id))
	return nil
}

// queueObservations queues obs as one batch of the project's observations, past the backlog
// cap: they are Herald's own, few, and must not be lost.
func queueObservations(ctx context.Context, pipe redis.Pipeliner, groupID string, obs []herald.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	b, err := json.Marshal(obs)
	if err != nil {
		return err
	}
	pipe.RPush(ctx, obsList(groupID), b)
	pipe.IncrBy(ctx, obsBytes(groupID), int64(len(b)))
	return nil
}

// scheduleHeartbeat sets a heartbeat's deadline in the due set.
func (s *Store) scheduleHeartbeat(ctx context.Context, groupID, id string, due time.Time) error {
	return s.rdb.ZAdd(ctx, heartbeatsDue(), redis.Z{Score: float64(due.UnixMilli()), Member: heartbeatMember(groupID, id)}).Err()
}

// DueHeartbeats are up to limit heartbeats whose deadline is at or before now, earliest first.
func (s *Store) DueHeartbeats(ctx context.Context, now time.Time, limit int) ([]HeartbeatRef, error) {
	ms, err := s.rdb.ZRangeByScore(ctx, heartbeatsDue(), &redis.ZRangeBy{Min: "-inf",
		Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit)}).Result()
	if err != nil {
		return nil, err
	}
	out := make([]HeartbeatRef, 0, len(ms))
	for _, m := range ms {
		g, id, _ := strings.Cut(m, "/")
		out = append(out, HeartbeatRef{GroupID: g, ID: id})
	}
	return out, nil
}

// DropDueHeartbeat removes a heartbeat that no longer exists from the due set.
func (s *Store) DropDueHeartbeat(ctx context.Context, ref HeartbeatRef) error {
	return s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(ref.GroupID, ref.ID)).Err()
}

// HeartbeatDue is a heartbeat's deadline in the due set (zero: none).
func (s *Store) HeartbeatDue(ctx context.Context, groupID, id string) (time.Time, error) {
	v, err := s.rdb.ZScore(ctx, heartbeatsDue(), heartbeatMember(groupID, id)).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	return time.UnixMilli(int64(v)), err
}
