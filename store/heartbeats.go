package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Heartbeats live on their project's slot: documents at hb:<id> (heartbeatDoc), listed by
// creation in hbs, names in the hbnames hash (name → id, for uniqueness). Their ping tokens
// are found by hash in one hash for the installation (hbtokens: the SHA-256's 32 bytes →
// "<groupId>/<id>";
// a field costs Redis far less than a key of its own, hbtoken:<hash>, which tokens issued
// before still have until their first ping moves them), and their deadlines are one sorted set
// for the whole installation (hbdue, member "<groupId>/<id>", score the deadline in ms) that
// the engine polls for what came due: no scan of every heartbeat. The due set and the token
// refs are on other slots than the document, so they are written in their own commands,
// ordered so that a write lost between them never makes a heartbeat missed early nor never
// looked at: the engine re-reads the document of every due entry and moves the entry to the
// document's own deadline (HeartbeatWrite.Due) when they disagree.

func heartbeats(groupID string) collection      { return collection{groupTag(groupID), "hb"} }
func heartbeatNames(groupID string) string      { return key(groupTag(groupID), "hbnames") }
func heartbeatWatchdogs(groupID string) string  { return key(groupTag(groupID), "hbwatch") }
func heartbeatTokens() string                   { return key(keysTag, "hbtokens") }
func heartbeatTokenField(hash string) string    { return packTokenHash(hash) }
func legacyHeartbeatToken(hash string) string   { return key(keysTag, "hbtoken", hash) }
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
// name the project has already is refused. The name is claimed first, by itself (HSETNX, as
// projects' names are), so that heartbeats made at once in a project never wait on one
// another; a claim whose heartbeat was not written is given up.
func (s *Store) CreateHeartbeat(ctx context.Context, h herald.Heartbeat, due time.Time, ev herald.Event) error {
	// Due first: a heartbeat whose document is written is always looked at.
	if err := s.scheduleHeartbeat(ctx, h.GroupID, h.ID, due); err != nil {
		return err
	}
	if err := s.setHeartbeatToken(ctx, h.TokenHash, h.GroupID, h.ID); err != nil {
		return err
	}
	hs, names := heartbeats(h.GroupID), heartbeatNames(h.GroupID)
	claimed, err := s.rdb.HSetNX(ctx, names, h.Name, h.ID).Result()
	if err == nil && !claimed {
		err = errHeartbeatName(h.Name)
	}
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			if err := set(ctx, pipe, hs.doc(h.ID), h); err != nil {
				return err
			}
			pipe.ZAdd(ctx, hs.index(), redis.Z{Score: score(h.Created), Member: hs.indexMember(h.ID)})
			indexWatchdog(ctx, pipe, h)
			return recordEvent(ctx, pipe, events(h.GroupID, ""), ev)
		})
	}
	if err != nil && s.rdb.Exists(ctx, hs.doc(h.ID)).Val() == 0 {
		// Not written: what was claimed for it is given up (an entry of the due set left
		// behind is dropped when due).
		if claimed {
			s.rdb.HDel(ctx, names, h.Name)
		}
		s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(h.GroupID, h.ID))
		s.dropHeartbeatToken(ctx, h.TokenHash)
	}
	return err
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
// A token issued before refs were fields of hbtokens is found at its own key (in the same
// round trip) and moved to its field.
func (s *Store) HeartbeatByToken(ctx context.Context, hash string) (ref HeartbeatRef, ok bool, err error) {
	var field, legacy *redis.StringCmd
	_, err = s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		field = pipe.HGet(ctx, heartbeatTokens(), heartbeatTokenField(hash))
		legacy = pipe.Get(ctx, legacyHeartbeatToken(hash))
		return nil
	})
	v, ferr := field.Result()
	if errors.Is(ferr, redis.Nil) {
		v, ferr = legacy.Result()
		if ferr == nil {
			s.moveHeartbeatToken(ctx, hash)
		}
	}
	if errors.Is(ferr, redis.Nil) {
		return ref, false, nil
	}
	if ferr != nil {
		return ref, false, ferr
	}
	ref.GroupID, ref.ID, ok = strings.Cut(v, "/")
	return ref, ok, nil
}

