package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
)

// HTTP Basic on the Prometheus front door only: Prometheus and amtool speak Basic and Bearer,
// not Digest. The user name is an API key's public key, the password its private key, verified
// against the key's stored HA1 (MD5 of publicKey:realm:privateKey, which is all Herald keeps
// of the secret). Basic sends the private key itself, so it is refused over plain HTTP unless
// the operator allows it (Config.BasicOverHTTP). Failures count towards the same throttle as
// Digest's.

// isBasic reports whether the request carries Basic credentials.
func isBasic(r *http.Request) bool {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Basic")
}

// basicOverHTTPRefused is the answer to Basic credentials on a plain HTTP connection.
func basicOverHTTPRefused() *herald.Error {
	return herald.Errorf(herald.KindUnauthorized, herald.CodeBasicRequiresHTTPS, nil,
		"HTTP Basic credentials are taken only over HTTPS: use HTTPS or Digest (the operator can allow Basic over HTTP with HERALD_PROMETHEUS_BASIC_OVER_HTTP=true).")
}

// authenticateBasic verifies the request's Basic credentials as an API key. Like authenticate,
// it answers 429 to a throttled name or address before verifying, counts a wrong secret, and
// answers 401 to anything it refuses.
func (s *Server) authenticateBasic(w *statusRecorder, r *http.Request) (herald.Principal, bool) {
	if r.TLS == nil && !s.cfg.BasicOverHTTP {
		s.writeError(w, r, basicOverHTTPRefused())
		return herald.Principal{}, false
	}
	remote := remoteAddress(r)
	throttled := clientNetwork(remote)
	name, secret, ok := r.BasicAuth()
	if !ok || name == "" {
		s.log.Info("authentication refused: malformed basic credentials", zap.String("remote", remote))
		s.challenge(w, &s.verifier, false)
		return herald.Principal{}, false
	}
	if s.refusedByThrottle(w, r, name, throttled) {
		return herald.Principal{}, false
	}
	c, err := s.store.Credential(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return herald.Principal{}, false
	}
	// Compared whatever was found, in constant time, so that an unknown key costs what a known one does.
	stored := digest.HA1(name, "-") // a value no secret hashes to in practice, for an unknown key
	if c.APIKey != nil {
		stored = c.APIKey.HA1
	}
	if subtle.ConstantTimeCompare([]byte(digest.HA1(name, secret)), []byte(stored)) == 1 && c.APIKey != nil {
		return c.APIKey.Principal(remote), true
	}
	refused := []zap.Field{zap.String("username", name), zap.String("remote", remote), zap.Bool("basic", true)}
	if c.APIKey == nil {
		s.log.Warn("authentication refused: unknown API key", refused...)
	} else {
		s.log.Warn("authentication refused: wrong private key", refused...)
	}
	if err := s.store.AuthFailed(r.Context(), name, throttled, s.cfg.AuthLimits); err != nil {
		s.writeError(w, r, err)
		return herald.Principal{}, false
	}
	s.challenge(w, &s.verifier, false)
	return herald.Principal{}, false
}
