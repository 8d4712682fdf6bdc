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

// A batch that came while the sender was idle is committed in steps doubling from idleChunk,
// the last taking a rest of up to half as much again; any other batch in one step.
func TestApplyChunk(t *testing.T) {
	steps := func(n int, startedIdle bool) []int {
		var out []int
		for step := 0; n > 0; step++ {
			k := applyChunk(n, step, startedIdle)
			if k < 1 || k > n {
				t.Fatalf("applyChunk(%d, %d, %v) = %d", n, step, startedIdle, k)
			}
			out, n = append(out, k), n-k
		}
		return out
	}
	for _, c := range []struct {
		n           int
		startedIdle bool
		want        []int
	}{
		{500, true, []int{64, 128, 308}},
		{500, false, []int{500}},
		{idleChunk - 1, true, []int{idleChunk - 1}},
		{96, true, []int{96}},                  // 64 and a rest of 32: one step
		{97, true, []int{64, 33}},              // past half as much again
		{1000, true, []int{64, 128, 256, 552}}, // herald.MaxObservationsPerRequest-sized
		{100000, true, []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 83680}},
		{1, false, []int{1}},
	} {
		if got := steps(c.n, c.startedIdle); !slices.Equal(got, c.want) {
			t.Errorf("steps of %d (started idle: %v) = %v, want %v", c.n, c.startedIdle, got, c.want)
		}
	}
}
