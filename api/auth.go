package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
)

// unauthorizedBody is the 401 body the platform sends with a challenge.
var unauthorizedBody = []byte(`{"reason":"Unauthorized","error":401,"detail":"You are not authorized for this resource."}`)

// authenticate verifies the request's digest credentials: an API key (user name = public key)
// or a user (user name = username). Without valid credentials it answers 401 with a challenge
// (stale=true when only the nonce expired) and reports false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (herald.Principal, bool) {
	remote := remoteAddress(r)
	var who herald.Principal
	v := s.verifier // a copy per request, so the lookup can remember whom it found
	v.Credentials = func(ctx context.Context, username string) (string, bool, error) {
		k, ok, err := s.store.APIKeyByPublicKey(ctx, username)
		if err != nil || ok {
			who = k.Principal(remote)
			return k.HA1, ok, err
		}
		u, ok, err := s.store.UserByUsername(ctx, username)
		if err != nil || !ok {
			return "", false, err
		}
		who = u.Principal(remote)
		return u.HA1, true, nil
	}
	_, err := v.Verify(r)
	switch {
	case err == nil:
		return who, true
	case errors.Is(err, digest.ErrStale):
		s.challenge(w, true)
	case errors.Is(err, digest.ErrNoCredentials), errors.Is(err, digest.ErrInvalid):
		s.challenge(w, false)
	default:
		s.log.Error("authentication failed", zap.Error(err))
		s.writeError(w, r, err)
	}
	return herald.Principal{}, false
}

func (s *Server) challenge(w http.ResponseWriter, stale bool) {
	h := w.Header()
	h.Set("WWW-Authenticate", s.verifier.Challenge(stale))
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
