package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/internal/memo"
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

// CheckAuth checks, in one round trip (one pipeline; on Redis Cluster one per node, in
// parallel), what authenticating a request with a kept credential needs from Redis: the
// failed-authentication throttle (as AuthRefused), that the credential is still current, and
// the nonce count (as NonceCounter.Advance). Nothing is weakened against the separate calls:
// the count is recorded in Redis for every API process, the throttle counters are those every
// process shares, and the credential is compared with what is stored now. The count is
// compared and recorded at once by Redis (queueAdvance); the rest are plain reads, decided
// here, for a throttled request with one more round trip to learn for how long.
//
// The reads given go in the same round trip: what they read may be used only once the check
// came to AuthOK (they are read whatever it comes to, and change nothing).
func (s *Store) CheckAuth(ctx context.Context, a AuthAttempt, reads ...Read) (AuthCheck, error) {
	var check AuthCheck
	var user bool
	var id string
	switch {
	case a.Kept.APIKey != nil:
		id = a.Kept.APIKey.ID
	case a.Kept.User != nil:
		user, id = true, a.Kept.User.ID
	default:
		return check, errors.New("store: CheckAuth without a kept credential")
	}
	keys := lastCheckKeys.of(a.Name, a.Address, user, id)
	cmds := checkCmdsPool.Get().(*checkCmds)
	pipe := s.pipeline()
	// The failure counters, what the name names now, and that credential's document: one MGET
	// on one server, two on a Cluster (the counters share a slot, the name and its document
	// another). Every command fewer counts on this path (BenchmarkCheckAuth).
	var fails, current *redis.SliceCmd
	if s.oneNode {
		fails = queueMGet(ctx, pipe, &cmds.fails, keys.oneMGet)
	} else {
		fails, current = queueMGet(ctx, pipe, &cmds.fails, keys.failsMGet), queueMGet(ctx, pipe, &cmds.current, keys.currentMGet)
	}
	queueAdvance(ctx, pipe, &cmds.advance, a.Nonce, a.Count, a.CountTTL)
	var keyOfName *redis.IntCmd // a key named like a kept user goes before it
	if user {
		keyOfName = pipe.Exists(ctx, keys.keyRef)
	}
	for _, r := range reads {
		r.queue(ctx, pipe)
	}
	finished, err := s.pipelinedOnceFinished(ctx, pipe)
	if finished { // else its round trip may still write into cmds: left to the collector
		defer cmds.release()
	}
	if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "WRONGTYPE") {
		return check, err // the first error; a missing document or a count in the older layout is dealt with below
	}
	if check.Advanced, err = cmds.advance.result(ctx, s.rdb); err != nil {
		return check, err
	}
	counters, err := fails.Result()
	if err != nil {
		return check, err
	}
	failKeys := keys.fail
	var now []any       // what the name names now, and its credential's document
	if current == nil { // one server: both after the counters, in their MGET
		if len(counters) != len(failKeys)+2 {
			return check, fmt.Errorf("store: %d values of an authentication check's MGET, not %d", len(counters), len(failKeys)+2)
		}
		counters, now = counters[:len(failKeys)], counters[len(failKeys):]
	} else if now, err = current.Result(); err != nil {
		return check, err
	}
	counts, err := failCounts(counters)
	if err != nil {
		return check, err
	}
	if check.Refused, err = s.refusedFor(ctx, failKeys, counts, a.Limits); err != nil {
		return check, err
	}
	idNow, _ := now[0].(string)
	docNow, stored := now[1].(string)
	if keyOfName != nil && keyOfName.Err() != nil {
		return check, keyOfName.Err()
	}
	check.Current = credentialCurrent(id, a.Kept, idNow, docNow, stored) && (keyOfName == nil || keyOfName.Val() == 0)
	return check, nil
}

// credentialCurrent says whether credential kept, read as id, is what is stored now: its name
// still names idNow = id, and its document is still the one read (docNow; stored false: gone):
// byte for byte when the document read is known, else by its Version.
func credentialCurrent(id string, kept Credential, idNow, docNow string, stored bool) bool {
	switch {
	case idNow != id || !stored:
		return false
	case kept.doc != "":
		return docNow == kept.doc
	}
	return isDocVersion([]byte(docNow), kept.Version)
}

