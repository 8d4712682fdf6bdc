package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
)

// unauthorizedBody is the 401 body the platform sends with a challenge.
var unauthorizedBody = []byte(`{"reason":"Unauthorized","error":401,"detail":"You are not authorized for this resource."}`)

// authenticate verifies the request's digest credentials in the API's realm (or the
// monitoring console's, when monitoring): an API key (user name = public key) or a user (user
// name = username). Without valid credentials it answers 401 with a challenge (stale=true when
// only the nonce expired) and reports false; a name or address that failed too often is
// answered 429 RATE_LIMITED before anything is verified, and a wrong guess is counted. A
// caller whose key or user this process kept is checked in one round trip (authenticateKept).
//
// The log tells a refusal from the round trip: a challenge to a request without credentials
// (or with a stale nonce), the first half of every digest call, is the request's line at debug;
// an unknown user or key and a wrong secret are each a warning naming the user or key (never
// the secret or the response); malformed credentials an info line saying what was wrong.
func (s *Server) authenticate(w *statusRecorder, r *http.Request, monitoring bool) (herald.Principal, bool) {
	remote := remoteAddress(r)
	v := s.verifier // a copy per request, so the lookup can remember whom it found
	if monitoring {
		v.Realm = digest.MonitoringRealm
	}
	who, done, ok := s.authenticateKept(w, r, &v, remote, monitoring)
	if done {
		return who, ok
	}
	return s.authenticateStored(w, r, &v, remote, monitoring)
}

// refusedByThrottle answers a request whose name or address the failed-authentication throttle
// holds back (429 with Retry-After), or whose throttle could not be read, and says so.
func (s *Server) refusedByThrottle(w *statusRecorder, r *http.Request, name, throttled string) bool {
	wait, err := s.store.AuthRefused(r.Context(), name, throttled, s.cfg.AuthLimits)
	if err != nil {
		s.writeError(w, r, err)
		return true
	}
	if wait > 0 {
		s.writeError(w, r, rateLimited(wait))
		return true
	}
	return false
}

// authenticateStored is authenticate with the key or user read from Redis (nothing kept, or
// what was kept changed): the throttle, the credential and the nonce count, each in turn.
func (s *Server) authenticateStored(w *statusRecorder, r *http.Request, v *digest.Verifier, remote string, monitoring bool) (herald.Principal, bool) {
	var who herald.Principal
	name := digest.Username(r)
	throttled := clientNetwork(remote)
	if name != "" && s.refusedByThrottle(w, r, name, throttled) {
		return herald.Principal{}, false
	}
	var found store.Credential
	v.Credentials = func(ctx context.Context, username string) (string, bool, error) {
		c, err := s.store.Credential(ctx, username)
		if err != nil {
			return "", false, err
		}
		found, who = c, c.Principal(remote)
		ha1 := c.HA1(monitoring)
		return ha1, ha1 != "", nil
	}
	_, err := v.Verify(r)
	switch {
	case err == nil:
		s.kept.keep(name, found)
		return who, true
	case errors.Is(err, digest.ErrStale):
		w.roundTrip = true
		s.challenge(w, v, true)
	case errors.Is(err, digest.ErrNoCredentials):
		w.roundTrip = true
		s.challenge(w, v, false)
	case errors.Is(err, digest.ErrInvalid):
		s.refuse(w, r, v, name, remote, monitoring, err, who)
	default:
		s.log.Error("authentication failed", zap.Error(err))
		s.writeError(w, r, err)
	}
	return herald.Principal{}, false
}

// authenticateKept authenticates a request whose credentials answer what this process kept of
// its user name's key or user, in one round trip to Redis (store.CheckAuth): the throttle, that
// what was kept is still what is stored, and the nonce count. done is false when the request is
// not one it can decide (nothing kept, a stale nonce, anything malformed, a response that does
// not match what was kept, or a key or user changed since): authenticate then decides as it
// would without anything kept, with the nonce count this check recorded.
func (s *Server) authenticateKept(w *statusRecorder, r *http.Request, v *digest.Verifier, remote string, monitoring bool) (who herald.Principal, done, ok bool) {
	kept, attempt, found := s.keptAttempt(r, v, remote, monitoring)
	if !found {
		return who, false, false
	}
	check, err := s.store.CheckAuth(r.Context(), attempt)
	return s.decideKept(w, r, v, remote, monitoring, kept, attempt, check, err)
}

