package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// common are the settings of the roles that serve or run the engine. Each role binds only the
// groups it uses (bindBase, bindAPI, bindWorker), so its --help lists only those.
type common struct {
	// TLSCert and TLSKey, both set, make the API serve HTTPS itself (the document's base URL is
	// https); unset, it serves plain HTTP for a terminating proxy in front.
	TLSCert, TLSKey string
	// BasicOverHTTP is HERALD_PROMETHEUS_BASIC_OVER_HTTP: the Prometheus front door takes HTTP
	// Basic over plain HTTP (herald dev, or behind a proxy that terminates TLS).
	BasicOverHTTP bool
	redisSettings
	// CPUProfile is HERALD_CPU_PROFILE: a file this process writes its CPU profile to, from
	// start until it stops (diagnosis, and bench's -profile of the roles it runs).
	CPUProfile   string
	Listen       string
	ExternalURL  string
	Minute       time.Duration
	LogLevel     string
	AllowPrivate bool
	Concurrency  int
	// QueuePriorities is HERALD_QUEUE_PRIORITIES, parsed by queuePriorities when the worker
	// starts (and checked when the settings are read).
	QueuePriorities string
	Lease           time.Duration
	// AdminEmail is HERALD_ADMIN_EMAIL; Administrators its addresses, read by validate.
	AdminEmail     string
	Administrators []string
	services
	// Outbound is how workers and the API reach services: proxy and TLS files.
	Outbound           outbound
	monitoringSettings // bound by the roles that serve the API
	// Actions are the settings of notices' action links (the API's, dev's and workers').
	Actions actionLinks
	// Hooks are the settings of the service callbacks (the roles that serve the API).
	Hooks hookSettings
	// Paces are the paces of each kind's targets (HERALD_PACE_<KIND>), by kind name.
	Paces map[string]store.Pace
	// DigestAfter and DigestWindow: how many messages one target people read takes one by one
	// in how many minutes (HERALD_DIGEST_AFTER, HERALD_DIGEST_WINDOW); more go out as digests.
	DigestAfter, DigestWindow int
}

// bindBase binds what every long-running role has: where Redis is, and the log level.
func (c *common) bindBase(s settings) {
	c.redisSettings.bind(s)
	s.string(&c.CPUProfile, "cpu-profile", "HERALD_CPU_PROFILE", "", "file to write this process's CPU profile to, from start until it stops (for diagnosis)")
	s.string(&c.LogLevel, "log-level", "HERALD_LOG_LEVEL", "info", "debug, info, warn or error")
	s.check(func() error {
		// zap also reads dpanic, panic and fatal, which would keep every error out of the log.
		if l, err := zapcore.ParseLevel(c.LogLevel); err != nil || l > zapcore.ErrorLevel {
			return fmt.Errorf("HERALD_LOG_LEVEL: %q is not a log level: use debug, info, warn or error, e.g. HERALD_LOG_LEVEL=info", c.LogLevel)
		}
		return nil
	})
}

// bindAPI binds the settings of the roles that serve the API.
func (c *common) bindAPI(s settings, listenDefault string, basicOverHTTPDefault bool) {
	s.string(&c.Listen, "listen", "HERALD_LISTEN", listenDefault, "address the API listens on")
	s.string(&c.ExternalURL, "external-url", "HERALD_EXTERNAL_URL", "", "scheme and host that links in responses use (default: the request's own)"+actionKeysHelp+hooksHelp)
	s.string(&c.TLSCert, "tls-cert", "HERALD_TLS_CERT", "", "certificate (PEM, chain first) to serve HTTPS with; unset: plain HTTP behind a proxy")
	s.string(&c.TLSKey, "tls-key", "HERALD_TLS_KEY", "", "private key (PEM) of the certificate")
	s.bool(&c.BasicOverHTTP, "prometheus-basic-over-http", "HERALD_PROMETHEUS_BASIC_OVER_HTTP", basicOverHTTPDefault,
		"let the Prometheus front door take HTTP Basic (an API key) over plain HTTP, e.g. behind a proxy that terminates TLS")
	c.monitoringSettings.bind(s)
	s.check(func() error { return checkListen("HERALD_LISTEN", c.Listen) })
	s.check(func() error { return checkExternalURL(c.ExternalURL) })
	s.check(func() error {
		if (c.TLSCert == "") != (c.TLSKey == "") {
			return errors.New("HERALD_TLS_CERT and HERALD_TLS_KEY go together")
		}
		// Read now, not when the API starts serving: after it has said it listens, and with a
		// message that names no setting ("open /etc/herald/tls.crt: no such file").
		if c.TLSCert != "" {
			if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
				return fmt.Errorf("HERALD_TLS_CERT and HERALD_TLS_KEY: %w", err)
			}
		}
		return nil
	})
}

