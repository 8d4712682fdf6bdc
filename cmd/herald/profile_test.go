package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// HERALD_CPU_PROFILE writes a CPU profile (gzip-compressed protobuf, as go tool pprof reads)
// when the process stops, and a path that cannot be written refuses to start.
func TestCPUProfileIsWrittenOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile is not gzip data: % x", b[:min(len(b), 8)])
	}

	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil || !strings.Contains(err.Error(), "HERALD_CPU_PROFILE") {
		t.Fatalf("an unwritable profile path: %v, want an error naming HERALD_CPU_PROFILE", err)
	}
	stop, err = startCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