// A Read is a read of documents that can go in another call's round trip (CheckAuth's): it
// queues its commands on the pipeline, and its own methods decode their answers after.
type Read interface {
	queue(ctx context.Context, pipe redis.Pipeliner)
}

// Fetch runs r in a round trip of its own (its answers, missing documents included, are for r
// to decode).
func (s *Store) Fetch(ctx context.Context, r Read) error {
	pipe := s.pipeline()
	r.queue(ctx, pipe)
	if err := s.pipelinedOnce(ctx, pipe); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return nil
}

// checkCmds are the commands CheckAuth sends, in one allocation used again (checkCmdsPool).
type checkCmds struct {
	fails, current redis.SliceCmd
	advance        advanceCmds
}

// checkCmdsPool holds checkCmds whose check is over, for the next.
var checkCmdsPool = sync.Pool{New: func() any { return new(checkCmds) }}

// release puts c, its round trip over and its answers read, back in checkCmdsPool, holding
// nothing of its check.
func (c *checkCmds) release() {
	*c = checkCmds{}
	checkCmdsPool.Put(c)
}

// queueMGet queues MGET of args (made by checkKeysMemo: "mget" and the keys, boxed) as cmd.
func queueMGet(ctx context.Context, pipe redis.Pipeliner, cmd *redis.SliceCmd, args []any) *redis.SliceCmd {
	*cmd = *redis.NewSliceCmd(ctx, args...)
	_ = pipe.Process(ctx, cmd) // a pipeline's Process only queues
	return cmd
}

// lastCheckKeys are the keys CheckAuth reads for the names, addresses and credentials it saw
// lately, and its MGETs' arguments of them: a kept caller asks again and again from the same
// address, and its keys cost three SHA-256 sums and as many strings to make, and each key
// given to go-redis as an argument an allocation more.
var lastCheckKeys checkKeysMemo

// maxCheckKeys bounds checkKeysMemo: past it, everything is forgotten at once.
const maxCheckKeys = 10_000

type checkKeysMemo struct {
	m memo.Map[checkPair, *checkKeys] // read-only once made
}

// checkPair is a name and address, and the credential of that name kept (a user's, or an
// API key's, and its id).
type checkPair struct {
	name, address string
	user          bool
	id            string
}

// checkKeys are the keys of a checkPair that CheckAuth reads, and its MGETs' arguments (shared
// by concurrent checks: go-redis only reads a command's arguments).
type checkKeys struct {
	fail   []string // the failed-authentication counters' (authFailKeys)
	keyRef string   // an API key's name: for a user, a key named like it goes before it
	// MGET's arguments: "mget", the counters, what the name names and the credential's
	// document, on one server (oneMGet); on a Cluster the counters (failsMGet) and the other
	// two (currentMGet).
	oneMGet, failsMGet, currentMGet []any
}

// of is what CheckAuth reads of pair (name, address, user, id), made once (to be read only).
func (f *checkKeysMemo) of(name, address string, user bool, id string) *checkKeys {
	return f.m.Get(checkPair{name, address, user, id}, maxCheckKeys, makeCheckKeys)
}

func makeCheckKeys(p checkPair) *checkKeys {
	k := &checkKeys{fail: authFailKeys(p.name, p.address), keyRef: publicKeyRef(p.name)}
	ref, doc := k.keyRef, apiKeys().doc(p.id)
	if p.user {
		ref, doc = usernameRef(p.name), users().doc(p.id)
	}
	// Every slice full (length = capacity): should anything append to one, it copies.
	k.oneMGet = []any{"mget", k.fail[0], k.fail[1], k.fail[2], ref, doc}
	k.failsMGet = k.oneMGet[: 1+len(k.fail) : 1+len(k.fail)]
	k.currentMGet = []any{"mget", ref, doc}
	return k
}