// checkExternalURL refuses a HERALD_EXTERNAL_URL links cannot be built on: every link in a
// response is it followed by the API's path, so one without a scheme ("herald.example.com")
// or with a trailing space would make every link a broken one.
func checkExternalURL(raw string) error {
	return checkBaseURL("HERALD_EXTERNAL_URL", raw, "the scheme and host clients reach the API at", "https://herald.example.com")
}

// checkBaseURL refuses, for setting name, a base URL that paths are appended to which is not
// http(s)://host[:port][/path] ("" is unset).
func checkBaseURL(name, raw, what, example string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.ContainsFunc(raw, unicode.IsSpace) {
		return fmt.Errorf("%s: %q is not %s: use http(s)://host[:port], e.g. %s=%s", name, raw, what, name, example)
	}
	return nil
}

// bindDeliveryWarnings binds, for the api role, the workers' settings that decide what the
// installation can deliver: the API reads them only to warn of a configuration written with
// notifications the workers cannot deliver (docs/decisions.md#warnings-where-a-notice-can-reach-nobody).
// Give it the workers' values.
func (c *common) bindDeliveryWarnings(s settings) {
	const why = " (the api role reads it only to warn of configurations the workers cannot deliver: give it the workers' value)"
	c.services.bindOne(s, channels.Setting{Flag: "smtp-addr", Env: herald.SettingMail}, "the workers' mail server, unset: no mail"+why)
	c.services.bindOne(s, channels.Setting{Flag: "sms-account", Env: herald.SettingSMS}, "the workers' SMS gateway account, unset: no SMS"+why)
	s.bool(&c.AllowPrivate, "allow-private-targets", herald.SettingPrivateTargets, false, "whether the workers let webhooks and chat reach private addresses"+why+"; the api role also updates clicked CHAT_B messages under it")
}

// bindMinute binds HERALD_MINUTE: the engine's roles count delayMin and intervalMin in it,
// and every role that serves the API heartbeats' periods and grace times.
func (c *common) bindMinute(s settings) {
	s.duration(&c.Minute, "minute", "HERALD_MINUTE", time.Minute, "length of one minute of delayMin, intervalMin and heartbeats' periodMin and graceMin (demos and tests shorten it)")
	s.check(func() error {
		switch {
		case c.Minute <= 0:
			return fmt.Errorf("HERALD_MINUTE must be positive, not %s", c.Minute)
		case c.Minute < minMinute:
			return fmt.Errorf("HERALD_MINUTE must be %s or more, not %s: an open alert repeats its notifications every intervalMin of them", minMinute, c.Minute)
		}
		return nil
	})
}