// moveHeartbeatToken moves a token ref from its own key to its field of hbtokens, in one step
// that a removal of the ref meanwhile (dropHeartbeatToken) cancels. A move that fails is tried
// again at the token's next ping: the ref is found at either place.
func (s *Store) moveHeartbeatToken(ctx context.Context, hash string) {
	legacy := legacyHeartbeatToken(hash)
	_ = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, legacy).Result()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.HSet(ctx, heartbeatTokens(), heartbeatTokenField(hash), v)
			pipe.Del(ctx, legacy)
			return nil
		})
		return err
	}, legacy)
}

// setHeartbeatToken makes hash the token ref of heartbeat id of project groupID.
func (s *Store) setHeartbeatToken(ctx context.Context, hash, groupID, id string) error {
	return s.rdb.HSet(ctx, heartbeatTokens(), heartbeatTokenField(hash), heartbeatMember(groupID, id)).Err()
}

// dropHeartbeatToken removes a token ref, at its own key (first: a move under way then fails)
// and as a field of hbtokens. Best effort: a ref left behind finds no matching hash.
func (s *Store) dropHeartbeatToken(ctx context.Context, hash string) {
	s.rdb.Del(ctx, legacyHeartbeatToken(hash))
	s.rdb.HDel(ctx, heartbeatTokens(), heartbeatTokenField(hash))
}

// UpdateHeartbeat changes a heartbeat: change modifies it and says what else to write. A new
// name is checked free, a new token hash replaces the old one's ref, and the deadline is set.
// The document is read and changed, and the token ref and deadline written, before the
// transaction, which commits only if the document is still the one read (else all of it is
// done again): a change holds a watched connection only for its transaction, never while it
// waits for another connection of the pool (change reads Redis' clock), which pings beyond
// the pool's size at once would otherwise all do, until the pool's timeout.
func (s *Store) UpdateHeartbeat(ctx context.Context, groupID, id string, change func(*herald.Heartbeat) (HeartbeatWrite, error)) (herald.Heartbeat, error) {
	if !herald.ValidID(id) {
		return herald.Heartbeat{}, errHeartbeatNotFound(id)
	}
	docKey := heartbeats(groupID).doc(id)
	const attempts = 20
	for range attempts {
		h, before, w, err := s.changeHeartbeat(ctx, groupID, id, change)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		if err != nil {
			return h, err
		}
		if h.TokenHash != before.TokenHash {
			s.dropHeartbeatToken(ctx, before.TokenHash) // a ref left behind finds no matching hash
		}
		if w.Due.IsZero() {
			s.rdb.ZRem(ctx, heartbeatsDue(), heartbeatMember(groupID, id)) // one left behind is dropped when due
		}
		return h, nil
	}
	return herald.Heartbeat{}, fmt.Errorf("store: %s changed %d times while writing", docKey, attempts)
}

