package store

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// AuthAttempt is a request's authentication as a process that kept a credential it read
// (Credential, with its Version) has verified it: the response matched the kept secret, and
// what is left to check is in Redis.
type AuthAttempt struct {
	Name, Address string     // the digest user name; the network failures are counted against
	Limits        AuthLimits // the failed-authentication throttle
	Kept          Credential // as read earlier by Credential
	Nonce         string     // the nonce answered,
	Count         uint64     // its count,
	CountTTL      time.Duration
}

// AuthCheck is what CheckAuth found, all of it in one round trip.
type AuthCheck struct {
	// Refused: how long authentications of the name from the address are refused (0: not).
	Refused time.Duration
	// Current: the kept credential is still what the name names (its document unchanged, and
	// for a user no key of that name since).
	Current bool
	// Advanced: the nonce count was higher than any seen, and is now recorded (whatever the
	// other answers: a count is used once, even by a request refused for them).
	Advanced bool
}

// Outcome is what the check comes to: AuthOK when the kept credential authenticates the
// request, else why not, in the order the separate calls decided (AuthRefused, Credential,
// the nonce counter).
func (c AuthCheck) Outcome() AuthOutcome {
	switch {
	case c.Refused > 0:
		return AuthThrottled
	case !c.Current:
		return AuthChanged
	case !c.Advanced:
		return AuthReplayed
	}
	return AuthOK
}

// AuthOutcome is what a checked authentication comes to.
type AuthOutcome int

const (
	AuthOK        AuthOutcome = iota // authenticated
	AuthThrottled                    // refused for failed authentications: 429
	AuthChanged                      // the kept credential changed or is gone: read it again
	AuthReplayed                     // a nonce count seen before: refused
)

// credentialCurrent answers 1 when KEYS[1] (a name's reference) still holds ARGV[1] (the id)
// and KEYS[2] (the document) still hashes to ARGV[2].
var credentialCurrent = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local doc = redis.call('GET', KEYS[2])
if not doc or redis.sha1hex(doc) ~= ARGV[2] then return 0 end
return 1
`)

// CheckAuth checks, in one round trip (one pipeline; on Redis Cluster one per node, in
// parallel), what authenticating a request with a kept credential needs from Redis: the
// failed-authentication throttle (as AuthRefused), that the credential is still current, and
// the nonce count (as NonceCounter.Advance). Nothing is weakened against the separate calls:
// the count is recorded in Redis for every API process, the throttle counters are those every
// process shares, and the credential is compared with what is stored now.
func (s *Store) CheckAuth(ctx context.Context, a AuthAttempt) (AuthCheck, error) {
	var check AuthCheck
	ref, doc, id := publicKeyRef(a.Name), "", ""
	switch {
	case a.Kept.APIKey != nil:
		doc, id = apiKeys().doc(a.Kept.APIKey.ID), a.Kept.APIKey.ID
	case a.Kept.User != nil:
		ref, doc, id = usernameRef(a.Name), users().doc(a.Kept.User.ID), a.Kept.User.ID
	default:
		return check, errors.New("store: CheckAuth without a kept credential")
	}
	calls := []scriptCall{
		{script: authRefusedFor, keys: authFailKeys(a.Name, a.Address), args: []any{a.Limits.PerPair, a.Limits.PerAddress, a.Limits.PerName}},
		{script: credentialCurrent, keys: []string{ref, doc}, args: []any{id, a.Kept.Version}},
		{script: advanceNonce, keys: []string{nonceCount(a.Nonce)}, args: []any{a.Count, a.CountTTL.Milliseconds()}},
	}
	pipe := s.rdb.Pipeline()
	for i := range calls {
		calls[i].cmd = calls[i].script.EvalSha(ctx, pipe, calls[i].keys, calls[i].args...)
	}
	var keyOfName *redis.IntCmd // a key named like a kept user goes before it
	if a.Kept.User != nil {
		keyOfName = pipe.Exists(ctx, publicKeyRef(a.Name))
	}
	if _, err := pipe.Exec(ctx); err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return check, err // the first error; a NOSCRIPT (of some) is dealt with below
	}
	var answers [3]int64
	for i, c := range calls {
		n, err := c.cmd.Int64()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Redis lost its scripts (a restart, SCRIPT FLUSH): this one did not run; the
			// others did, and must not run twice (a count is advanced once).
			n, err = c.script.Run(ctx, s.rdb, c.keys, c.args...).Int64()
		}
		if err != nil {
			return check, err
		}
		answers[i] = n
	}
	if keyOfName != nil && keyOfName.Err() != nil {
		return check, keyOfName.Err()
	}
	check.Refused = time.Duration(answers[0]) * time.Millisecond
	check.Current = answers[1] == 1 && (keyOfName == nil || keyOfName.Val() == 0)
	check.Advanced = answers[2] == 1
	return check, nil
}

// scriptCall is one script of a pipeline, kept to be run again alone after a NOSCRIPT.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
}
