package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// runDev runs every part of Herald in one process, on an embedded store unless
// HERALD_REDIS_URL is set, and prints a working key and a curl line.
func runDev(ctx context.Context, args []string, out, errOut io.Writer) error {
	c, err := parseServing("dev", "everything in one process, for a first look and for demos", "127.0.0.1:8080", args, out)
	if err != nil {
		return err
	}
	log, stopLog, err := newLogger(c.LogLevel, true, errOut)
	if err != nil {
		return err
	}
	defer stopLog()
	useRedisLog(log)
	stopProfile, err := startCPUProfile(c.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()

	storeLine := "Data: the Redis of HERALD_REDIS_URL."
	if !c.configured() {
		emb, err := store.StartEmbedded()
		if err != nil {
			return fmt.Errorf("embedded store: %w", err)
		}
		defer emb.Close()
		c.RedisURL = emb.URL()
		storeLine = "Data: in memory, gone when herald dev stops (an embedded store at " + emb.Addr() +
			", behind a random password no log shows)."
		log.Warn("HERALD_REDIS_URL is not set: using the embedded in-memory store. All data lives in memory and is gone when herald dev stops.")
	} else {
		log.Info("using the Redis of the settings")
	}
	st, closeStore, err := openStore(ctx, c.redisSettings)
	if err != nil {
		return err
	}
	defer closeStore()

	ln, err := listen("HERALD_LISTEN", c.Listen)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	if c.TLSCert != "" {
		base = "https://" + ln.Addr().String()
	}
	if c.ExternalURL != "" {
		base = c.ExternalURL
	}
	c.Actions.useDevKeys(ownAddress(ln, c.TLSCert != ""))
	links := "Action links in notices start with " + c.Actions.Base
	if c.ExternalURL == "" {
		links += " (its own address; HERALD_EXTERNAL_URL to change it)"
	}
	if c.Actions.Generated {
		links += ",\nsigned with a key made for this run: links of earlier runs no longer work (HERALD_ACTION_KEYS to keep one)"
	}

	var publicKey, privateKey, keyLine string
	switch earlier, found, err := devKey(ctx, st); {
	case err != nil:
		return err
	case c.BootstrapKey != "":
		if publicKey, err = ensureBootstrapKey(ctx, st, c.BootstrapKey); err != nil {
			return err
		}
		privateKey = "<your private key>"
		keyLine = "The global owner API key of HERALD_BOOTSTRAP_KEY:  public " + publicKey
	case found:
		// A Redis of the settings keeps the key an earlier start made: making another at every
		// start would pile up owner keys nobody holds.
		publicKey, privateKey = earlier.PublicKey, "<its private key>"
		keyLine = "The global owner API key made by an earlier herald dev on this Redis:  public " + publicKey +
			"\n(its private key was shown once, then; set HERALD_BOOTSTRAP_KEY=public:private to choose a key)"
	default:
		k, priv := api.NewAPIKey(devKeyDesc, "", []herald.Role{{RoleName: herald.GlobalOwner}}, time.Now())
		if err := st.CreateAPIKey(ctx, k, nil); err != nil {
			return err
		}
		publicKey, privateKey = k.PublicKey, priv
		keyLine = "A global owner API key (shown once):  public " + publicKey + "  private " + priv
	}
	// The key goes to standard output, for the person who started this, never into the log.
	fmt.Fprintf(out, `
Herald is running at %[1]s%[2]s
%[5]s
%[6]s.
%[7]s
API reference: %[1]s%[8]s   Queues: %[1]s%[9]s   Metrics: %[1]s/metrics

Try it:
  curl --digest -u '%[3]s:%[4]s' '%[1]s%[2]s/globalAlerts?pretty=true'
  curl --digest -u '%[3]s:%[4]s' -H 'Content-Type: application/json' \
       -d '{"name":"My org"}' '%[1]s%[2]s/orgs?pretty=true'
The README's whole session, from the repository:
  HERALD_KEY='%[3]s:%[4]s' HERALD_LISTEN=%[10]s sh examples/quickstart.sh

`, base, api.BasePath, publicKey, privateKey, keyLine, links, storeLine, api.DocsPath, api.MonitoringPath, ln.Addr().String())

	d := dispatch.NewDispatcher(st, herald.SystemClock{})
	defer d.Close()
	w, err := startWorker(ctx, st, d, c.common, log)
	if err != nil {
		return err
	}
	defer w.Shutdown()
	sch, err := startScheduler(st, d, c.periodic, log)
	if err != nil {
		return err
	}
	defer sch.Shutdown()
	log.Info("API listening", zap.String("address", ln.Addr().String()), zap.Duration("minute", c.Minute))
	return serveAPI(ctx, ln, st, d, log, c.common)
}

// devKeyDesc is the description of the global owner key herald dev makes, by which a later
// start on the same Redis finds it.
const devKeyDesc = "herald dev"

// devKey finds the global owner key an earlier herald dev made on st, if any.
func devKey(ctx context.Context, st *store.Store) (herald.APIKey, bool, error) {
	const page = 100
	for offset := 0; ; offset += page {
		keys, _, err := st.GlobalAPIKeys(ctx, store.Page{Offset: offset, Limit: page})
		if err != nil {
			return herald.APIKey{}, false, err
		}
		for _, k := range keys {
			if k.Desc == devKeyDesc {
				return k, true, nil
			}
		}
		if len(keys) < page {
			return herald.APIKey{}, false, nil
		}
	}
}

// ownAddress is the address herald dev serves at, as its links name it: on a wildcard
// listen address (:8080), the loopback one.
func ownAddress(ln net.Listener, tls bool) string {
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return scheme + ln.Addr().String()
	}
	host := addr.IP
	if host.IsUnspecified() {
		host = net.IPv4(127, 0, 0, 1)
	}
	return scheme + net.JoinHostPort(host.String(), strconv.Itoa(addr.Port))
}
