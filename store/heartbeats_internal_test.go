package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// Every field of a heartbeat survives its stored form, at its own key (which names its id and
// project, left out of the document), at another's, with a token hash in hex (kept as its
// bytes) or not, and as documents written before (the API's form) are read.
func TestHeartbeatDocKeepsEveryField(t *testing.T) {
	var h herald.Heartbeat
	filled(t, &h, 5)
	withURL := h
	h.PingURL = "" // shown by the API, never kept: it holds the token
	sum := sha256.Sum256([]byte("token"))
	hexHash := h
	hexHash.TokenHash = hex.EncodeToString(sum[:])
	sameTimes := hexHash
	sameTimes.Updated = sameTimes.Created
	unpinged := sameTimes
	unpinged.Since, unpinged.LastPing, unpinged.LastStart, unpinged.LastFailure = time.Time{}, herald.Time{}, herald.Time{}, herald.Time{}
	createdWithID := unpinged // as the API makes them: its id made in the second it was created
	createdWithID.ID = herald.NewID(h.Created.Time)
	neverCreated := createdWithID
	neverCreated.Created = herald.Time{}
	for name, h := range map[string]herald.Heartbeat{"every field": h, "a hex token hash": hexHash,
		"updated when created": sameTimes, "never pinged": unpinged, "created when its id was made": createdWithID,
		"never created, with an id of that second": neverCreated} {
		for where, key := range map[string]string{"its own": heartbeats(h.GroupID).doc(h.ID),
			"another project's": heartbeats(herald.NewID(time.Now())).doc(h.ID),
			"another id's":      heartbeats(h.GroupID).doc(herald.NewID(time.Now()))} {
			b, err := encodeDocAt(key, h)
			if err != nil {
				t.Fatal(err)
			}
			var got herald.Heartbeat
			if err := decodeDocAt(key, b, &got); err != nil {
				t.Fatalf("%s at %s key: %v", name, where, err)
			}
			if !reflect.DeepEqual(got, h) {
				t.Errorf("%s at %s key changed through its stored form %s:\n got %+v\nwant %+v", name, where, b, got, h)
			}
			old, _ := json.Marshal(h) // as written before
			if got = (herald.Heartbeat{}); decodeDocAt(key, old, &got) != nil || !reflect.DeepEqual(got, h) {
				t.Errorf("%s written before, at %s key, read as %+v", name, where, got)
			}
		}
	}
	if b, _ := encodeDocAt(heartbeats(h.GroupID).doc(h.ID), hexHash); strings.Contains(string(b), packID(h.ID)) ||
		strings.Contains(string(b), packID(h.GroupID)) || strings.Contains(string(b), hexHash.TokenHash) {
		t.Errorf("a heartbeat's stored form names its id or project, or its token hash in hex: %s", b)
	}
	if b, _ := encodeDocAt(heartbeats(h.GroupID).doc(h.ID), withURL); strings.Contains(string(b), withURL.PingURL) {
		t.Errorf("a heartbeat's stored form keeps its ping URL: %s", b)
	}
}

// A pinged heartbeat's document, as the API writes it, stays within the allocator's 160-byte
// size class (with the string's header) that the memory figure of docs/performance.md was
// measured with: a field added to every heartbeat shows here first.
func TestHeartbeatDocSize(t *testing.T) {
	now := time.Unix(1_795_496_771, 123_456_789)
	sum := sha256.Sum256([]byte("token"))
	h := herald.Heartbeat{ID: herald.NewID(now), GroupID: herald.NewID(now), Name: "nightly backup db-17", PeriodMin: 1440,
		GraceMin: 30, Status: herald.HeartbeatUp, Created: herald.At(now), Updated: herald.At(now), LastPing: herald.At(now),
		TokenHash: hex.EncodeToString(sum[:]), TokenTail: "x9_Q", Since: now}
	b, err := encodeDocAt(heartbeats(h.GroupID).doc(h.ID), h)
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := json.Marshal(h); len(b) > 160-4 {
		t.Errorf("%d bytes stored (%s), want at most %d; the API form is %d", len(b), b, 160-4, len(old))
	}
}
