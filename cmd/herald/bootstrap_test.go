package main

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A bootstrap key stored before the console had its own realm gets the console's HA1 at the
// next start, so the operator's key still opens /monitoring/.
func TestBootstrapKeyGainsTheConsoleRealm(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	old := api.KeyFromPair("bootstrap key", "", []herald.Role{{RoleName: herald.GlobalOwner}}, "bootpub", "boot-private", time.Now())
	old.MonitoringHA1 = ""
	if err := st.CreateAPIKey(ctx, old, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureBootstrapKey(ctx, st, "bootpub:boot-private"); err != nil {
		t.Fatal(err)
	}
	k, ok, err := st.APIKeyByPublicKey(ctx, "bootpub")
	if err != nil || !ok || k.MonitoringHA1 != digest.HA1In(digest.MonitoringRealm, "bootpub", "boot-private") || k.HA1 != old.HA1 {
		t.Fatalf("bootstrap key after start: %+v (%v)", k, err)
	}
}
