package main

import (
	"context"
	"maps"
	"os/exec"
	"testing"
	"time"
)

func TestSubfields(t *testing.T) {
	got := subfields("calls=12,usec=340,usec_per_call=28.33,rejected_calls=0")
	want := map[string]int64{"calls": 12, "usec": 340, "rejected_calls": 0}
	if !maps.Equal(got, want) {
		t.Errorf("subfields = %v, want %v", got, want)
	}
	if got := subfields(""); len(got) != 0 {
		t.Errorf("subfields of nothing = %v", got)
	}
}

// On a server with nothing to do, settle waits a second of quiet and says it waited for
// nothing; the marks count the commands sent between them.
func TestSettleAndMarkOnAnIdleServer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	ctx := context.Background()
	rs, err := startRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.stop()
	if backgroundCPU(rs.pid()) < 0 {
		t.Fatal("negative CPU")
	}
	start := time.Now()
	if waited := rs.settle(ctx, 10*time.Second); waited != "" {
		t.Errorf("settle on an idle server waited for %s", waited)
	}
	if took := time.Since(start); took < time.Second || took >= 10*time.Second {
		t.Errorf("settle took %s, want a second of quiet", took)
	}
	m0, err := rs.mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := rs.Client.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m1, err := rs.mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := m1.commands["set"].calls - m0.commands["set"].calls; got != 3 {
		t.Errorf("%d SETs between the marks, want 3", got)
	}
	if m1.keys != 1 || m1.expiring != 0 {
		t.Errorf("keys %d, expiring %d; want 1, 0", m1.keys, m1.expiring)
	}
}
