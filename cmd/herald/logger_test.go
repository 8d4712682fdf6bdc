package main

import (
	"strings"
	"testing"
	"time"
)

// A serving role's JSON log is written in batches: a line is not written when it is logged,
// but within logFlushInterval, and stop writes whatever is still buffered.
func TestRoleLogIsBatchedAndFlushed(t *testing.T) {
	var w lockedBuffer
	log, stop, err := newLogger("info", false, &w)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("first")
	if got := w.String(); got != "" {
		t.Fatalf("a line was written as it was logged (not batched): %q", got)
	}
	deadline := time.Now().Add(20 * logFlushInterval)
	for !strings.Contains(w.String(), `"msg":"first"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the line was not written within %s", 20*logFlushInterval)
		}
		time.Sleep(logFlushInterval / 10)
	}
	log.Info("last")
	stop()
	if !strings.Contains(w.String(), `"msg":"last"`) {
		t.Fatalf("stop did not write what was buffered: %q", w.String())
	}
}

// herald dev's console log, read by people as it happens, writes each line at once.
func TestDevLogWritesEachLineAtOnce(t *testing.T) {
	var w lockedBuffer
	log, stop, err := newLogger("info", true, &w)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	log.Info("now")
	if !strings.Contains(w.String(), "now") {
		t.Fatalf("the console line was not written at once: %q", w.String())
	}
}

// A warning is written at once, after the info lines buffered before it, in order: what an
// operator must see is neither held back nor lost with the buffer.
func TestRoleLogWritesWarningsAtOnce(t *testing.T) {
	var w lockedBuffer
	log, stop, err := newLogger("info", false, &w)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	log.Info("before")
	log.With().Warn("trouble")
	got := w.String()
	before, trouble := strings.Index(got, `"msg":"before"`), strings.Index(got, `"msg":"trouble"`)
	if before < 0 || trouble < 0 || before > trouble {
		t.Fatalf("the warning and the line before it were not written at once, in order: %q", got)
	}
}
