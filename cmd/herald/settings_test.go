package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store/storetest"
)

// The one parser of each type of setting, as a table.
func TestSettingParsers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
		ok   bool
	}{
		{"true", true, true}, {"TRUE", true, true}, {"1", true, true}, {"yes", true, true}, {"on", true, true},
		{"false", false, true}, {"0", false, true}, {"No", false, true}, {"off", false, true},
		{"", false, false}, {"maybe", false, false}, {"2", false, false}, {"enabled", false, false},
	} {
		got, err := parseBool(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseBool(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1m", time.Minute, true}, {"90s", 90 * time.Second, true}, {"1h30m", 90 * time.Minute, true},
		{"30d", 30 * day, true}, {"1d12h", 36 * time.Hour, true}, {"0", 0, true}, {"250ms", 250 * time.Millisecond, true},
		{"1", 0, false}, {"1.5", 0, false}, {"30x", 0, false}, {"d", 0, false}, {"1.5d", 0, false},
		{"-1d", 0, false}, {"1d-1h", 0, false}, {"", 0, false}, {"soon", 0, false},
	} {
		got, err := parseDuration(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	if _, err := parseDuration("1"); err == nil || !strings.Contains(err.Error(), "no unit") {
		t.Errorf("a bare number is refused for its missing unit: %v", err)
	}
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{{"20", 20, true}, {" 7 ", 7, true}, {"-1", -1, true}, {"abc", 0, false}, {"2.5", 0, false}, {"", 0, false}} {
		got, err := parseInt(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseInt(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	for d, want := range map[time.Duration]string{time.Minute: "1m", 90 * day: "90d", 2 * time.Hour: "2h",
		90 * time.Minute: "1h30m", 10 * time.Second: "10s", 36 * time.Hour: "36h", 0: "0s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := parseDuration(formatDuration(d)); err != nil || back != d {
			t.Errorf("formatDuration(%v) does not read back: %v %v", d, back, err)
		}
	}
}

// A value that does not parse stops the role before it starts, and the message names the
// setting, the form its values take and an example. Each role is given a working Redis, so
// that one that ignored the value would start (and be reported as started).
func TestBadSettingStopsTheRole(t *testing.T) {
	redisURL := storetest.URL(storetest.Redis(t))
	for _, c := range []struct {
		role, env, value string
		want             []string
		args             []string
	}{
		// booleans
		{role: "api", env: "HERALD_MONITORING", value: "maybe", want: []string{`HERALD_MONITORING: "maybe" is not a boolean`, "true or false", "on/off", "e.g. HERALD_MONITORING="}},
		{role: "worker", env: "HERALD_ALLOW_PRIVATE_TARGETS", value: "sure", want: []string{`HERALD_ALLOW_PRIVATE_TARGETS: "sure" is not a boolean`, "yes/no"}},
		{role: "dev", env: "HERALD_MONITORING_WRITE", value: "2", want: []string{`HERALD_MONITORING_WRITE: "2" is not a boolean`}},
		{role: "api", env: "HERALD_PROMETHEUS_BASIC_OVER_HTTP", value: "tls", want: []string{`HERALD_PROMETHEUS_BASIC_OVER_HTTP: "tls" is not a boolean`}},
		// durations
		{role: "worker", env: "HERALD_MINUTE", value: "1", want: []string{`HERALD_MINUTE: "1" has no unit`, "ms, s, m, h, or d for days", "e.g. HERALD_MINUTE=1m"}},
		{role: "scheduler", env: "HERALD_RETENTION", value: "30x", want: []string{`HERALD_RETENTION: "30x" is not a duration`, "e.g. HERALD_RETENTION=90d"}},
		{role: "dev", env: "HERALD_ENGINE_LEASE", value: "soon", want: []string{`HERALD_ENGINE_LEASE: "soon" is not a duration`, "e.g. HERALD_ENGINE_LEASE=8s"}},
		{role: "scheduler", env: "HERALD_RECONCILE_INTERVAL", value: "0s", want: []string{"HERALD_RECONCILE_INTERVAL must be positive"}},
		// durations too short to work: positive, yet in effect zero
		{role: "scheduler", env: "HERALD_RECONCILE_INTERVAL", value: "1ns", want: []string{"HERALD_RECONCILE_INTERVAL must be 100ms or more, not 1ns"}},
		{role: "worker", env: "HERALD_ENGINE_LEASE", value: "1ms", want: []string{"HERALD_ENGINE_LEASE must be 1s or more, not 1ms"}},
		{role: "dev", env: "HERALD_MINUTE", value: "1ns", want: []string{"HERALD_MINUTE must be 100ms or more, not 1ns"}},
		{role: "dev", env: "HERALD_ENGINE_LEASE", value: "0s", want: []string{"HERALD_ENGINE_LEASE must be positive"}},
		// whole numbers
		{role: "worker", env: "HERALD_WORKER_CONCURRENCY", value: "abc", want: []string{`HERALD_WORKER_CONCURRENCY: "abc" is not a whole number`, "e.g. HERALD_WORKER_CONCURRENCY=20"}},
		{role: "dev", env: "HERALD_WORKER_CONCURRENCY", value: "0", want: []string{"HERALD_WORKER_CONCURRENCY must be 1 or more"}},
		{role: "worker", env: "HERALD_WORKER_CONCURRENCY", value: "100000", want: []string{"HERALD_WORKER_CONCURRENCY must be 10000 or less, not 100000"}},
		// words and lists of a form of their own
		{role: "api", env: "HERALD_LOG_LEVEL", value: "loud", want: []string{`HERALD_LOG_LEVEL: "loud" is not a log level`, "debug, info, warn or error"}},
		{role: "worker", env: "HERALD_LOG_LEVEL", value: "fatal", want: []string{`HERALD_LOG_LEVEL: "fatal" is not a log level`}},
		{role: "worker", env: "HERALD_PACE_SMS", value: "fast", want: []string{`HERALD_PACE_SMS: "fast" is not "off", or a rate N/s, N/m or N/h`, "e.g. HERALD_PACE_SMS=1/s"}},
		{role: "dev", env: "HERALD_PACE_EMAIL", value: "1/s,burst=0", want: []string{`HERALD_PACE_EMAIL: "1/s,burst=0"`, "the burst is a whole number from 1"}},
		{role: "worker", env: "HERALD_DIGEST_AFTER", value: "three", want: []string{`HERALD_DIGEST_AFTER: "three" is not a whole number from 0 to 1000`, "e.g. HERALD_DIGEST_AFTER=3"}},
		{role: "dev", env: "HERALD_DIGEST_WINDOW", value: "5m", want: []string{`HERALD_DIGEST_WINDOW: "5m" is not a whole number from 1 to 1440`, "HERALD_MINUTE"}},
		{role: "worker", env: "HERALD_DIGEST_WINDOW", value: "0", want: []string{`HERALD_DIGEST_WINDOW: "0"`}},
		{role: "worker", env: "HERALD_QUEUE_PRIORITIES", value: "engine", want: []string{`HERALD_QUEUE_PRIORITIES: "engine" is not queue=priority`}},
		{role: "worker", env: "HERALD_QUEUE_PRIORITIES", value: "engine=100000000", want: []string{"HERALD_QUEUE_PRIORITIES: the priority of engine must be a whole number from 0 to 100"}},
		{role: "api", env: "HERALD_REDIS_URL", value: "http://127.0.0.1:6379", want: []string{"HERALD_REDIS_URL: http://127.0.0.1:6379 is not a Redis URL", "invalid URL scheme", "redis://[:password@]host:port/db", "e.g. HERALD_REDIS_URL=redis://"}},
		{role: "worker", env: "HERALD_SMTP_PASSWORD", value: "CHANGE-ME", want: []string{"HERALD_SMTP_PASSWORD still holds the CHANGE-ME placeholder"}},
		{role: "api", env: "HERALD_BOOTSTRAP_KEY", value: "CHANGE-ME", want: []string{"HERALD_BOOTSTRAP_KEY still holds the CHANGE-ME placeholder"}},
		// addresses to listen on, refused before the role connects to anything
		{role: "api", env: "HERALD_LISTEN", value: "8080", want: []string{`HERALD_LISTEN: "8080" is not an address to listen on`, "host:port"}},
		{role: "dev", env: "HERALD_LISTEN", value: "127.0.0.1:8080 ", want: []string{`HERALD_LISTEN: "127.0.0.1:8080 " is not an address to listen on`}},
		{role: "worker", env: "HERALD_METRICS_LISTEN", value: "localhost", want: []string{`HERALD_METRICS_LISTEN: "localhost" is not an address to listen on`}},
		{role: "scheduler", env: "HERALD_METRICS_LISTEN", value: ":9091 ", want: []string{`HERALD_METRICS_LISTEN: ":9091 " is not an address to listen on`}},
		{role: "api", env: "HERALD_EXTERNAL_URL", value: "herald.example.com", want: []string{`HERALD_EXTERNAL_URL: "herald.example.com" is not the scheme and host`, "e.g. HERALD_EXTERNAL_URL=https://"}},
		{role: "dev", env: "HERALD_EXTERNAL_URL", value: "https://herald.example.com/ ", want: []string{`HERALD_EXTERNAL_URL: "https://herald.example.com/ "`}},
		{role: "api", args: []string{"--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key"}, want: []string{"HERALD_TLS_CERT and HERALD_TLS_KEY: ", "/nonexistent/tls.crt"}},
		// where deliveries go: an address every delivery of its kind would fail on
		{role: "worker", env: "HERALD_PAGING_URL", value: "events.example.com", want: []string{`HERALD_PAGING_URL: "events.example.com" is not a service's address`, "e.g. HERALD_PAGING_URL=https://"}},
		{role: "dev", env: "HERALD_SMS_URL", value: "https://sms.example.com ", want: []string{`HERALD_SMS_URL: "https://sms.example.com "`}},
		{role: "worker", env: "HERALD_SMTP_ADDR", value: "mail.example.com", want: []string{"the SMTP server address is not host:port (HERALD_SMTP_ADDR)", `HERALD_SMTP_ADDR="mail.example.com"`}},
		{role: "worker", env: "HERALD_SMTP_ADDR", value: "mail.example.com:25 ", want: []string{"not host:port (HERALD_SMTP_ADDR)"}},
		{role: "dev", args: []string{"--smtp-addr", "127.0.0.1:2525", "--smtp-from", "herald at example.com"}, want: []string{"the sender address (HERALD_SMTP_FROM) is not an email address"}},
		// how deliveries go out: a proxy or TLS file every delivery would fail on
		{role: "worker", env: "HERALD_OUTBOUND_PROXY", value: "proxy.example.com:3128", want: []string{"HERALD_OUTBOUND_PROXY: ", "is not a proxy URL (the scheme must be http or https)", "e.g. HERALD_OUTBOUND_PROXY=http://"}},
		{role: "dev", env: "HERALD_OUTBOUND_PROXY", value: "socks5://127.0.0.1:1080", want: []string{"HERALD_OUTBOUND_PROXY: ", "the scheme must be http or https"}},
		{role: "worker", env: "HERALD_OUTBOUND_PROXY", value: "http://proxy.example.com:3128/path", want: []string{"HERALD_OUTBOUND_PROXY: ", "no path, query or fragment"}},
		{role: "worker", env: "HERALD_OUTBOUND_PROXY", value: "http://user:CHANGE-ME@proxy.example.com:3128", want: []string{"the password of HERALD_OUTBOUND_PROXY still holds the CHANGE-ME placeholder"}},
		{role: "worker", env: "HTTPS_PROXY", value: "http://proxy.example.com:port", want: []string{"HTTPS_PROXY (or https_proxy) is not a proxy URL"}},
		{role: "worker", env: "HERALD_OUTBOUND_CA_FILE", value: "/nonexistent/ca.pem", want: []string{"HERALD_OUTBOUND_CA_FILE: ", "/nonexistent/ca.pem"}},
		{role: "dev", env: "HERALD_OUTBOUND_CA_FILE", value: "settings_test.go", want: []string{"HERALD_OUTBOUND_CA_FILE: settings_test.go holds no PEM certificate"}},
		{role: "worker", args: []string{"--outbound-cert-file", "/nonexistent/client.crt"}, want: []string{"HERALD_OUTBOUND_CERT_FILE and HERALD_OUTBOUND_KEY_FILE go together"}},
		{role: "worker", args: []string{"--outbound-cert-file", "/nonexistent/client.crt", "--outbound-key-file", "/nonexistent/client.key"}, want: []string{"HERALD_OUTBOUND_CERT_FILE and HERALD_OUTBOUND_KEY_FILE: ", "/nonexistent/client.crt"}},
		// secrets read from a file with its line end, or not a key at all: refused before they
		// are sent, and never shown
		{role: "api", env: "HERALD_BOOTSTRAP_KEY", value: "bootkey:0f8b1c3e-priv\n", want: []string{"HERALD_BOOTSTRAP_KEY begins or ends with white space"}},
		{role: "dev", env: "HERALD_BOOTSTRAP_KEY", value: "0f8b1c3e-priv", want: []string{"HERALD_BOOTSTRAP_KEY must be public:private"}},
		{role: "worker", env: "HERALD_SMTP_PASSWORD", value: "smtp-pw\n", want: []string{"HERALD_SMTP_PASSWORD begins or ends with white space"}},
		{role: "dev", env: "HERALD_SMS_TOKEN", value: " sms-token", want: []string{"HERALD_SMS_TOKEN begins or ends with white space"}},
		// text sent on as it is, with a space at an end that would fail each use of it
		{role: "worker", env: "HERALD_SMTP_USERNAME", value: "herald ", want: []string{`HERALD_SMTP_USERNAME: "herald " begins or ends with white space`}},
		{role: "dev", env: "HERALD_SMS_ACCOUNT", value: "AC0123 ", want: []string{`HERALD_SMS_ACCOUNT: "AC0123 " begins or ends with white space`}},
		{role: "worker", env: "HERALD_SMS_FROM", value: " +15557654321", want: []string{`HERALD_SMS_FROM: " +15557654321" begins or ends`}},
		{role: "scheduler", args: []string{"--redis-url=", "--redis-sentinels=127.0.0.1:26379", "--redis-master=mymaster "}, want: []string{`HERALD_REDIS_MASTER: "mymaster " begins or ends with white space`}},
		// a setting's name misspelt: it would leave the setting at its default
		{role: "api", env: "HERALD_LISTN", value: "127.0.0.1:9999", want: []string{"HERALD_LISTN is not a setting of Herald: did you mean HERALD_LISTEN?", "'herald api --help'"}},
		{role: "worker", env: "HERALD_WORKER_CONCURENCY", value: "50", want: []string{"did you mean HERALD_WORKER_CONCURRENCY?"}},
		{role: "scheduler", env: "HERALD_RETENTON", value: "30d", want: []string{"did you mean HERALD_RETENTION?"}},
		{role: "dev", env: "HERALD_SMTP_PASWORD", value: "pw", want: []string{"did you mean HERALD_SMTP_PASSWORD?"}},
		// flags, which win over the environment, are held to the same parsers
		{role: "worker", args: []string{"--concurrency", "many"}, want: []string{`invalid value "many" for flag -concurrency`, "not a whole number", "e.g. --concurrency=20"}},
		{role: "dev", args: []string{"--minute=5"}, want: []string{`"5" has no unit`, "e.g. --minute=1m"}},
	} {
		name := c.role + " " + c.env + "=" + c.value + strings.Join(c.args, " ")
		t.Run(name, func(t *testing.T) {
			t.Setenv("HERALD_METRICS_LISTEN", "")
			t.Setenv("HERALD_LISTEN", "127.0.0.1:0")
			t.Setenv("HERALD_REDIS_URL", redisURL)
			if c.role == "dev" {
				t.Setenv("HERALD_REDIS_URL", "")
			}
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var out, logs lockedBuffer
			err := run(ctx, append([]string{c.role}, c.args...), &out, &logs)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("herald %s started (ended with %v):\n%s%s", c.role, err, out.String(), logs.String())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if secret := strings.TrimSpace(c.value); strings.Contains(c.env, "KEY") || strings.Contains(c.env, "PASSWORD") || strings.Contains(c.env, "TOKEN") {
				if secret != placeholder && strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows the secret %q:\n%v", secret, err)
				}
			}
			if logs.String() != "" {
				t.Errorf("herald %s logged before refusing its settings:\n%s", c.role, logs.String())
			}
		})
	}
}

// runHerald runs herald itself (this test binary playing main, see TestMain) with args and
// env added to the test's environment, and returns what it wrote and its exit code.
func runHerald(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "HERALD_TEST_ARGS="+strings.Join(args, " ")), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("herald %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("herald %v did not end within 30s:\n%s%s", args, o.String(), e.String())
	}
	return o.String(), e.String(), code
}

// The binary: a bad setting is refused with exit code 2 and its message on standard error;
// --help is not an error; herald without a role is.
func TestHeraldExitCodes(t *testing.T) {
	_, stderr, code := runHerald(t, []string{"HERALD_MINUTE=1", "HERALD_REDIS_URL=redis://127.0.0.1:1/0"}, "worker")
	if code != 2 || !strings.HasPrefix(stderr, `herald: HERALD_MINUTE: "1" has no unit`) {
		t.Errorf("worker with HERALD_MINUTE=1: exit %d, stderr:\n%s", code, stderr)
	}
	for _, role := range []string{"dev", "api", "worker", "scheduler", "admin create-key"} {
		stdout, stderr, code := runHerald(t, nil, role, "--help")
		if code != 0 || !strings.HasPrefix(stdout, "herald "+role+": ") || stderr != "" {
			t.Errorf("herald %s --help: exit %d, stdout:\n%s\nstderr:\n%s", role, code, stdout, stderr)
		}
	}
	if _, stderr, code := runHerald(t, nil); code != 2 || !strings.Contains(stderr, "Usage:") {
		t.Errorf("herald alone: exit %d, stderr:\n%s", code, stderr)
	}
	_, stderr, code = runHerald(t, nil, "worker", "--listen", ":8080")
	if code != 2 || !strings.Contains(stderr, "flag provided but not defined: -listen") || !strings.Contains(stderr, "'herald worker --help' lists the settings") {
		t.Errorf("worker --listen: exit %d, stderr:\n%s", code, stderr)
	}
}

// Each role's --help lists the settings it uses and no other, and the worker's and the
// scheduler's metrics do not default to the same port (one of each runs on a host as is).
func TestRoleHelpListsItsOwnSettings(t *testing.T) {
	help := func(role string) string {
		var out bytes.Buffer
		if err := run(context.Background(), []string{role, "--help"}, &out, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("herald %s --help: %v", role, err)
		}
		return out.String()
	}
	for role, c := range map[string]struct{ has, hasNot []string }{
		// The api role reads the three settings that decide what the workers deliver, only to
		// warn, and the minute heartbeats' periods count in.
		"api": {has: []string{"--listen", "--external-url", "--tls-cert", "--monitoring", "--bootstrap-key", "--redis-url", "--log-level",
			"--smtp-addr", "--sms-account", "--allow-private-targets", "--minute"},
			hasNot: []string{"--concurrency", "--metrics-listen", "--retention", "--smtp-from", "--smtp-username", "--sms-url", "--lease"}},
		// The worker reads --external-url for notices' action links.
		"worker": {has: []string{"--concurrency", "--minute", "--queue-priorities", "--smtp-addr", "--lease", "--metrics-listen", `(default "` + workerMetricsListen + `")`,
			"--external-url"},
			hasNot: []string{"--listen", "--tls-cert", "--monitoring", "--bootstrap-key", "--retention"}},
		"scheduler": {has: []string{"--retention", "--reconcile-interval", "--metrics-listen", `(default "` + schedulerMetricsListen + `")`, "--redis-url"},
			hasNot: []string{"--listen", "--external-url", "--minute", "--concurrency", "--smtp-addr", "--bootstrap-key", "--monitoring"}},
		"dev": {has: []string{"--listen", "--minute", "--concurrency", "--retention", "--bootstrap-key"},
			hasNot: []string{"--metrics-listen"}},
	} {
		h := help(role)
		for _, s := range c.has {
			if strings.HasPrefix(s, "--") {
				s = "  " + s + " "
			}
			if !strings.Contains(h, s) {
				t.Errorf("herald %s --help does not list %s:\n%s", role, s, h)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(h, "  "+s+" ") {
				t.Errorf("herald %s --help lists %s, which it does not use", role, s)
			}
		}
	}
	if workerMetricsListen == schedulerMetricsListen {
		t.Error("the worker and the scheduler serve their metrics on the same port by default")
	}
}

// The admin command says how to make an organization role's key.
func TestCreateKeyHintsOrg(t *testing.T) {
	t.Setenv("HERALD_REDIS_URL", "")
	err := run(context.Background(), []string{"admin", "create-key", "--role", "ORG_OWNER"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ORG_OWNER is an organization role: add --org ORG_ID") {
		t.Errorf("create-key --role ORG_OWNER without --org: %v", err)
	}
}

// The Configuration page's table (docs/configuration.md) lists every setting and, for each, exactly the roles whose
// --help lists it: the table is written by hand, the roles' settings are the code.
func TestReadmeListsEachRolesSettings(t *testing.T) {
	roles := []string{"dev", "api", "worker", "scheduler"}
	name := regexp.MustCompile(`HERALD_[A-Z0-9_]+`)
	code := map[string][]string{} // setting -> the roles whose help names it
	for _, role := range roles {
		var out bytes.Buffer
		if err := run(context.Background(), []string{role, "--help"}, &out, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("herald %s --help: %v", role, err)
		}
		for _, v := range slices.Compact(slices.Sorted(slices.Values(name.FindAllString(out.String(), -1)))) {
			code[v] = append(code[v], role)
		}
	}
	page, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(string(page[bytes.Index(page, []byte("# Configuration\n")):]), "\n# ")
	doc := map[string][]string{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !name.MatchString(cells[1]) {
			continue
		}
		in := roles
		if r := strings.TrimSpace(cells[2]); r != "all" {
			in = strings.Split(strings.ReplaceAll(r, " ", ""), ",")
		}
		for _, v := range name.FindAllString(cells[1], -1) {
			doc[v] = slices.Sorted(slices.Values(in))
		}
	}
	for v, rs := range code {
		slices.Sort(rs)
		if !slices.Equal(doc[v], rs) {
			t.Errorf("%s: docs/configuration.md says roles %v, --help of %v lists it", v, doc[v], rs)
		}
	}
	for v := range doc {
		if code[v] == nil {
			t.Errorf("docs/configuration.md lists %s, which no role reads", v)
		}
	}
}

// The settings the deploy files give (the Kubernetes ConfigMap, the systemd and compose
// environment file) are read without complaint by every role: each gets as far as Redis.
func TestDeploySettingsParse(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	envFile := map[string]string{}
	for line := range strings.Lines(read("../../deploy/herald.env.example")) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			envFile[k] = v
		}
	}
	configMap := map[string]string{}
	doc, _, _ := strings.Cut(read("../../deploy/kubernetes/config.yaml"), "\n---")
	for _, m := range regexp.MustCompile(`(?m)^  (HERALD_[A-Z0-9_]+): (.*)$`).FindAllStringSubmatch(doc, -1) {
		configMap[m[1]] = strings.Trim(m[2], `"`)
	}
	unreachable := "redis://" + closedPort(t) + "/0?max_retries=-1" // fails at once
	for file, given := range map[string]map[string]string{"herald.env.example": envFile, "config.yaml": configMap} {
		if len(given) < 5 {
			t.Fatalf("found only %v in %s", given, file)
		}
		for _, role := range []string{"dev", "api", "worker", "scheduler"} {
			t.Run(file+" "+role, func(t *testing.T) {
				for k, v := range given {
					t.Setenv(k, v)
				}
				t.Setenv("HERALD_REDIS_URL", unreachable)
				err := run(context.Background(), []string{role}, &bytes.Buffer{}, &bytes.Buffer{})
				if err == nil || !strings.Contains(err.Error(), "does not answer") {
					t.Errorf("herald %s with the settings of %s: %v", role, file, err)
				}
			})
		}
	}
}

// The HERALD_* variables that are not Herald's settings, and no typo of one, are left alone:
// those Kubernetes gives every pod for the herald-api Service, the compose file's build
// arguments, the tests', and herald admin's (in an environment shared with the roles).
func TestOtherHeraldVariablesLeftAlone(t *testing.T) {
	others := []string{"HERALD_API_SERVICE_HOST", "HERALD_API_SERVICE_PORT", "HERALD_API_SERVICE_PORT_HTTP", "HERALD_API_PORT",
		"HERALD_API_PORT_8080_TCP", "HERALD_API_PORT_8080_TCP_PROTO", "HERALD_API_PORT_8080_TCP_PORT", "HERALD_API_PORT_8080_TCP_ADDR",
		"HERALD_VERSION", "HERALD_GIT_HASH", "HERALD_TEST_REDIS_URL", "HERALD_TEST_ARGS", "HERALD_TEST_ROLE",
		"HERALD_FAULTS", "HERALD_FAULTS_LOGS", "HERALD_FAULTS_LOG_LEVEL", "HERALD_FAULTS_REPORT", "HERALD_BENCH_PLAIN_ADDR", "HERALD_BENCH_PLAIN_ALERT"}
	name := regexp.MustCompile(`HERALD_[A-Z0-9_]+`)
	for _, cmd := range []string{"create-key", "create-org", "create-project"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"admin", cmd, "--help"}, &out, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("herald admin %s --help: %v", cmd, err)
		}
		for _, v := range name.FindAllString(out.String(), -1) {
			if !strings.HasPrefix(v, "HERALD_REDIS_") { // the roles' own
				others = append(others, v)
			}
		}
	}
	for _, v := range others {
		t.Setenv(v, "x")
	}
	t.Setenv("HERALD_REDIS_URL", "redis://"+closedPort(t)+"/0")
	t.Setenv("HERALD_METRICS_LISTEN", "")
	t.Setenv("HERALD_LISTEN", "127.0.0.1:0")
	for _, role := range []string{"dev", "api", "worker", "scheduler"} {
		err := run(context.Background(), []string{role}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "does not answer") {
			t.Errorf("herald %s with %v set: %v", role, others, err)
		}
	}
}

// The small things a newcomer meets first: --version and version print the build; bare
// herald says how to start; a mistyped role of a key names the nearest one and lists them;
// --help says which values come from the environment.
func TestNewcomersFirstCommands(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, _, code := runHerald(t, nil, args...)
		if code != 0 || !regexp.MustCompile(`^herald \S+ \(git \S+\)\n$`).MatchString(stdout) {
			t.Errorf("herald %s: exit %d %q", args[0], code, stdout)
		}
	}
	if _, stderr, code := runHerald(t, nil); code != 2 || !strings.Contains(stderr, "To try it: herald dev") {
		t.Errorf("bare herald: exit %d\n%s", code, stderr)
	}
	_, stderr, code := runHerald(t, nil, "admin", "create-key", "--role", "GLOBAL_OWNR")
	if code == 0 || !strings.Contains(stderr, "Did you mean GLOBAL_OWNER?") || !strings.Contains(stderr, "GLOBAL_READ_ONLY") {
		t.Errorf("a mistyped global role: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runHerald(t, nil, "admin", "create-key", "--org", "5f0c6b1e2a3b4c5d6e7f8091", "--role", "ORG_WONER")
	if code == 0 || !strings.Contains(stderr, "Did you mean ORG_OWNER?") || !strings.Contains(stderr, "ORG_READ_ONLY") {
		t.Errorf("a mistyped organization role: exit %d\n%s", code, stderr)
	}
	stdout, _, _ := runHerald(t, []string{"HERALD_LOG_LEVEL=debug"}, "worker", "--help")
	if !strings.Contains(stdout, `(from the environment "debug")`) || !strings.Contains(stdout, `(default 1m)`) {
		t.Errorf("worker --help with HERALD_LOG_LEVEL set:\n%s", stdout)
	}
}
