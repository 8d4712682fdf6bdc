package store

import (
	"crypto/rand"
	"net/url"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Embedded is an in-memory Redis-compatible server on 127.0.0.1, for `herald dev` and quick
// unit tests: nothing to install, and nothing survives it. Production and CI use a real Redis.
// It requires a random password: every local user can reach a loopback port.
type Embedded struct {
	srv      *miniredis.Miniredis
	password string
}

// StartEmbedded starts an embedded server on a free loopback port.
func StartEmbedded() (*Embedded, error) {
	srv := miniredis.NewMiniRedis()
	password := rand.Text()
	srv.RequireAuth(password)
	// miniredis's clock stands still unless told otherwise, so no key would ever expire:
	// engine leases, nonce counters, every TTL. ClockTTL makes TTLs run down with the wall
	// clock, as a real Redis's do (expired keys go on the next command, which is what a
	// reader can observe).
	srv.ClockTTL(true)
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	answerInfo(srv, time.Now())
	return &Embedded{srv: srv, password: password}, nil
}

// URL is the redis:// address of the server, with its password.
func (e *Embedded) URL() string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", e.password), Host: e.srv.Addr()}).String()
}

// Addr is the server's host:port, without its password.
func (e *Embedded) Addr() string { return e.srv.Addr() }

// Close stops the server; its data is gone.
func (e *Embedded) Close() { e.srv.Close() }
