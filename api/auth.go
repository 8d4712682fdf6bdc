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
// answered 429 RATE_LIMITED before anything is verified, and a wrong guess is counted.
//
// The log tells a refusal from the round trip: a challenge to a request without credentials
// (or with a stale nonce), the first half of every digest call, is the request's line at debug;
// an unknown user or key and a wrong secret are each a warning naming the user or key (never
// the secret or the response); malformed credentials an info line saying what was wrong.
func (s *Server) authenticate(w *statusRecorder, r *http.Request, monitoring bool) (herald.Principal, bool) {
	remote, name := remoteAddress(r), digest.Username(r)
	throttled := clientNetwork(remote)
	if name != "" {
		wait, err := s.store.AuthRefused(r.Context(), name, throttled, s.cfg.AuthLimits)
		if err != nil {
			s.writeError(w, r, err)
			return herald.Principal{}, false
		}
		if wait > 0 {
			s.writeError(w, r, rateLimited(wait))
			return herald.Principal{}, false
		}
	}
	var who herald.Principal
	v := s.verifier // a copy per request, so the lookup can remember whom it found
	if monitoring {
		v.Realm = digest.MonitoringRealm
	}
	v.Credentials = func(ctx context.Context, username string) (string, bool, error) {
		c, err := s.store.Credential(ctx, username)
		if err != nil {
			return "", false, err
		}
		var ha1, monitoringHA1 string
		switch {
		case c.APIKey != nil:
			who, ha1, monitoringHA1 = c.APIKey.Principal(remote), c.APIKey.HA1, c.APIKey.MonitoringHA1
		case c.User != nil:
			who, ha1, monitoringHA1 = c.User.Principal(remote), c.User.HA1, c.User.MonitoringHA1
		}
		if monitoring {
			ha1 = monitoringHA1 // empty for a key or user made before the console had its realm
		}
		return ha1, ha1 != "", nil
	}
	_, err := v.Verify(r)
	switch {
	case err == nil:
		return who, true
	case errors.Is(err, digest.ErrStale):
		w.roundTrip = true
		s.challenge(w, &v, true)
	case errors.Is(err, digest.ErrNoCredentials):
		w.roundTrip = true
		s.challenge(w, &v, false)
	case errors.Is(err, digest.ErrInvalid):
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
			if err := s.store.AuthFailed(r.Context(), name, throttled, s.cfg.AuthLimits); err != nil {
				s.writeError(w, r, err)
				return herald.Principal{}, false
			}
		}
		s.challenge(w, &v, false)
	default:
		s.log.Error("authentication failed", zap.Error(err))
		s.writeError(w, r, err)
	}
	return herald.Principal{}, false
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

type principalKey struct{}

func withPrincipal(ctx context.Context, p herald.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principalOf(ctx context.Context) herald.Principal {
	p, _ := ctx.Value(principalKey{}).(herald.Principal)
	return p
}

// remoteAddress is the client's IP address as the connection shows it.
func remoteAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
