package api

import (
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
)

// Bounds of what an API process keeps of the keys and users that authenticated with it.
const (
	// keptFor is how long a credential is kept after it was read: never trusted without
	// store.CheckAuth confirming it is still what is stored, so this only bounds memory held
	// for names no longer used.
	keptFor = time.Minute
	// maxKept bounds how many are kept; past it everything is forgotten at once (read again
	// on next use), which an API serving that many distinct callers a minute can afford.
	maxKept = 10_000
)

// keptCredentials are the keys and users (with their roles) this process read to authenticate
// requests, by digest user name, so that a request of a known caller is checked in one round
// trip (store.CheckAuth) rather than read again. Every use is checked against what Redis
// holds: a key or user changed or deleted through any API process stops authenticating as it
// was at once, on every process.
type keptCredentials struct {
	mu sync.Mutex
	m  map[string]keptCredential
}

type keptCredential struct {
	c    store.Credential
	read time.Time
}

// lookup returns what is kept of name, if it was read less than keptFor ago.
func (k *keptCredentials) lookup(name string) (store.Credential, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[name]
	if !ok || time.Since(e.read) > keptFor {
		return store.Credential{}, false
	}
	return e.c, true
}

// keep remembers c, just read, for name (nothing when it names nothing).
func (k *keptCredentials) keep(name string, c store.Credential) {
	if name == "" || c.Version == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKept {
		k.m = make(map[string]keptCredential)
	}
	k.m[name] = keptCredential{c: c, read: time.Now()}
}

// forget drops what is kept of name.
func (k *keptCredentials) forget(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, name)
}
