// Package testkit is the small helpers Herald's tests share across packages: an output a
// process or a logger writes while the test reads it, a free port on 127.0.0.1, an HTTP
// request whose answer is read whole, and a program a test runs.
package testkit

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// Do sends req with client and returns the answer, its body read whole (and closed); t fails
// if either fails.
func Do(t testing.TB, client *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// Get is Do of a GET of url with no credentials, as a probe or a scraper sends it.
func Get(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, http.DefaultClient, req)
}

// Program is the path of the program name. A test that runs it fails without it in CI (which
// installs every program a test runs) and is skipped elsewhere; why says what the test needs
// it for, or how to install it.
func Program(t testing.TB, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: %s", name, why)
		}
		t.Skipf("%s is not installed: %s", name, why)
	}
	return path
}