// changeHeartbeat is one attempt of UpdateHeartbeat: redis.TxFailedErr when the document
// changed meanwhile.
func (s *Store) changeHeartbeat(ctx context.Context, groupID, id string, change func(*herald.Heartbeat) (HeartbeatWrite, error)) (h, before herald.Heartbeat, w HeartbeatWrite, err error) {
	hs := heartbeats(groupID)
	docKey, nameKey := hs.doc(id), heartbeatNames(groupID)
	read, err := s.rdb.Get(ctx, docKey).Bytes()
	if errors.Is(err, redis.Nil) {
		return h, before, w, errHeartbeatNotFound(id)
	}
	if err != nil {
		return h, before, w, err
	}
	if err := decodeDocAt(docKey, read, &h); err != nil {
		return h, before, w, fmt.Errorf("store: decode %s: %w", docKey, err)
	}
	before = h
	if w, err = change(&h); err != nil {
		return h, before, w, err
	}
	if h.Name != before.Name {
		// Checked first so that a refused rename writes nothing; again in the transaction.
		if err := nameFree(ctx, s.rdb, nameKey, h.Name, id); err != nil {
			return h, before, w, err
		}
	}
	if h.TokenHash != before.TokenHash {
		// The new ref first: a token the caller is told of always works.
		if err := s.setHeartbeatToken(ctx, h.TokenHash, groupID, id); err != nil {
			return h, before, w, err
		}
	}
	if !w.Due.IsZero() {
		// Before the document: a deadline in the set that is later than the document's is
		// moved back by the engine's check; one missing would never be looked at.
		if err := s.scheduleHeartbeat(ctx, groupID, id, w.Due); err != nil {
			return h, before, w, err
		}
	}
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		now, err := tx.Get(ctx, docKey).Bytes()
		if errors.Is(err, redis.Nil) {
			return errHeartbeatNotFound(id)
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(now, read) {
			return redis.TxFailedErr
		}
		if h.Name != before.Name {
			// Watched only now: pings and other changes without a rename never wait on the
			// project's other heartbeats being made or renamed.
			if err := tx.Watch(ctx, nameKey).Err(); err != nil {
				return err
			}
			if err := nameFree(ctx, tx, nameKey, h.Name, id); err != nil {
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
			return set(ctx, pipe, docKey, h)
		})
		return err
	}, docKey)
	return h, before, w, err
}

// nameFree fails with errHeartbeatName when another heartbeat than id has name in nameKey.
func nameFree(ctx context.Context, c redis.Cmdable, nameKey, name, id string) error {
	other, err := c.HGet(ctx, nameKey, name).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		return err
	case other != id:
		return errHeartbeatName(name)
	}
	return nil
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
			pipe.ZRem(ctx, hs.index(), hs.indexMembers(id)...)
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
	s.dropHeartbeatToken(ctx, h.TokenHash)
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

// heartbeatDoc is a heartbeat as stored: short names, times in unix seconds (Since, which
// deadlines count from, in nanoseconds), the token hash's bytes in base64url, its id and
// project left out where its key names them, its creation time where it is the second its id
// was made in (as for every heartbeat the API makes), and its updated time while it equals
// its creation. Every field of herald.Heartbeat has one here (a test checks). Documents
// written before, in the API's form (they begin with {"id":), are read as they are and
// rewritten in this form at their next change (a ping).
type heartbeatDoc struct {
	ID            string                `json:"i,omitempty"`
	GroupID       string                `json:"gi,omitempty"`
	Name          string                `json:"n,omitempty"`
	PeriodMin     int                   `json:"p,omitempty"`
	Schedule      string                `json:"sc,omitempty"`
	TimeZone      string                `json:"tz,omitempty"`
	GraceMin      int                   `json:"g,omitempty"`
	LabelMatchers []herald.LabelMatcher `json:"lm,omitempty"`
	Status        string                `json:"s,omitempty"`
	Created       *int64                `json:"t,omitempty"`
	Updated       *int64                `json:"u,omitempty"` // absent: the same as Created
	LastPing      *int64                `json:"lp,omitempty"`
	LastStart     *int64                `json:"ls,omitempty"`
	LastFailure   *int64                `json:"lf,omitempty"`
	LastBody      string                `json:"b,omitempty"`
	LastDuration  int64                 `json:"d,omitempty"`
	Runs          []herald.HeartbeatRun `json:"r,omitempty"`
	TokenHash     string                `json:"h,omitempty"`
	TokenTail     string                `json:"tt,omitempty"`
	Since         *int64                `json:"S,omitempty"`
	Missed        bool                  `json:"m,omitempty"`
	Failed        bool                  `json:"f,omitempty"`
}

