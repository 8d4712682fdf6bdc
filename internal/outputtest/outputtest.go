// Package outputtest gives tests an output that a process or a logger writes while the test
// reads it.
package outputtest

import (
	"strings"
	"sync"
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
