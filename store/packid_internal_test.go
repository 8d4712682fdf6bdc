package store

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// packIDBefore is packID as it was written first (decoded, encoded again to compare, and
// base64'd, on the heap): what it stored is what packID must store.
func packIDBefore(id string) string {
	if id == "" {
		return ""
	}
	if b, err := hex.DecodeString(id); err == nil && len(b) == 12 && hex.EncodeToString(b) == id {
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return rawIDMark + id
}

// FuzzPackID: packID stores every id as its first form did, and unpackID reads it back.
func FuzzPackID(f *testing.F) {
	for _, id := range []string{"", "0123456789abcdef01234567", "0123456789ABCDEF01234567", "0123456789abcdef0123456",
		"0123456789abcdef012345678", "0123456789abcdef0123456g", "c1", "~x", "0123456789abcdef 1234567"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got := packID(id)
		if want := packIDBefore(id); got != want {
			t.Errorf("packID(%q) = %q, want %q", id, got, want)
		}
		if back := unpackID(got); back != id {
			t.Errorf("unpackID(packID(%q)) = %q", id, back)
		}
	})
}

func BenchmarkPackID(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_ = packID("0123456789abcdef01234567")
	}
}

func BenchmarkPackIDBefore(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_ = packIDBefore("0123456789abcdef01234567")
	}
}

// key makes a key in one allocation: keys are built on every request's path.
func TestKeyAllocatesOnce(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { key(keysTag, "pub", "some-public-key") }); n != 1 {
		t.Errorf("key: %v allocations, want 1", n)
	}
}
