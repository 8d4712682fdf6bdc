package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
)

// settings binds flags to HERALD_* environment variables: a flag's default is the variable's
// value when set, so flags win over the environment and the environment over built-in
// defaults. Every value is parsed strictly, by the one parser of its type: a value that does
// not parse stops the role, naming the variable (or flag), the form it takes and an example.
// A role binds only the settings it uses, so its --help lists only those.
type settings struct {
	fs *flag.FlagSet
	*bound
}

// bound is what a role's settings collect while they are bound, for parse.
type bound struct {
	role, summary string
	out           io.Writer  // where --help goes
	list          []*setting // in the order bound: the order --help lists them
	environment   []string   // the variables read from the environment only (environmentOnly)
	envErrs       []error    // environment values that did not parse
	checks        []func() error
}

func newSettings(role, summary string, out io.Writer) settings {
	fs := flag.NewFlagSet("herald "+role, flag.ContinueOnError)
	// The flag package's own report of a bad flag (and its usage after it) is not printed: parse
	// returns the error, which herald prints once, with where to look.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return settings{fs: fs, bound: &bound{role: role, summary: summary, out: out}}
}

// check adds a rule over the parsed values (a range, settings that go together), run by
// parse.
func (s settings) check(rule func() error) { s.checks = append(s.checks, rule) }

// parse reads args over the environment and checks the result. --help prints the role's
// settings to out and returns flag.ErrHelp (herald exits 0); anything that does not parse is
// an error naming the setting.
func (s settings) parse(args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--h" || a == "-help" || a == "--help" {
			s.usage(s.out)
			return flag.ErrHelp
		}
	}
	if err := s.fs.Parse(args); err != nil {
		return fmt.Errorf("%w ('herald %s --help' lists the settings)", err, s.role)
	}
	if n := s.fs.NArg(); n > 0 {
		// The argument is not shown: it may be a secret meant as a flag's value
		// (--bootstrap-key= public:private). What comes before it says where it is.
		where := "first"
		if i := len(args) - n - 1; i >= 0 {
			flagName, _, _ := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
			where = "after --" + flagName
		}
		return fmt.Errorf("herald %s takes no arguments, only settings: one comes %s (not shown: it may be a secret); a flag's value goes after an =, e.g. --monitoring=false (see --help)", s.role, where)
	}
	if len(s.envErrs) > 0 {
		return errors.Join(s.envErrs...)
	}
	if err := s.misspelt(); err != nil {
		return err
	}
	for _, rule := range s.checks {
		if err := rule(); err != nil {
			return err
		}
	}
	return nil
}

func (s settings) usage(w io.Writer) {
	fmt.Fprintf(w, "herald %s: %s\n\nSettings (flag, or the environment variable in brackets):\n", s.role, s.summary)
	for _, v := range s.list {
		arg := " " + v.kind.arg
		if v.kind.isBool {
			arg = ""
		}
		fmt.Fprintf(w, "  --%s%s  [%s]\n    \t%s", v.name, arg, v.env, v.help)
		if shown := v.show(); shown != "" {
			from := "default"
			if _, set := os.LookupEnv(v.env); set {
				from = "from the environment"
			}
			fmt.Fprintf(w, " (%s %s)", from, shown)
		}
		fmt.Fprintln(w)
	}
}

// environmentOnly reads a secret from the environment only, so that neither --help nor the
// process list shows it.
func (s settings) environmentOnly(p *string, env string) {
	*p = os.Getenv(env)
	s.environment = append(s.environment, env)
}

// misspelt refuses a HERALD_* variable of the environment that no role reads, one or two
// letters from one that a role does (HERALD_LISTN): a typo that would otherwise leave the
// setting at its default without a word. Other HERALD_* names are left alone: Kubernetes gives
// every pod of a namespace HERALD_API_SERVICE_HOST, HERALD_API_PORT, ... for the herald-api
// Service, and builds and tests have their own.
func (s settings) misspelt() error {
	known := everySetting()
	for _, v := range s.list {
		known[v.env] = true
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HERALD_") || known[name] {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(known)) {
			if herald.EditDistance(name, k) <= 2 {
				return fmt.Errorf("%s is not a setting of Herald: did you mean %s? ('herald %s --help' lists the settings)", name, k, s.role)
			}
		}
	}
	return nil
}

