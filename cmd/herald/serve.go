package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// The JSON logs of the roles that serve (api, worker, scheduler) are written in batches, at
// least every logFlushInterval and whenever logBufferSize is filled: a request's log line
// then costs the API no write of its own (one a request was a tenth of its CPU under load).
const (
	logFlushInterval = 100 * time.Millisecond
	logBufferSize    = 256 << 10
)

// newLogger is a zap logger at level writing to w: JSON in batches (above), or for herald dev
// a console one, read by people as it happens, writing each line at once. stop writes what is
// buffered and ends the batching; nothing logged before it is lost.
func newLogger(level string, console bool, w io.Writer) (log *zap.Logger, stop func(), err error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, nil, fmt.Errorf("log level: %w", err)
	}
	if console {
		log = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.Lock(zapcore.AddSync(w)), lvl))
		return log, func() { _ = log.Sync() }, nil
	}
	out := &zapcore.BufferedWriteSyncer{WS: writeOnly{w}, Size: logBufferSize, FlushInterval: logFlushInterval}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), out, lvl)
	log = zap.New(flushingCore{Core: core, at: zapcore.WarnLevel})
	return log, func() { _ = out.Stop() }, nil
}

// writeOnly is the log's destination with a Sync that does nothing. zap's buffered writer
// calls Sync at every flush (each logFlushInterval, and for each warning), holding the lock
// every log line takes, and an *os.File's Sync is an fsync: the API's requests, each logging
// a line, then waited for the disk ten times a second (0.3 ms each on an idle disk here; far
// more on a busy one). What was written is safe from the process dying without it; only the
// host's crash could lose it, and a log destination worth that (journald, a container
// runtime) keeps its own.
type writeOnly struct{ io.Writer }

func (writeOnly) Sync() error { return nil }

// flushingCore writes what is buffered, in order, as soon as a line at level at or above is
// logged: a warning or an error (and what led to it) reaches the operator at once, and is not
// lost with the buffer if the process dies right after.
type flushingCore struct {
	zapcore.Core
	at zapcore.Level
}

func (c flushingCore) With(fields []zapcore.Field) zapcore.Core {
	return flushingCore{Core: c.Core.With(fields), at: c.at}
}

func (c flushingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c flushingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	err := c.Core.Write(e, fields)
	if e.Level >= c.at {
		err = errors.Join(err, c.Core.Sync())
	}
	return err
}

// warnDefaultsUndeliverable says at start, in one line per reason, when the default
// configurations every new project gets cannot be delivered as the installation is set up
// (with no mail server, their emails to the project's owners reach nobody).
func warnDefaultsUndeliverable(log *zap.Logger, d herald.DeliverySetup) {
	type reason struct{ why, setting string }
	var order []reason
	types := map[reason][]string{}
	for _, rule := range herald.DefaultAlertConfigs() {
		for _, u := range d.Undeliverable(rule, nil) {
			r := reason{u.Why, u.Setting}
			if types[r] == nil {
				order = append(order, r)
			}
			types[r] = append(types[r], rule.EventTypeName)
		}
	}
	for _, r := range order {
		log.Warn("the default alert configurations of every new project reach nobody: "+r.why+"; set "+r.setting+" to deliver them",
			zap.String("setting", r.setting), zap.Strings("eventTypeNames", slices.Compact(types[r])))
	}
}

// checkListen refuses an address to listen on that does not resolve ("8080", a trailing space)
// when the settings are read, before the role connects to anything.
func checkListen(name, addr string) error {
	if _, err := net.ResolveTCPAddr("tcp", addr); err != nil {
		return fmt.Errorf("%s: %q is not an address to listen on (%v): use host:port, or :port for every address", name, addr, err)
	}
	return nil
}

// listen listens on the address of setting name; its error names the setting (a port another
// process holds is found only here).
func listen(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ln, nil
}

// apiMaxHeaderBytes bounds a request's headers (431 beyond it). A client of the API sends a
// few hundred bytes (a Digest Authorization is the longest); at net/http's default of 1 MiB,
// 400 connections sending headers slowly, before any authentication, held 600 MB of the API's
// memory until ReadHeaderTimeout.
const apiMaxHeaderBytes = 64 << 10

// serveAPI serves the API on ln until ctx ends, then drains requests in flight.
func serveAPI(ctx context.Context, ln net.Listener, st *store.Store, engine api.Engine, log *zap.Logger, c common) error {
	delivery := deliverySetup(c.services, c.AllowPrivate)
	warnDefaultsUndeliverable(log, *delivery)
	c.Actions.describeAPI(log)
	hooks, err := c.Outbound.transport(c.AllowPrivate)
	if err != nil {
		return err
	}
	c.Outbound.reloadOnHangup(ctx, hooks, log)
	handler, err := api.New(ctx, st, engine, log, api.Config{ExternalURL: c.ExternalURL, GitHash: buildGitHash(), Version: buildVersion(),
		Delivery: delivery, Minute: c.Minute, BasicOverHTTP: c.BasicOverHTTP, ActionKeys: c.Actions.Keys,
		ChatBSigningSecret: c.Hooks.ChatBSigningSecret, ChatBURL: c.services["HERALD_CHAT_B_URL"], SMSToken: c.services["HERALD_SMS_TOKEN"],
		HookClient: hooks.Client(channels.DefaultTimeout),
		Ready:      st.Ping, Monitoring: c.monitoringSettings.handler(st),
		Metrics: processMetrics().Handler(clusterMetrics(st, log)), Observe: processMetrics().ObserveRequest})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    apiMaxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log),
	}
	done := make(chan error, 1)
	go func() {
		if c.TLSCert != "" {
			done <- srv.ServeTLS(ln, c.TLSCert, c.TLSKey)
			return
		}
		done <- srv.Serve(ln)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// splitBootstrapKey reads HERALD_BOOTSTRAP_KEY, public:private.
func splitBootstrapKey(pair string) (publicKey, privateKey string, err error) {
	pub, priv, ok := strings.Cut(pair, ":")
	if !ok || pub == "" || priv == "" {
		return "", "", errors.New("HERALD_BOOTSTRAP_KEY must be public:private")
	}
	return pub, priv, nil
}

// ensureBootstrapKey makes sure the global owner key given as "public:private" exists. It
// never logs or prints the private part.
func ensureBootstrapKey(ctx context.Context, st *store.Store, pair string) (publicKey string, err error) {
	pub, priv, err := splitBootstrapKey(pair)
	if err != nil {
		return "", err
	}
	k, found, err := st.APIKeyByPublicKey(ctx, pub)
	if err != nil {
		return "", err
	}
	want := api.KeyFromPair("bootstrap key", "", []herald.Role{{RoleName: herald.GlobalOwner}}, pub, priv, time.Now())
	if found {
		if k.HA1 != want.HA1 {
			return "", fmt.Errorf("HERALD_BOOTSTRAP_KEY: key %s exists with another private key", pub)
		}
		if k.MonitoringHA1 == "" { // made before the console had its own realm
			return pub, st.SetMonitoringHA1(ctx, k.ID, want.MonitoringHA1)
		}
		return pub, nil
	}
	return pub, st.CreateAPIKey(ctx, want, nil)
}
