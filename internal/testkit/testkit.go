// Package testkit is the small helpers Herald's tests share across packages: an output a
// process or a logger writes while the test reads it, and a free port on 127.0.0.1.
package testkit

import (
	"net"
	"strings"
	"sync"
	"testing"
)

// Buffer is an io.Writer safe to read (String) while others write to it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreeLoopbackAddr is a 127.0.0.1 address with a port free a moment ago, for a process the
// test starts to listen on.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