// everySetting is the variable of every setting of the roles that run (dev binds all of them
// but the metrics address of the roles without the API), by name.
func everySetting() map[string]bool {
	s := newSettings("", "", io.Discard)
	bindServing(s, "dev", "")
	var metricsListen string
	bindMetricsListen(s, &metricsListen, "")
	names := map[string]bool{}
	for _, v := range s.list {
		names[v.env] = true
	}
	for _, env := range s.environment {
		names[env] = true
	}
	return names
}

// kind is a type of setting: what its values look like, for help and error messages.
type kind struct {
	arg     string // the placeholder in --help: --minute DURATION
	form    string // what a value must look like, for the message when it does not
	example string // a value, when the setting's default is none
	isBool  bool   // --flag alone means true
}

var (
	boolKind     = kind{arg: "BOOL", form: "true or false (1/0, yes/no and on/off also do)", example: "true", isBool: true}
	durationKind = kind{arg: "DURATION", form: "a number with a unit: ms, s, m, h, or d for days (90s, 5m, 1h30m, 30d)", example: "30s"}
	intKind      = kind{arg: "N", form: "a whole number", example: "10"}
	stringKind   = kind{arg: "TEXT"}
)

// setting is one flag and its environment variable; it is the flag's flag.Value.
type setting struct {
	name, env, help string
	kind            kind
	example         string             // a valid value of this setting, for error messages
	set             func(string) error // parses a value into its target
	show            func() string      // the value --help shows: "" for none, never a secret
}

func (v *setting) Set(text string) error {
	if err := v.set(text); err != nil {
		return fmt.Errorf("%w, e.g. --%s=%s", err, v.name, v.example)
	}
	return nil
}
func (v *setting) String() string {
	if v.show == nil { // the flag package's zero value
		return ""
	}
	return v.show()
}
func (v *setting) IsBoolFlag() bool { return v.kind.isBool }

// bindValue binds one setting of type T: def, then the environment's value, then the flag's,
// each read by parse (the one parser of T); format shows a value in --help and examples.
func bindValue[T any](s settings, p *T, name, env string, def T, help string, k kind, parse func(string) (T, error), format func(T) string) {
	v := &setting{name: name, env: env, help: help, kind: k, example: k.example, show: func() string { return format(*p) }}
	if ex := format(def); ex != "" && ex != "0" && ex != "0s" && !k.isBool {
		v.example = ex
	}
	v.set = func(text string) error {
		x, err := parse(text)
		if err != nil {
			return err
		}
		*p = x
		return nil
	}
	*p = def
	if text, ok := os.LookupEnv(env); ok {
		if err := v.set(text); err != nil {
			s.envErrs = append(s.envErrs, fmt.Errorf("%s: %w, e.g. %s=%s", env, err, env, v.example))
		}
	}
	s.fs.Var(v, name, help)
	s.list = append(s.list, v)
}

func (s settings) string(p *string, name, env, def, help string) {
	bindValue(s, p, name, env, def, help, stringKind, parseString, quote)
}

// secret binds a setting whose value is never shown: --help says only whether it is set.
// Secrets are best set in the environment, where the process list does not show them.
func (s settings) secret(p *string, name, env, help string) {
	bindValue(s, p, name, env, "", help, stringKind, parseString, func(v string) string {
		if v == "" {
			return ""
		}
		return "set, not shown"
	})
}

// url binds a URL that may carry a password: --help shows it with the password masked.
func (s settings) url(p *string, name, env, help string) {
	bindValue(s, p, name, env, "", help, kind{arg: "URL"}, parseString, func(v string) string {
		if v == "" {
			return ""
		}
		return quote(redactURL(v))
	})
}

func (s settings) duration(p *time.Duration, name, env string, def time.Duration, help string) {
	bindValue(s, p, name, env, def, help, durationKind, parseDuration, formatDuration)
}

