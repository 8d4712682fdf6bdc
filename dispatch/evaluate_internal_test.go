package dispatch

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// Findings that change nothing are dropped before any alert is read; a configuration and
// target with any finding that may change something keeps all of its, in order.
func TestChangingFindings(t *testing.T) {
	v := 5.0
	at := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	down := herald.Observation{EventTypeName: "HOST_DOWN"}
	measured := herald.Observation{EventTypeName: "HOST_DOWN", CurrentValue: &herald.CurrentValue{Number: v}}
	f := func(target string, holds bool, o herald.Observation) finding {
		return finding{obs: o, config: "c", target: target, holds: holds}
	}
	expiring := f("open", true, down)
	expiring.expires = at
	open := map[[2]string]string{{"c", "open"}: "a1"}
	for _, tc := range []struct {
		name string
		fs   []finding
		want int // findings kept
	}{
		{"a clear of no open alert", []finding{f("t", false, down)}, 0},
		{"a first report", []finding{f("t", true, down)}, 1},
		{"cleared, then reported", []finding{f("t", false, down), f("t", true, down)}, 2},
		{"a re-report of an open alert", []finding{f("open", true, down), f("open", true, down)}, 0},
		{"a re-report with a value", []finding{f("open", true, down), f("open", true, measured)}, 2},
		{"a clear of an open alert", []finding{f("open", true, down), f("open", false, down)}, 2},
		{"a renewal of its expiry", []finding{expiring}, 1},
		{"one of each", []finding{f("open", true, down), f("t", false, down), f("u", true, down)}, 1},
	} {
		if got := changing(tc.fs, open); len(got) != tc.want {
			t.Errorf("%s: %d findings kept, want %d", tc.name, len(got), tc.want)
		}
	}
}

// Batches decoded side by side come out in their order; a damaged one says so alone.
func TestDecodeBatchesKeepsOrder(t *testing.T) {
	batches := [][]byte{
		[]byte(`[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h0"}]`),
		[]byte(`[{"eventTypeName":"HOST_DOWN"`),
		[]byte(`[{"eventTypeName":"HOST_DOWN","active":false,"hostId":"h2"},{"eventTypeName":"NO_PRIMARY","active":true,"replicaSetName":"rs0"}]`),
	}
	got := decodeBatches(batches)
	if len(got) != 3 || got[0].err != nil || len(got[0].obs) != 1 || got[0].obs[0].HostID != "h0" {
		t.Fatalf("batch 0: %+v", got)
	}
	if got[1].err == nil {
		t.Errorf("batch 1 (damaged) decoded: %+v", got[1])
	}
	if got[2].err != nil || len(got[2].obs) != 2 || got[2].obs[0].HostID != "h2" || got[2].obs[1].ReplicaSetName != "rs0" {
		t.Errorf("batch 2: %+v", got[2])
	}
}

// Claims of due alerts start small, grow with the run (half of what it took so far, up to
// claimBatch) and start small again once a claim comes back short.
func TestDueChunks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		claimed []int // what each claim gave, in turn
		want    []int // the size of each claim, and of the next
	}{
		{"nothing due", []int{0}, []int{64, 64}},
		{"a few", []int{3}, []int{64, 64}},
		{"a run of 500", []int{64, 64, 64, 96, 144, 68}, []int{64, 64, 64, 96, 144, 216, 64}},
		{"a backlog", []int{64, 64, 64, 96, 144, 216, 324, 486, 729, 1093, 1640, 2000, 2000},
			[]int{64, 64, 64, 96, 144, 216, 324, 486, 729, 1093, 1640, 2000, 2000, 2000}},
		{"caught up, then more", []int{64, 64, 10, 64}, []int{64, 64, 64, 64, 64}},
	} {
		var c dueChunks
		var got []int
		for _, n := range tc.claimed {
			got = append(got, c.size())
			c.claimed(n)
		}
		got = append(got, c.size())
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: sizes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A batch's first step is small while the sender is idle, so that its notices go out while
// the rest commits; every other step takes all that is left.
func TestApplyChunk(t *testing.T) {
	for _, c := range []struct {
		n              int
		firstWhileIdle bool
		want           int
	}{
		{500, true, idleChunk},
		{500, false, 500},
		{idleChunk - 1, true, idleChunk - 1},
		{1, false, 1},
	} {
		if got := applyChunk(c.n, c.firstWhileIdle); got != c.want {
			t.Errorf("applyChunk(%d, %v) = %d, want %d", c.n, c.firstWhileIdle, got, c.want)
		}
	}
}
