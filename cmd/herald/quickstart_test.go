package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/internal/testkit"
)

// devSession starts herald dev and returns its address (host:port) and the key it printed.
func devSession(t *testing.T) (addr, key string) {
	addr, key, _ = devSessionLine(t)
	return addr, key
}

// devSessionLine is devSession with the line herald dev prints to run examples/quickstart.sh.
func devSessionLine(t *testing.T) (addr, key, quickstart string) {
	t.Helper()
	t.Setenv("HERALD_REDIS_URL", "")
	out, _, stop := startDev(t)
	t.Cleanup(stop)
	banner := regexp.MustCompile(`Herald is running at http://(127\.0\.0\.1:\d+)/api/public/v1\.0\n(?s:.*?)public ([a-z]+)  private ([0-9a-f-]+)(?s:.*?)\n  (HERALD_KEY=.*quickstart\.sh)\n`)
	m := waitPrinted(t, out, banner, "no address, key and quickstart line in the banner")
	return m[1], m[2] + ":" + m[3], m[4]
}

// waitForEvents waits until recv got a notice of every one of events (its X-Vendor-Event).
func waitForEvents(t *testing.T, recv *channelstest.Receiver, events ...string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var got []string
		for _, r := range recv.Requests() {
			got = append(got, r.Header.Get("X-Vendor-Event"))
		}
		if !slices.ContainsFunc(events, func(e string) bool { return !slices.Contains(got, e) }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %q, want %v", got, events)
		}
	}
}

// requireCurl is curl's path: a test that runs what Herald prints or the README's session
// with it fails without it in CI (.ci/run installs it) and is skipped elsewhere.
func requireCurl(t *testing.T) string {
	t.Helper()
	return testkit.Program(t, "curl", "CI runs what herald dev prints and the README's session with it")
}

// examples/quickstart.sh, run by the line herald dev prints, runs the README's session under
// sh, capturing its ids itself and following HERALD_LISTEN; the alert's opening and
// resolution reach the receiver it is given.
func TestQuickstartScript(t *testing.T) {
	requireCurl(t)
	_, _, line := devSessionLine(t)
	recv := channelstest.NewReceiver(t, nil)
	cmd := exec.Command("sh", "-c", line) // as herald dev printed it, from the repository
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "HERALD_RECEIVER="+recv.URL+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"== Done: organization ", `"status": "CLOSED"`, `"outcome": "DELIVERED"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("quickstart.sh's output lacks %q:\n%s", want, out)
		}
	}
	waitForEvents(t, recv, "alert.open", "alert.close")
}

// The README's session, pasted as it is into bash and zsh (zsh when installed; CI installs
// it), works: the key and addresses are the only things replaced.
func TestREADMESessionInBashAndZsh(t *testing.T) {
	requireCurl(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	section = section[strings.Index(section, "## A session with curl"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	var blocks []string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		if !strings.Contains(b[1], "python3") { // the receiver runs in the test
			blocks = append(blocks, b[1])
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("%d shell blocks in the session, want 2 (the session, the alert's life)", len(blocks))
	}
	shells := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	} else if os.Getenv("CI") != "" {
		t.Fatal("zsh is not installed: CI runs the README's session in zsh")
	}
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			addr, key := devSession(t)
			recv := channelstest.NewReceiver(t, nil)
			script := strings.NewReplacer("PUB:PRIV", key, "127.0.0.1:8080", addr, "http://127.0.0.1:9000/", recv.URL+"/").
				Replace("set -e\n" + strings.Join(blocks, "\n"))
			out, err := exec.Command(shell, "-c", script).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", shell, err, out)
			}
			for _, want := range []string{"HTTP/1.1 401", `"status": "CLOSED"`, `"acknowledgingUsername": "`} {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s: the session's output lacks %q:\n%s", shell, want, out)
				}
			}
			waitForEvents(t, recv, "alert.open", "alert.close")
		})
	}
}