// bindWorker binds the settings of the roles that run the engine.
func (c *common) bindWorker(s settings, allowPrivateDefault bool) {
	c.bindMinute(s)
	s.bool(&c.AllowPrivate, "allow-private-targets", "HERALD_ALLOW_PRIVATE_TARGETS", allowPrivateDefault, "let webhooks and chat reach loopback, link-local and private addresses")
	s.int(&c.Concurrency, "concurrency", "HERALD_WORKER_CONCURRENCY", 20, "tasks a worker runs at once")
	s.string(&c.QueuePriorities, "queue-priorities", "HERALD_QUEUE_PRIORITIES", "",
		"queue=priority pairs changing the default priorities, e.g. engine=12,deliveries-paging=6; 0 leaves a queue to other workers")
	s.string(&c.AdminEmail, "admin-email", "HERALD_ADMIN_EMAIL", "",
		"the installation's administrators, comma-separated addresses, whom ADMIN notifications email (unset: the users holding GLOBAL_OWNER)")
	c.services.bind(s)
	c.Outbound.bind(s)
	c.bindPaces(s)
	c.bindDigests(s)
	s.duration(&c.Lease, "lease", "HERALD_ENGINE_LEASE", dispatch.DefaultLease, "how long a worker's claim on a project's work lasts unrenewed (a working session renews it every quarter): after a worker dies, its work resumes after this")
	s.check(func() error {
		switch {
		case c.Concurrency < 1:
			return fmt.Errorf("HERALD_WORKER_CONCURRENCY must be 1 or more, not %d", c.Concurrency)
		case c.Concurrency > maxConcurrency:
			return fmt.Errorf("HERALD_WORKER_CONCURRENCY must be %d or less, not %d", maxConcurrency, c.Concurrency)
		case c.Lease <= 0:
			return fmt.Errorf("HERALD_ENGINE_LEASE must be positive, not %s", c.Lease)
		case c.Lease < minLease:
			return fmt.Errorf("HERALD_ENGINE_LEASE must be %s or more, not %s: a working session renews it every quarter, with a Redis round trip", minLease, c.Lease)
		}
		admins, err := herald.ParseAdminEmails(c.AdminEmail)
		if err != nil {
			return fmt.Errorf("HERALD_ADMIN_EMAIL: %w", err)
		}
		c.Administrators = admins
		_, err = queuePriorities(c.QueuePriorities)
		return err
	})
}

// maxConcurrency is the highest HERALD_WORKER_CONCURRENCY: asynq stops a worker by taking each
// of its concurrency's slots in turn, so that at 1000000000000 a worker given SIGTERM spun at
// full CPU and never stopped. The default is 20.
const maxConcurrency = 10000

// minMinute is the shortest HERALD_MINUTE: at 1ns one open alert's webhook was called some 400
// times a second (and paging or text messages would be sent as often); the tests and demos
// shorten a minute to 200ms at the least.
const minMinute = 100 * time.Millisecond

// minLease is the shortest HERALD_ENGINE_LEASE. A session renews its lease every quarter of it,
// but at most every 10 ms, in a Redis round trip that takes milliseconds, and Redis keeps a
// lease in whole milliseconds: a shorter one lapses while its session works (under 1 ms, the
// renewal's PEXPIRE 0 deletes it), and another worker takes the project at the same time.
const minLease = time.Second

// serving is what the roles that serve the API are configured with.
type serving struct {
	common
	periodic
	BootstrapKey string
}

// parseServing reads the settings of a role that serves the API (and, for herald dev, runs
// the engine and the scheduler too).
func parseServing(role, summary, listenDefault string, args []string, out io.Writer) (serving, error) {
	s := newSettings(role, summary, out)
	c := bindServing(s, role, listenDefault)
	err := s.parse(args)
	return *c, err
}

// bindServing binds the settings of a role that serves the API.
func bindServing(s settings, role, listenDefault string) *serving {
	c := &serving{}
	c.common.bindBase(s)
	c.common.bindAPI(s, listenDefault, role == "dev")
	if role == "dev" {
		c.bindWorker(s, true)
		c.periodic.bind(s)
	} else {
		c.bindMinute(s)
		c.bindDeliveryWarnings(s)
		c.Outbound.bind(s)
	}
	c.Actions.bind(s, &c.ExternalURL, false)
	c.bindHooks(s, role)
	s.secret(&c.BootstrapKey, "bootstrap-key", "HERALD_BOOTSTRAP_KEY", "global owner key to make sure exists, as public:private (herald dev: default a new key, printed once)")
	s.check(func() error {
		if c.BootstrapKey == "" {
			return nil
		}
		if err := checkSecret("HERALD_BOOTSTRAP_KEY", c.BootstrapKey); err != nil {
			return err
		}
		_, _, err := splitBootstrapKey(c.BootstrapKey)
		return err
	})
	return c
}