func (s settings) int(p *int, name, env string, def int, help string) {
	bindValue(s, p, name, env, def, help, intKind, parseInt, strconv.Itoa)
}

func (s settings) bool(p *bool, name, env string, def bool, help string) {
	bindValue(s, p, name, env, def, help, boolKind, parseBool, strconv.FormatBool)
}

// The parsers, one per type. Their errors say what the value should have been; the caller
// adds which setting it was and an example.

func parseString(s string) (string, error) { return s, nil }

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean: use %s", s, boolKind.form)
}

// parseDuration reads Go's durations (1m30s) and whole days (30d, 1d12h), and refuses a bare
// number: "1" could mean a minute as well as a second.
func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration: use %s", s, durationKind.form)
	if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && s != "0" {
		return 0, fmt.Errorf("%q has no unit: a duration is %s", s, durationKind.form)
	}
	t := strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i >= 0 {
		n, err := strconv.ParseUint(t[:i], 10, 16)
		if err != nil {
			return 0, bad
		}
		days, t = time.Duration(n)*24*time.Hour, t[i+1:]
		if t == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil || (days > 0 && d < 0) {
		return 0, bad
	}
	return days + d, nil
}

// formatDuration writes whole days as days (90d), the rest as Go does without its trailing
// zero units (1m, not 1m0s).
func formatDuration(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String()
	s, _ = strings.CutSuffix(s, "m0s")
	if s != d.String() {
		s += "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not %s", s, intKind.form)
	}
	return n, nil
}

func quote(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

// redactURL masks the password of a URL. One whose user information url.Parse does not read
// where a person wrote it (userInfoRead) is shown with all before its last "@" masked; one
// without "@" that does not parse is not shown at all.
//
// The values of its query are masked too: other clients take ?password= (go-redis refuses it,
// and the URL was shown whole).
func redactURL(raw string) string {
	if u, ok := userInfoRead(raw); ok {
		if u.RawQuery != "" {
			q := u.Query()
			for k := range q {
				q[k] = []string{"xxxxx"}
			}
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return "(value not shown: it may hold a password)"
	}
	rest := raw[at+1:]
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i] + "?xxxxx"
	}
	if scheme, _, ok := strings.Cut(raw[:at], "://"); ok {
		return scheme + "://xxxxx@" + rest
	}
	return "xxxxx@" + rest
}

// userInfoRead parses a URL and reports whether url.Parse reads its user name and password
// where a person writing it put them: before its last "@" (a URL needs none). A password
// holding "/", "?" or "#" not percent-encoded (a generated one may) ends the URL's host early:
// url.Parse then sees no password, and takes the password for the host, path or fragment,
// which Redacted shows whole.
func userInfoRead(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, false
	}
	if !strings.Contains(raw, "@") {
		return u, true
	}
	return u, u.User != nil && strings.Count(u.Redacted(), "@") == 1
}

// checkTrimmed refuses a setting's text that begins or ends with white space, for the settings
// sent on as they are (a login, an account, a master's name): a trailing space would make every
// use of it fail, far from the setting, where nobody reads why.
func checkTrimmed(name, value string) error {
	if strings.TrimSpace(value) != value {
		return fmt.Errorf("%s: %q begins or ends with white space: remove it", name, value)
	}
	return nil
}

// placeholder is what the example deploy files put where a secret goes.
const placeholder = "CHANGE-ME"

// checkSecret refuses a secret still holding the deploy files' placeholder, or beginning or
// ending with white space (the line end of the file it was read from, as a Kubernetes Secret
// made --from-file keeps it): either would otherwise be sent as the password, and fail where
// nobody reads why. The message never holds the secret.
func checkSecret(name, secret string) error {
	if strings.Contains(secret, placeholder) {
		return fmt.Errorf("%s still holds the %s placeholder of the example deploy files: set the real value, or remove the setting if it is not used", name, placeholder)
	}
	if strings.TrimSpace(secret) != secret {
		return fmt.Errorf("%s begins or ends with white space (a line end of the file it came from?): remove it", name)
	}
	return nil
}
