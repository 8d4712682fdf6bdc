package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/heraldhq/herald/dispatch"
)

// settings binds flags to HERALD_* environment variables: a flag's default is the variable's
// value when set, so flags win over the environment and the environment over built-in
// defaults.
type settings struct{ fs *flag.FlagSet }

func newSettings(role, summary string, errOut io.Writer) settings {
	fs := flag.NewFlagSet("herald "+role, flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprintf(errOut, "herald %s: %s\n\nSettings (flag, or the environment variable in brackets):\n", role, summary)
		fs.PrintDefaults()
	}
	return settings{fs}
}

func (s settings) string(p *string, name, env, def, help string) {
	if v, ok := os.LookupEnv(env); ok {
		def = v
	}
	s.fs.StringVar(p, name, def, help+" ["+env+"]")
}

func (s settings) duration(p *time.Duration, name, env string, def time.Duration, help string) {
	if v, ok := os.LookupEnv(env); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	s.fs.DurationVar(p, name, def, help+" ["+env+"]")
}

func (s settings) int(p *int, name, env string, def int, help string) {
	if v, ok := os.LookupEnv(env); ok {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		}
	}
	s.fs.IntVar(p, name, def, help+" ["+env+"]")
}

func (s settings) bool(p *bool, name, env string, def bool, help string) {
	if v, ok := os.LookupEnv(env); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	s.fs.BoolVar(p, name, def, help+" ["+env+"]")
}

// common are the settings every role that serves or stores has.
type common struct {
	// TLSCert and TLSKey, both set, make the API serve HTTPS itself (the document's base URL is
	// https); unset, it serves plain HTTP for a terminating proxy in front.
	TLSCert, TLSKey string
	redisSettings
	Listen       string
	ExternalURL  string
	Minute       time.Duration
	LogLevel     string
	AllowPrivate bool
	Concurrency  int
	// QueuePriorities is HERALD_QUEUE_PRIORITIES, parsed by queuePriorities when the worker
	// starts.
	QueuePriorities string
	Lease           time.Duration
	services
	monitoringSettings // bound by the roles that serve the API
}

func (c *common) bind(s settings, listenDefault string) {
	c.redisSettings.bind(s)
	s.string(&c.Listen, "listen", "HERALD_LISTEN", listenDefault, "address the API listens on")
	s.string(&c.ExternalURL, "external-url", "HERALD_EXTERNAL_URL", "", "scheme and host that links in responses use (default: the request's own)")
	s.duration(&c.Minute, "minute", "HERALD_MINUTE", time.Minute, "length of one minute of delayMin and intervalMin (demos and tests shorten it)")
	s.string(&c.LogLevel, "log-level", "HERALD_LOG_LEVEL", "info", "debug, info, warn or error")
}

// bindWorker binds the settings of the roles that run the engine.
func (c *common) bindWorker(s settings, allowPrivateDefault bool) {
	s.bool(&c.AllowPrivate, "allow-private-targets", "HERALD_ALLOW_PRIVATE_TARGETS", allowPrivateDefault, "let webhooks and chat reach loopback, link-local and private addresses")
	s.int(&c.Concurrency, "concurrency", "HERALD_WORKER_CONCURRENCY", 20, "tasks a worker runs at once")
	s.string(&c.QueuePriorities, "queue-priorities", "HERALD_QUEUE_PRIORITIES", "",
		"queue=priority pairs changing the default priorities, e.g. engine=12,deliveries-paging=6; 0 leaves a queue to other workers")
	c.services.bind(s)
	s.duration(&c.Lease, "lease", "HERALD_ENGINE_LEASE", dispatch.DefaultLease, "how long a worker's claim on a project's work lasts unrenewed (a working session renews it every quarter): after a worker dies, its work resumes after this")
}

// validate checks the settings after parsing, since the environment bypasses flag parsing.
func (c *common) validate() error {
	if c.Minute <= 0 {
		return fmt.Errorf("HERALD_MINUTE must be positive, not %s", c.Minute)
	}
	return nil
}

// serving is what the roles that serve the API are configured with.
type serving struct {
	common
	periodic
	BootstrapKey string
}

// parseServing reads the settings of a role that serves the API (and, for herald dev, runs
// the engine too).
func parseServing(role, summary, listenDefault string, args []string, errOut io.Writer) (serving, error) {
	var c serving
	s := newSettings(role, summary, errOut)
	c.common.bind(s, listenDefault)
	s.string(&c.TLSCert, "tls-cert", "HERALD_TLS_CERT", "", "certificate (PEM, chain first) to serve HTTPS with; unset: plain HTTP behind a proxy")
	s.string(&c.TLSKey, "tls-key", "HERALD_TLS_KEY", "", "private key (PEM) of the certificate")
	c.monitoringSettings.bind(s)
	if role == "dev" {
		c.bindWorker(s, true)
		c.periodic.bind(s)
	}
	s.string(&c.BootstrapKey, "bootstrap-key", "HERALD_BOOTSTRAP_KEY", "", "global owner key to make sure exists, as public:private (herald dev: default a new key, printed once)")
	if err := s.fs.Parse(args); err != nil {
		return c, err
	}
	if err := c.common.validate(); err != nil {
		return c, err
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return c, errors.New("HERALD_TLS_CERT and HERALD_TLS_KEY go together")
	}
	if role == "dev" {
		return c, c.periodic.validate()
	}
	return c, nil
}
