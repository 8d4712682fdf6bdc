package api

import (
	"errors"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
)

// A read endpoint the callers poll (agents, dashboards) costs a kept caller one Redis round
// trip in all: its authentication check (store.CheckAuth) goes in the round trip of the
// endpoint's read (call.fetch) rather than one of its own. Its request is let through to the
// endpoint once its answer matched what this process kept (keptAttempt), with the check
// pending; nothing of it is answered until the check passed (settle): a replay, a throttled
// name or a changed key gets exactly what authenticate would have answered, and what was read
// with the check is dropped. Only endpoints that change nothing are listed.
var checkedWithRead = map[string]bool{
	"GET /groups/{groupId}/alerts/{alertId}": true,
}

// keptCheck is a kept caller's request let through with its check in Redis pending.
type keptCheck struct {
	kept    store.Credential
	attempt store.AuthAttempt
	v       digest.Verifier // the request's, for a refusal's challenge
	remote  string
	w       *statusRecorder // where a refusal is answered

	ran   bool // the check ran (with a read, or alone): check and err are its outcome
	check store.AuthCheck
	err   error
}

// authenticateLater authenticates a request to an endpoint of checkedWithRead: a caller whose
// answer matches what this process kept is let through with its check pending; any other is
// authenticated now, as authenticate does.
func (s *Server) authenticateLater(w *statusRecorder, r *http.Request) (herald.Principal, *keptCheck, bool) {
	remote := remoteAddress(r)
	v := s.verifier // a copy per request, as authenticate's
	if kept, attempt, found := s.keptAttempt(r, &v, remote, false); found {
		w.check = keptCheck{kept: kept, attempt: attempt, v: v, remote: remote, w: w}
		return kept.Principal(remote), &w.check, true
	}
	who, ok := s.authenticateStored(w, r, &v, remote, false)
	return who, nil, ok
}

// errCheckPending is what fetch answers when the request's check did not pass: settle then
// answers the request as the check says.
var errCheckPending = errors.New("api: the request's authentication check did not pass")

// fetch runs read: in the round trip of the request's pending authentication check when it
// has one, else in its own.
func (c *call) fetch(read store.Read) error {
	p := c.pending
	if p == nil || p.ran {
		return c.s.store.Fetch(c.ctx, read)
	}
	p.ran = true
	p.check, p.err = c.s.store.CheckAuth(c.ctx, p.attempt, read)
	if p.err != nil || p.check.Outcome() != store.AuthOK {
		return errCheckPending
	}
	return nil
}

// settled is what settle came to.
type settled int

const (
	checkPassed settled = iota // the request was authenticated as it was let through
	checkFailed                // the request was refused (answered)
	serveAgain                 // what was kept changed: the request is authenticated anew, to be served again
)

// settle ends c's pending check before anything is answered: it runs it now if the endpoint
// read nothing with it, then decides as authenticate would have.
func (s *Server) settle(c *call) settled {
	p := c.pending
	if p == nil {
		return checkPassed
	}
	c.pending = nil
	if !p.ran {
		p.ran = true
		p.check, p.err = s.store.CheckAuth(c.ctx, p.attempt)
	}
	who, done, ok := s.decideKept(p.w, c.r, &p.v, p.remote, false, p.kept, p.attempt, p.check, p.err)
	switch {
	case done && ok:
		return checkPassed
	case done:
		return checkFailed
	}
	if who, ok = s.authenticateStored(p.w, c.r, &p.v, p.remote, false); !ok {
		return checkFailed
	}
	c.who = who
	return serveAgain
}
