package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// secretActionKey is the secret of the action keys of these tests: finding it in an output is
// a leak.
const secretActionKey = "action-key-secret-0123456789abcdefghij"

// HERALD_ACTION_KEYS that does not parse stops the role, naming the setting and never its
// secret; a worker with keys and no HERALD_EXTERNAL_URL stops, saying links need it; --help
// never shows the keys.
func TestActionKeysSettings(t *testing.T) {
	t.Setenv("HERALD_REDIS_URL", "redis://"+closedPort(t)+"/0")
	t.Setenv("HERALD_METRICS_LISTEN", "")
	t.Setenv("HERALD_LISTEN", "127.0.0.1:0")
	for _, tc := range []struct {
		role, keys, url string
		says            string
	}{
		{"worker", "k1:short-" + secretActionKey[:10], "https://herald.example.com", "at least 32 characters"},
		{"api", "k1:short-" + secretActionKey[:10], "", "at least 32 characters"},
		{"worker", secretActionKey, "https://herald.example.com", "want id:secret"},
		{"api", "k1:" + secretActionKey + ",k1:" + secretActionKey, "", "used twice"},
		{"worker", "k1:CHANGE-ME" + secretActionKey, "https://herald.example.com", "placeholder"},
		{"worker", "k1:" + secretActionKey, "", "HERALD_EXTERNAL_URL is not"},
		{"worker", "k1:" + secretActionKey, "herald.example.com", "HERALD_EXTERNAL_URL"},
	} {
		t.Setenv("HERALD_ACTION_KEYS", tc.keys)
		t.Setenv("HERALD_EXTERNAL_URL", tc.url)
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{tc.role}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "HERALD_") {
			t.Errorf("herald %s with HERALD_ACTION_KEYS=%q HERALD_EXTERNAL_URL=%q: %v, want a refusal saying %q", tc.role, tc.keys, tc.url, err, tc.says)
		}
		if err != nil && strings.Contains(err.Error()+out.String()+errOut.String(), secretActionKey[:10]) {
			t.Errorf("herald %s showed the action key's secret: %v", tc.role, err)
		}
	}
	// Good keys: every role gets as far as Redis, and --help names the setting, not its value.
	t.Setenv("HERALD_ACTION_KEYS", "k2:"+secretActionKey+",k1:"+secretActionKey+"-old")
	t.Setenv("HERALD_EXTERNAL_URL", "https://herald.example.com")
	for _, role := range []string{"dev", "api", "worker"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{role, "--help"}, &out, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("herald %s --help: %v", role, err)
		}
		if !strings.Contains(out.String(), "HERALD_ACTION_KEYS") || strings.Contains(out.String(), secretActionKey) {
			t.Errorf("herald %s --help does not name HERALD_ACTION_KEYS, or shows its value:\n%s", role, out.String())
		}
		if role == "dev" {
			continue // its embedded store would start
		}
		if err := run(context.Background(), []string{role}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "does not answer") {
			t.Errorf("herald %s with good action keys: %v, want it to get as far as Redis", role, err)
		}
	}
}

// Without keys, the worker makes no links and the API takes none, each saying so once in the
// log with how to turn them on; with keys, the worker's links start with the external URL.
func TestActionLinksAreOffWithoutKeys(t *testing.T) {
	core, logged := observer.New(zapcore.InfoLevel)
	log := zap.New(core)
	var off actionLinks
	if l, err := off.linker(log); l != nil || err != nil {
		t.Fatalf("linker without keys: %v, %v; want none", l, err)
	}
	off.describeAPI(log)
	lines := logged.TakeAll()
	if len(lines) != 2 || !strings.Contains(lines[0].Message, "no action links") || !strings.Contains(lines[0].Message, "HERALD_ACTION_KEYS") ||
		!strings.Contains(lines[1].Message, "action links are off") || !strings.Contains(lines[1].Message, "HERALD_ACTION_KEYS") {
		t.Errorf("want one line from each role saying links are off and how to turn them on, got %v", lines)
	}

	t.Setenv("HERALD_ACTION_KEYS", "k1:"+secretActionKey)
	s := newSettings("worker", "", &bytes.Buffer{})
	var c common
	c.bindWorkerLinks(s)
	if err := s.parse([]string{"--external-url=https://herald.example.com/"}); err != nil {
		t.Fatal(err)
	}
	l, err := c.Actions.linker(log)
	if err != nil || l == nil || l.Base() != "https://herald.example.com" {
		t.Fatalf("linker with keys: %v, %v", l, err)
	}
	for _, e := range logged.TakeAll() {
		if strings.Contains(e.Message+fmt.Sprint(e.ContextMap()), secretActionKey) {
			t.Error("the log shows the key's secret")
		}
	}
}
