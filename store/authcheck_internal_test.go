package store

import (
	"testing"

	"github.com/redis/go-redis/v9"
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
func TestCredentialCurrent(t *testing.T) {
	doc := []byte(`{"id":"k1","roles":["GLOBAL_OWNER"]}`)
	v := docVersion(doc)
	for _, c := range []struct {
		name   string
		idNow  string
		docNow []byte
		want   bool
	}{
		{"unchanged", "k1", doc, true},
		{"the name now names another key", "k2", doc, false},
		{"the name is gone", "", doc, false},
		{"the document changed", "k1", []byte(`{"id":"k1","roles":[]}`), false},
		{"the document is gone", "k1", nil, false},
	} {
		if got := credentialCurrent("k1", v, c.idNow, c.docNow); got != c.want {
			t.Errorf("%s: current = %v, want %v", c.name, got, c.want)
		}
	}
}

// The counters' MGET: a missing counter counts 0, anything but a count is an error.
func TestFailCounts(t *testing.T) {
	got, err := failCounts(redis.NewSliceResult([]any{"3", nil, "12"}, nil))
	if err != nil || got != [3]int64{3, 0, 12} {
		t.Errorf("failCounts = %v, %v; want [3 0 12]", got, err)
	}
	if _, err := failCounts(redis.NewSliceResult([]any{"x", nil, nil}, nil)); err == nil {
		t.Error("a counter that is not a count was read as one")
	}
	if _, err := failCounts(redis.NewSliceResult([]any{"1"}, nil)); err == nil {
		t.Error("one counter read for three")
	}
}
