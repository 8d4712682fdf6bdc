package store

import (
	"fmt"
	"reflect"
	"testing"
)

// Which failed-authentication counters refuse, as the throttle's rule says: the pair's and the
// address's at their limits, the name's at its limit only where the address failed on it.
func TestOverLimits(t *testing.T) {
	l := AuthLimits{PerPair: 2, PerAddress: 4, PerName: 3}
	for _, c := range []struct {
		name   string
		counts [3]int64 // pair, address, name
		want   [3]bool
	}{
		{"nothing failed", [3]int64{0, 0, 0}, [3]bool{}},
		{"below every limit", [3]int64{1, 3, 2}, [3]bool{}},
		{"pair at its limit", [3]int64{2, 2, 2}, [3]bool{true, false, false}},
		{"address at its limit", [3]int64{0, 4, 0}, [3]bool{false, true, false}},
		{"name at its limit, the address failed on it", [3]int64{1, 1, 3}, [3]bool{false, false, true}},
		{"name at its limit, the address never failed on it", [3]int64{0, 1, 3}, [3]bool{}},
		{"all over", [3]int64{5, 9, 9}, [3]bool{true, true, true}},
	} {
		if got := overLimits(c.counts, l); got != c.want {
			t.Errorf("%s: overLimits(%v) = %v, want %v", c.name, c.counts, got, c.want)
		}
	}
}

// A kept credential is current only while its name names the same id and its document is
// byte for byte the one read.
// Whether the document read is known (compared byte for byte) or only its Version (hashed),
// the answer is the same.
func TestCredentialCurrent(t *testing.T) {
	doc := `{"id":"k1","roles":["GLOBAL_OWNER"]}`
	read := Credential{Version: docVersion([]byte(doc)), doc: doc}
	versionOnly := Credential{Version: read.Version}
	for _, c := range []struct {
		name   string
		idNow  string
		docNow string
		stored bool
		want   bool
	}{
		{"unchanged", "k1", doc, true, true},
		{"the name now names another key", "k2", doc, true, false},
		{"the name is gone", "", doc, true, false},
		{"the document changed", "k1", `{"id":"k1","roles":[]}`, true, false},
		{"the document is gone", "k1", "", false, false},
	} {
		for _, kept := range []Credential{read, versionOnly} {
			if got := credentialCurrent("k1", kept, c.idNow, c.docNow, c.stored); got != c.want {
				t.Errorf("%s (document read known: %v): current = %v, want %v", c.name, kept.doc != "", got, c.want)
			}
		}
	}
}

// The counters' MGET: a missing counter counts 0, anything but a count is an error.
func TestFailCounts(t *testing.T) {
	got, err := failCounts([]any{"3", nil, "12"})
	if err != nil || got != [3]int64{3, 0, 12} {
		t.Errorf("failCounts = %v, %v; want [3 0 12]", got, err)
	}
	if _, err := failCounts([]any{"x", nil, nil}); err == nil {
		t.Error("a counter that is not a count was read as one")
	}
	if _, err := failCounts([]any{"1"}); err == nil {
		t.Error("one counter read for three")
	}
}

// The memo of what CheckAuth reads answers what authFailKeys and the key functions make, for
// every name, address and credential, before and after it forgets everything at its bound.
func TestCheckKeysMemo(t *testing.T) {
	var memo checkKeysMemo
	check := func(name, address string, user bool, id string) {
		t.Helper()
		fail := authFailKeys(name, address)
		ref, doc := publicKeyRef(name), apiKeys().doc(id)
		if user {
			ref, doc = usernameRef(name), users().doc(id)
		}
		want := &checkKeys{fail: fail, keyRef: publicKeyRef(name),
			oneMGet:     []any{"mget", fail[0], fail[1], fail[2], ref, doc},
			failsMGet:   []any{"mget", fail[0], fail[1], fail[2]},
			currentMGet: []any{"mget", ref, doc},
		}
		for range 2 { // made, then remembered
			got := memo.of(name, address, user, id)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q from %q (user %v, %s): %q, want %q", name, address, user, id, got, want)
			}
			for _, args := range [][]any{got.oneMGet, got.failsMGet, got.currentMGet} {
				if len(args) != cap(args) {
					t.Fatalf("%q has room to append to", args)
				}
			}
		}
	}
	check("key1", "10.0.0.1", false, "id1")
	check("key1", "10.0.0.2", false, "id1")
	check("key2", "10.0.0.1", false, "id2")
	check("key1\x0010.0.0.1", "", false, "id1")
	check("key1", "10.0.0.1", false, "id3") // the name now names another key
	check("key1", "10.0.0.1", true, "id3")  // a user of that name
	for i := range maxCheckKeys {
		memo.of(fmt.Sprint("k", i), "10.0.0.3", false, "id")
	}
	if n := memo.m.Len(); n > maxCheckKeys {
		t.Errorf("%d pairs kept, bound %d", n, maxCheckKeys)
	}
	check("key1", "10.0.0.1", false, "id1")
}
