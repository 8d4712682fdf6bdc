// Package apitest serves Herald's API in tests, in this package's and in others': the API
// over HTTP on 127.0.0.1 and keys made straight in the store.
package apitest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// New is the API on st, with engine and cfg, logging to log (nil: nowhere); t fails if it
// cannot be made.
func New(t testing.TB, st *store.Store, engine api.Engine, log *zap.Logger, cfg api.Config) *api.Server {
	t.Helper()
	if log == nil {
		log = zap.NewNop()
	}
	a, err := api.New(context.Background(), st, engine, log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Serve serves New's API over HTTP on 127.0.0.1 until t ends.
func Serve(t testing.TB, st *store.Store, engine api.Engine, log *zap.Logger, cfg api.Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(t, st, engine, log, cfg))
	t.Cleanup(srv.Close)
	return srv
}

// Key makes an API key named name with roles in st (orgID "" for a global key) and returns
// it with its private part.
func Key(t testing.TB, st *store.Store, name, orgID string, roles ...herald.Role) (herald.APIKey, string) {
	t.Helper()
	k, priv := api.NewAPIKey(name, orgID, roles, time.Now())
	if err := st.CreateAPIKey(context.Background(), k, nil); err != nil {
		t.Fatal(err)
	}
	return k, priv
}

// OwnerKey is Key of a global owner's key.
func OwnerKey(t testing.TB, st *store.Store, name string) (herald.APIKey, string) {
	t.Helper()
	return Key(t, st, name, "", herald.Role{RoleName: herald.GlobalOwner})
}