// keptAttempt finds what this process kept of the request's user name and checks the
// request's answer against it, here: found is false when it cannot (nothing kept, a stale
// nonce, anything malformed, an answer that does not match). attempt is what is left to check
// in Redis (store.CheckAuth).
func (s *Server) keptAttempt(r *http.Request, v *digest.Verifier, remote string, monitoring bool) (kept store.Credential, attempt store.AuthAttempt, found bool) {
	a, err := v.Read(r)
	if err != nil || a.Stale() {
		return kept, attempt, false
	}
	name := a.Username()
	if kept, found = s.kept.lookup(name); !found {
		return kept, attempt, false
	}
	if ha1 := kept.HA1(monitoring); ha1 == "" || !a.Answers(ha1) {
		return kept, attempt, false
	}
	return kept, store.AuthAttempt{Name: name, Address: clientNetwork(remote), Limits: s.cfg.AuthLimits,
		Kept: kept, Nonce: a.Nonce(), Count: a.Count(), CountTTL: v.CountLifetime()}, true
}

// decideKept answers a kept caller's request as its check in Redis came out (check, or err):
// done is false when what was kept changed, and the request is to be authenticated as without
// anything kept (authenticateStored, with the nonce count this check recorded).
func (s *Server) decideKept(w *statusRecorder, r *http.Request, v *digest.Verifier, remote string, monitoring bool,
	kept store.Credential, attempt store.AuthAttempt, check store.AuthCheck, err error) (who herald.Principal, done, ok bool) {
	if err != nil {
		s.writeError(w, r, err)
		return who, true, false
	}
	switch check.Outcome() {
	case store.AuthThrottled:
		s.writeError(w, r, rateLimited(check.Refused))
		return who, true, false
	case store.AuthChanged:
		s.kept.forget(attempt.Name)
		v.Counter = countRecorded(check.Advanced) // this request's count is recorded already
		return who, false, false
	case store.AuthReplayed:
		s.refuse(w, r, v, attempt.Name, remote, monitoring, digest.ErrReplayed, who)
		return who, true, false
	}
	return kept.Principal(remote), true, true
}

// countRecorded answers for a nonce count CheckAuth recorded (or refused) already.
type countRecorded bool

func (c countRecorded) Advance(context.Context, string, uint64, time.Duration) (bool, error) {
	return bool(c), nil
}

// refuse answers credentials that do not authenticate (err is digest.ErrInvalid) with a
// challenge, after logging why and counting a wrong guess against the throttle.
func (s *Server) refuse(w *statusRecorder, r *http.Request, v *digest.Verifier, name, remote string, monitoring bool, err error, who herald.Principal) {
	refused := []zap.Field{zap.String("username", name), zap.String("remote", remote), zap.Bool("monitoring", monitoring)}
	switch {
	case !errors.Is(err, digest.ErrWrongCredentials):
		s.log.Info("authentication refused: malformed digest credentials", append(refused, zap.Error(err))...)
	case who.PublicKey == "" && who.Username == "": // the lookup found nobody of that name
		s.log.Warn("authentication refused: unknown user or API key", refused...)
	default:
		s.log.Warn("authentication refused: wrong password or private key", refused...)
	}
	if errors.Is(err, digest.ErrWrongCredentials) {
		if err := s.store.AuthFailed(r.Context(), name, clientNetwork(remote), s.cfg.AuthLimits); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.challenge(w, v, false)
}

// DefaultAuthLimits: within 15 minutes, 10 failures of one name from one address, 100 from one
// address, or 50 on one name (then refused only to the addresses that failed on it).
var DefaultAuthLimits = store.AuthLimits{Window: 15 * time.Minute, PerPair: 10, PerAddress: 100, PerName: 50}

// rateLimited is the 429 of a throttled authentication.
func rateLimited(wait time.Duration) *herald.Error {
	e := herald.Errorf(herald.KindRateLimited, herald.CodeRateLimited, nil,
		"Too many failed authentications; try again in %d seconds.", retryAfterSeconds(wait))
	e.RetryAfter = wait
	return e
}

// retryAfterSeconds is a wait as the Retry-After header says it: whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int { return max(1, int((d+time.Second-1)/time.Second)) }

// clientNetwork is what failed authentications are counted against: the IPv4 address, or the
// /64 of an IPv6 one (which one holder usually has whole).
func clientNetwork(remote string) string {
	a, err := netip.ParseAddr(remote)
	if err != nil || !a.Is6() || a.Is4In6() {
		return remote
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

func (s *Server) challenge(w http.ResponseWriter, v *digest.Verifier, stale bool) {
	h := w.Header()
	h.Set("WWW-Authenticate", v.Challenge(stale))
	h.Set("Content-Type", "application/json;charset=ISO-8859-1")
	h.Set("Content-Length", strconv.Itoa(len(unauthorizedBody)))
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(unauthorizedBody)
}

// remoteAddress is the client's IP address as the connection shows it.
func remoteAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
