package main

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// infoLogger is newLogger at level info, to the console or as a serving role logs, writing to w.
func infoLogger(t *testing.T, console bool, w io.Writer) (*zap.Logger, func()) {
	t.Helper()
	log, stop, err := newLogger("info", console, w)
	if err != nil {
		t.Fatal(err)
	}
	return log, stop
}

// waitWritten waits, for up to 20 flush intervals, until w holds a JSON line of each of msgs.
func waitWritten(t *testing.T, w fmt.Stringer, msgs ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * logFlushInterval)
	for _, msg := range msgs {
		for !strings.Contains(w.String(), `"msg":"`+msg+`"`) {
			if time.Now().After(deadline) {
				t.Fatalf("%q was not written within %s: %q", msg, 20*logFlushInterval, w.String())
			}
			time.Sleep(logFlushInterval / 10)
		}
	}
}

// A serving role's JSON log is written in batches: a line is not written when it is logged,
// but within logFlushInterval, and stop writes whatever is still buffered.
func TestRoleLogIsBatchedAndFlushed(t *testing.T) {
	var w lockedBuffer
	log, stop := infoLogger(t, false, &w)
	log.Info("first")
	if got := w.String(); got != "" {
		t.Fatalf("a line was written as it was logged (not batched): %q", got)
	}
	waitWritten(t, &w, "first")
	log.Info("last")
	stop()
	if !strings.Contains(w.String(), `"msg":"last"`) {
		t.Fatalf("stop did not write what was buffered: %q", w.String())
	}
}

// herald dev's console log, read by people as it happens, writes each line at once.
func TestDevLogWritesEachLineAtOnce(t *testing.T) {
	var w lockedBuffer
	log, stop := infoLogger(t, true, &w)
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
	log, stop := infoLogger(t, false, &w)
	defer stop()
	log.Info("before")
	log.With().Warn("trouble")
	got := w.String()
	before, trouble := strings.Index(got, `"msg":"before"`), strings.Index(got, `"msg":"trouble"`)
	if before < 0 || trouble < 0 || before > trouble {
		t.Fatalf("the warning and the line before it were not written at once, in order: %q", got)
	}
}

// syncCounter is a log destination that counts the fsyncs asked of it.
type syncCounter struct {
	lockedBuffer
	syncs atomic.Int32
}

func (s *syncCounter) Sync() error { s.syncs.Add(1); return nil }

// A serving role's log is written, never synced to disk: zap's buffered writer syncs its
// destination at every flush while holding the lock each log line takes, and a file's Sync
// is an fsync, which every request logging a line would then wait for.
func TestRoleLogNeverSyncs(t *testing.T) {
	var w syncCounter
	log, stop := infoLogger(t, false, &w)
	log.Info("batched")
	log.Warn("at once")
	waitWritten(t, &w, "batched", "at once")
	time.Sleep(2 * logFlushInterval) // flushes with nothing new: still no sync
	stop()
	if n := w.syncs.Load(); n != 0 {
		t.Fatalf("the destination was synced %d times, want never", n)
	}
}
