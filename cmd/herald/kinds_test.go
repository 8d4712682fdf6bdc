package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/registry"
	"github.com/heraldhq/herald/dispatch"
)

// Every kind of the registry is wired: a sender (once mail and SMS are configured), a queue the worker serves by default for both spellings of its typeName and for
// its people's means, a row in docs/engine.md's table with its queue and priority, and each of its
// sender's settings in deploy/herald.env.example. A kind added to the registry and forgotten
// in any of these fails here.
func TestEveryKindIsWired(t *testing.T) {
	notifiers, mailer := senders(services{"HERALD_SMTP_ADDR": "127.0.0.1:25", "HERALD_SMS_ACCOUNT": "AC1"}, false)
	for _, kind := range herald.Senders() {
		if notifiers[kind] == nil {
			t.Errorf("no sender for %s: its package's Kind has no New", kind)
		}
	}
	for kind := range notifiers {
		if !slices.Contains(herald.Senders(), kind) {
			t.Errorf("a sender for %s, which the registry of kinds does not deliver to", kind)
		}
	}
	if mailer == nil {
		t.Error("no mailer for the owners' notices")
	}

	served, err := queuePriorities("")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range herald.Kinds() {
		for _, name := range []string{k.Name, k.TypeName(true)} {
			if q := dispatch.DeliveryQueue(name); served[q] == 0 {
				t.Errorf("retries of %s go to %s, which a worker does not serve by default (%v)", name, q, served)
			}
		}
		if served[k.Queue] != k.Priority {
			t.Errorf("%s: queue %s has priority %d by default, the registry says %d", k.Name, k.Queue, served[k.Queue], k.Priority)
		}
		if _, err := queuePriorities(k.Queue + "=1"); err != nil {
			t.Errorf("HERALD_QUEUE_PRIORITIES refuses %s's queue: %v", k.Name, err)
		}
	}
	if _, err := queuePriorities("deliveries-chata=1"); err == nil {
		t.Error("HERALD_QUEUE_PRIORITIES accepts deliveries-chata, a queue of no kind")
	}
	for _, kind := range herald.Senders() {
		if q := dispatch.DeliveryQueue(kind); served[q] == 0 {
			t.Errorf("retries of a person's %s go to %s, which a worker does not serve by default", kind, q)
		}
	}

	rows := readmeKindRows(t)
	for _, k := range herald.Kinds() {
		row, ok := rows[k.Name]
		if !ok {
			t.Errorf("docs/engine.md's table of kinds has no row for %s", k.Name)
			continue
		}
		if want := fmt.Sprintf("`%s` (%d)", k.Queue, k.Priority); row.queue != want {
			t.Errorf("docs/engine.md says %s retries in %s, the registry %s", k.Name, row.queue, want)
		}
		if k.GlobalName != "" && !strings.Contains(row.kinds, "`"+k.GlobalName+"`") {
			t.Errorf("docs/engine.md's row of %s does not name its global spelling %s", k.Name, k.GlobalName)
		}
	}
	for name := range rows {
		if _, ok := herald.LookupKind(name); !ok {
			t.Errorf("docs/engine.md's table of kinds has a row for %s, which is no kind", name)
		}
	}

	example, err := os.ReadFile("../../deploy/herald.env.example")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#?(HERALD_[A-Z0-9_]+)=`).FindAllSubmatch(example, -1) {
		listed[string(m[1])] = true
	}
	help := workerHelp(t)
	var settings []string
	for _, k := range registry.Kinds {
		for _, s := range k.Settings {
			settings = append(settings, k.Name+" "+s.Env)
		}
	}
	for _, k := range herald.Kinds() {
		if k.People != nil && k.People.Administrators {
			settings = append(settings, k.Name+" HERALD_ADMIN_EMAIL")
		}
	}
	for _, ks := range settings {
		kind, name, _ := strings.Cut(ks, " ")
		if !listed[name] {
			t.Errorf("%s's setting %s is not in deploy/herald.env.example", kind, name)
		}
		if !strings.Contains(help, "["+name+"]") && !environmentOnly(t, name) {
			t.Errorf("%s's setting %s is neither a worker setting nor read from the environment", kind, name)
		}
	}
}

// kindRow is a row of docs/engine.md's table of kinds: its first cell and its queue cell.
type kindRow struct{ kinds, queue string }

// readmeKindRows reads the table of the "Deliveries by kind" section, by each kind it names.
func readmeKindRows(t *testing.T) map[string]kindRow {
	t.Helper()
	src, err := os.ReadFile("../../docs/engine.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "## Deliveries by kind\n")
	if !ok {
		t.Fatal("docs/engine.md has no section Deliveries by kind")
	}
	section, _, _ = strings.Cut(section, "\n#")
	rows := map[string]kindRow{}
	name := regexp.MustCompile("^`([A-Z_]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		row := kindRow{kinds: strings.TrimSpace(cells[0]), queue: strings.TrimSpace(cells[len(cells)-1])}
		for _, kind := range strings.Split(row.kinds, ", ") {
			if m := name.FindStringSubmatch(kind); m != nil {
				rows[m[1]] = row
			}
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/engine.md's table of kinds has no rows")
	}
	return rows
}

// workerHelp is what herald worker --help prints.
func workerHelp(t *testing.T) string {
	t.Helper()
	var out, errOut bytes.Buffer
	_ = run(context.Background(), []string{"worker", "--help"}, &out, &errOut)
	return out.String() + errOut.String()
}

// environmentOnly reports whether the worker reads name from the environment only (the
// secrets no flag shows).
func environmentOnly(t *testing.T, name string) bool {
	t.Helper()
	var c common
	s := newSettings("worker", "", io.Discard)
	c.bindWorker(s, false)
	return slices.Contains(s.environment, name)
}

// HERALD_ADMIN_EMAIL is checked when a worker or herald dev starts: a malformed address
// refuses to start, naming the variable and the address.
func TestAdminEmailIsValidated(t *testing.T) {
	for _, role := range []string{"worker", "dev"} {
		t.Setenv("HERALD_ADMIN_EMAIL", "ops@example.com, not an address")
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{role}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "HERALD_ADMIN_EMAIL") || !strings.Contains(err.Error(), "not an address") {
			t.Errorf("herald %s with a malformed HERALD_ADMIN_EMAIL: %v", role, err)
		}
	}
}
