package herald

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// IDs are 24 lower-case hex digits, like the platform's: 4 bytes of creation time (seconds),
// 3 bytes that differ per process, 5 bytes of a per-process counter with a random start. They
// sort by creation second and, within one process, by creation order, which the store's
// indexes use to break ties between items created in the same second.
var (
	idProcess [3]byte
	idCounter atomic.Uint64
)

func init() {
	var seed [8]byte
	if _, err := rand.Read(idProcess[:]); err != nil {
		panic("herald: no randomness for ids: " + err.Error())
	}
	if _, err := rand.Read(seed[:]); err != nil {
		panic("herald: no randomness for ids: " + err.Error())
	}
	idCounter.Store(binary.BigEndian.Uint64(seed[:]) >> 24)
}

// NewID returns a new identifier created at now.
func NewID(now time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(now.Unix()))
	copy(b[4:7], idProcess[:])
	n := idCounter.Add(1)
	b[7], b[8], b[9], b[10], b[11] = byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

// IDTime is the creation second id carries; ok is false for a string that is not an id.
func IDTime(id string) (t time.Time, ok bool) {
	if !ValidID(id) {
		return time.Time{}, false
	}
	var b [4]byte
	if _, err := hex.Decode(b[:], []byte(id[:8])); err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint32(b[:])), 0), true
}

// ValidID reports whether s has the form of an identifier. Path ids that fail it are simply
// not found; the check keeps garbage out of store keys.
func ValidID(s string) bool {
	if len(s) != 24 {
		return false
	}
	var b [12]byte // every read of an alert checks its ids: decoded here, not on the heap
	_, err := hex.Decode(b[:], []byte(s))
	return err == nil
}
