package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// A digest reads back as saved, only in its own project, and not after its time.
func TestDigestKeptForItsTime(t *testing.T) {
	st := store.New(storetest.Redis(t))
	ctx := context.Background()
	d := herald.Digest{ID: "6a1b2c3d4e5f60718293a4b5", GroupID: "5f0c6b1e2a3b4c5d6e7f8091", Kind: "SMS",
		Recipient: "+15550100", Created: herald.At(time.Unix(1700000000, 0)),
		Entries: []herald.DigestEntry{{AlertID: "6a1b2c3d4e5f60718293a4b6"}, {AlertID: "6a1b2c3d4e5f60718293a4b7", Ended: true}}}
	if err := st.SaveDigest(ctx, d, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	got, err := st.Digest(ctx, d.GroupID, d.ID)
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("Digest = %+v, %v; want %+v", got, err, d)
	}
	if _, err := st.Digest(ctx, "5f0c6b1e2a3b4c5d6e7f8092", d.ID); !herald.IsNotFound(err) {
		t.Fatalf("another project's read: %v, want not found", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := st.Digest(ctx, d.GroupID, d.ID)
		if herald.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("digest still read after its time: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
