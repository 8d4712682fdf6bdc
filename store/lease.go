package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A project's engine session holds a lease, and every write it makes to the engine's state is
// fenced by it:
//
//	{g:<id>}:obs-lock            the lease: the session's token, with a TTL it renews
//	{g:<id>}:obs-holder          the token of the session that took the lease last (no TTL)
//	{global}:obs-holder:<id>     the same, beside the project's global alerts
//
// Every write a session makes (a Transact, a claim, a removal from the due set or the outbox,
// a renewal, lastNotified, an observation batch leaving the queue) checks, in the same script
// or MULTI/EXEC, that the holder key of the scope it writes still names the session's token;
// when another session has taken the project since, it writes nothing and answers
// ErrLeaseLost. A lease that lapsed with nobody taking the project over fences nothing: no
// other session read what the late write changes, and the next one to take the lease names
// itself holder before it reads anything.
//
// The holder is a key apart from the lease so that renewing the lease (PEXPIRE) does not touch
// what a Transact WATCHes: a renewal would otherwise make every transaction under way try
// again. The global holder lives under {global} because Redis Cluster runs a script or a
// transaction on one slot only: the project's global alerts, due set and outbox are there.
// Taking the lease and naming the global holder are two steps on two slots; a session that
// stalls between them for longer than its lease, while another takes the project, names
// itself global holder late: the other's next global write then fails and it stops (the two
// never both write a scope), and its own first write to the project fails, since the lease is
// the other's.

func obsLock(groupID string) string { return key(groupTag(groupID), "obs-lock") }

// holder is the key naming the session whose writes to the scope's engine state are let
// through.
func (s Scope) holder() string {
	if s.Global {
		return key(globalTag, "obs-holder", s.GroupID)
	}
	return key(groupTag(s.GroupID), "obs-holder")
}

// ErrLeaseLost says the session's lease on its project ran out and another may hold it: the
// session must stop without writing more.
var ErrLeaseLost = errors.New("store: project lease lost")

// leaseLostReply is the error a fenced script answers when the session is no longer the
// scope's holder (Redis may put a code of its own before it).
const leaseLostReply = "HERALD_LEASE_LOST"

// fenceCheck begins every fenced script: KEYS[1] is the holder key of the scope it writes,
// ARGV[1] the session's token.
const fenceCheck = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('` + leaseLostReply + `') end
`

// fenced is a script that runs body only while the session is the scope's holder (fenceCheck).
func fenced(body string) *redis.Script { return redis.NewScript(fenceCheck + body) }

// leaseLost is err, or ErrLeaseLost when a fenced script answered that the session is no
// longer the holder.
func leaseLost(err error) error {
	if err != nil && strings.Contains(err.Error(), leaseLostReply) {
		return ErrLeaseLost
	}
	return err
}

// takeLease takes the lease KEYS[1] for token ARGV[1] for ARGV[2] ms when it is free, and
// names the token holder (KEYS[2]) in the same step. Returns 1 when taken.
var takeLease = redis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
return 1
`)

// releaseLock deletes a lock only if token still holds it.
var releaseLock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// extendLock renews a lock only if token still holds it.
var extendLock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// ProjectLock is the lease on evaluating a project's alerts: one engine session at a time, so
// that a project's observations are evaluated in the order they came. Each lock has a token
// of its own, so that two sessions of one process never pass for each other. The engine's
// writes are its methods, each fenced by the token. Its methods may be called from several
// goroutines (a session, its sender and its heartbeat).
type ProjectLock struct {
	s       *Store
	groupID string
	key     string
	token   string
}

// LockProject tries to take the lease for ttl; ok is false when another session holds it.
// The new holder is named for the project's keys and its global ones before it returns, so
// that no session that held the project before writes after the new one's first read.
func (s *Store) LockProject(ctx context.Context, groupID string, ttl time.Duration) (*ProjectLock, bool, error) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	l := &ProjectLock{s: s, groupID: groupID, key: obsLock(groupID), token: hex.EncodeToString(b)}
	n, err := takeLease.Run(ctx, s.rdb, []string{l.key, Scope{GroupID: groupID}.holder()}, l.token, ttl.Milliseconds()).Int()
	if err != nil || n == 0 {
		return nil, false, err
	}
	if err := s.rdb.Set(ctx, Scope{GroupID: groupID, Global: true}.holder(), l.token, 0).Err(); err != nil {
		_ = l.Unlock(context.WithoutCancel(ctx))
		return nil, false, err
	}
	return l, true, nil
}

// Extend renews the lease for ttl; ErrLeaseLost means it was lost and the holder must stop.
func (l *ProjectLock) Extend(ctx context.Context, ttl time.Duration) error {
	n, err := extendLock.Run(ctx, l.s.rdb, []string{l.key}, l.token, ttl.Milliseconds()).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Unlock gives the lease back.
func (l *ProjectLock) Unlock(ctx context.Context) error {
	return releaseLock.Run(ctx, l.s.rdb, []string{l.key}, l.token).Err()
}

// runFenced runs fenced script on the holder key of sc and keys, with the session's token
// before args.
func (l *ProjectLock) runFenced(ctx context.Context, script *redis.Script, sc Scope, keys []string, args ...any) *redis.Cmd {
	return script.Run(ctx, l.s.rdb, append([]string{sc.holder()}, keys...), append([]any{l.token}, args...)...)
}