// packHeartbeatAt is h's stored form at key.
func packHeartbeatAt(key string, h herald.Heartbeat) heartbeatDoc {
	d := heartbeatDoc{ID: packID(h.ID), GroupID: packID(h.GroupID), Name: h.Name, PeriodMin: h.PeriodMin,
		Schedule: h.Schedule, TimeZone: h.TimeZone, GraceMin: h.GraceMin, LabelMatchers: h.LabelMatchers,
		Status: h.Status, Created: packTimeOrZero(h.Created), LastPing: packTime(h.LastPing), LastStart: packTime(h.LastStart),
		LastFailure: packTime(h.LastFailure), LastBody: h.LastBody, LastDuration: h.LastDurationMs, Runs: h.Runs,
		TokenHash: packHex(h.TokenHash),
		TokenTail: h.TokenTail, Missed: h.Missed, Failed: h.Failed}
	if !h.Updated.Equal(h.Created.Time) {
		d.Updated = packTimeOrZero(h.Updated)
	}
	if s, ok := idSecond(h.ID); ok && !h.Created.IsZero() && h.Created.Unix() == s {
		d.Created = nil
	}
	if !h.Since.IsZero() {
		ns := h.Since.UnixNano()
		d.Since = &ns
	}
	if h.ID != "" && strings.HasSuffix(key, ":"+h.ID) {
		d.ID = ""
	}
	if gid, _, ok := projectOfKey(key); ok && gid == h.GroupID {
		d.GroupID = ""
	}
	return d
}

// decodeHeartbeatAt reads a heartbeat's stored form at key (a document written before, in the
// API's form, as it is).
func decodeHeartbeatAt(key string, b []byte, h *herald.Heartbeat) error {
	if isAPIForm(b) {
		return json.Unmarshal(b, h)
	}
	var d heartbeatDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*h = d.unpack()
	identify(key, &h.ID, &h.GroupID)
	if s, ok := idSecond(h.ID); ok && d.Created == nil {
		h.Created = herald.At(time.Unix(s, 0))
		if d.Updated == nil {
			h.Updated = h.Created
		}
	}
	return nil
}

func (d heartbeatDoc) unpack() herald.Heartbeat {
	h := herald.Heartbeat{ID: unpackID(d.ID), GroupID: unpackID(d.GroupID), Name: d.Name, PeriodMin: d.PeriodMin,
		Schedule: d.Schedule, TimeZone: d.TimeZone, GraceMin: d.GraceMin, LabelMatchers: d.LabelMatchers,
		Status: d.Status, Created: unpackTime(d.Created), LastPing: unpackTime(d.LastPing), LastStart: unpackTime(d.LastStart),
		LastFailure: unpackTime(d.LastFailure), LastBody: d.LastBody, LastDurationMs: d.LastDuration, Runs: d.Runs,
		TokenHash: unpackID(d.TokenHash),
		TokenTail: d.TokenTail, Missed: d.Missed, Failed: d.Failed}
	h.Updated = h.Created
	if d.Updated != nil {
		h.Updated = unpackTime(d.Updated)
	}
	if d.Since != nil {
		h.Since = time.Unix(0, *d.Since).UTC()
	}
	return h
}

// packTokenHash is a token hash as its field of hbtokens: the 32 bytes a SHA-256 in hex
// spells, any other hash whole after the raw mark.
func packTokenHash(hash string) string {
	if b, err := hex.DecodeString(hash); err == nil && len(b) == sha256.Size && hex.EncodeToString(b) == hash {
		return string(b)
	}
	return rawIDMark + hash
}

// packHex is a string of lower-case hex digits (a token's SHA-256) as the base64url of its
// bytes, as unpackID reads it back; any other string whole after the raw mark.
func packHex(s string) string {
	if s == "" {
		return ""
	}
	if b, err := hex.DecodeString(s); err == nil && hex.EncodeToString(b) == s {
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return rawIDMark + s
}
