package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"go.uber.org/zap"
	"golang.org/x/net/http/httpproxy"

	"github.com/heraldhq/herald/channels"
)

// outbound is how Herald reaches services: an egress proxy, and the TLS files of the
// connections. The workers deliver through it, the API updates clicked chat messages through
// it. The files are read at start and again on SIGHUP.
type outbound struct {
	Proxy                     string // HERALD_OUTBOUND_PROXY; unset: the environment's
	CAFile, CertFile, KeyFile string
}

// proxyForm is what HERALD_OUTBOUND_PROXY looks like.
const proxyForm = "http://[user:password@]host:port or https://[user:password@]host:port"

func (o *outbound) bind(s settings) {
	s.url(&o.Proxy, "outbound-proxy", "HERALD_OUTBOUND_PROXY",
		"egress proxy for every delivery, loopback targets included: "+proxyForm+" (unset: HTTPS_PROXY, HTTP_PROXY and NO_PROXY)")
	s.string(&o.CAFile, "outbound-ca-file", "HERALD_OUTBOUND_CA_FILE", "", "PEM bundle of CAs that deliveries trust besides the system's (read again on SIGHUP)")
	s.string(&o.CertFile, "outbound-cert-file", "HERALD_OUTBOUND_CERT_FILE", "", "client certificate (PEM, chain first) presented to targets that ask for one (read again on SIGHUP)")
	s.string(&o.KeyFile, "outbound-key-file", "HERALD_OUTBOUND_KEY_FILE", "", "private key (PEM) of the client certificate")
	s.check(func() error {
		if _, err := o.proxyURL(); err != nil {
			return err
		}
		if err := checkEnvironmentProxy(); err != nil {
			return err
		}
		_, err := o.loadTLS()
		return err
	})
}

// proxyURL is HERALD_OUTBOUND_PROXY read, nil when unset. Its errors never show the password.
func (o outbound) proxyURL() (*url.URL, error) {
	if o.Proxy == "" {
		return nil, nil
	}
	const name = "HERALD_OUTBOUND_PROXY"
	bad := func(why string) error {
		return fmt.Errorf("%s: %s is not a proxy URL (%s): use %s, e.g. %s=http://proxy.example.com:3128", name, redactURL(o.Proxy), why, proxyForm, name)
	}
	u, read := userInfoRead(o.Proxy)
	switch {
	case u == nil:
		return nil, bad("it does not parse")
	case !read:
		return nil, bad("its user name or password holds a character a URL must have percent-encoded: / ? # or %")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("the scheme must be http or https")
	case u.Hostname() == "":
		return nil, bad("it names no host")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return nil, bad("a proxy's URL has no path, query or fragment")
	case strings.ContainsFunc(o.Proxy, unicode.IsSpace):
		return nil, bad("it holds white space")
	}
	if p, ok := u.User.Password(); ok {
		if err := checkSecret("the password of "+name, p); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// checkEnvironmentProxy refuses at start a proxy of the environment (HTTPS_PROXY, HTTP_PROXY)
// that would fail every delivery: one Go cannot read, or reads as something else than a
// proxy's address (Go takes "proxy:port" for http://proxy:port, and so reads almost anything;
// "http://proxy.example.com:port" becomes host "http:" and a path). Its errors never show the
// value: it may hold a password.
func checkEnvironmentProxy() error {
	proxyFor := httpproxy.FromEnvironment().ProxyFunc()
	for _, v := range [][3]string{{"https", "HTTPS_PROXY", "https_proxy"}, {"http", "HTTP_PROXY", "http_proxy"}} {
		u, err := proxyFor(&url.URL{Scheme: v[0], Host: "herald.invalid"})
		if err == nil && (u == nil || usableProxy(u)) {
			continue
		}
		return fmt.Errorf("%s (or %s) is not a proxy URL: use %s, or socks5://host:port", v[1], v[2], proxyForm)
	}
	return nil
}

// usableProxy says whether u is the address of a proxy net/http can use.
func usableProxy(u *url.URL) bool {
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return false
	}
	if _, err := strconv.ParseUint(u.Port(), 10, 16); err != nil && u.Port() != "" {
		return false
	}
	return u.Hostname() != "" && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == ""
}

// loadTLS reads the TLS files: the CA bundle added to the system's roots, and the client
// certificate. An error names the setting.
func (o outbound) loadTLS() (channels.TLS, error) {
	var out channels.TLS
	if o.CAFile != "" {
		roots, err := readCABundle(o.CAFile)
		if err != nil {
			return out, fmt.Errorf("HERALD_OUTBOUND_CA_FILE: %w", err)
		}
		out.Roots = roots
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return out, errors.New("HERALD_OUTBOUND_CERT_FILE and HERALD_OUTBOUND_KEY_FILE go together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return out, fmt.Errorf("HERALD_OUTBOUND_CERT_FILE and HERALD_OUTBOUND_KEY_FILE: %w", err)
		}
		out.Certificate = &cert
	}
	return out, nil
}

// readCABundle is the system's roots and every certificate of the PEM bundle at path. Each
// PEM block must be a certificate that parses, and there must be one: a file given for this
// that holds none is a mistake, found now rather than at the first delivery.
func readCABundle(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	n := 0
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%s: its block %d is a %s, not a CERTIFICATE", path, n+1, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: its certificate %d does not parse: %w", path, n+1, err)
		}
		roots.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return roots, nil
}

// transport is the one HTTP transport of a worker's senders.
func (o outbound) transport(allowPrivate bool) (*channels.Transport, error) {
	proxy, err := o.proxyURL()
	if err != nil {
		return nil, err
	}
	files, err := o.loadTLS()
	if err != nil {
		return nil, err
	}
	return channels.NewTransport(channels.TransportConfig{AllowPrivate: allowPrivate, Proxy: proxy, TLS: files}), nil
}

// describe says in the log where deliveries go out, for the person who set it up: the proxy
// with its password masked.
func (o outbound) describe(log *zap.Logger) {
	if o.Proxy != "" {
		log.Info("deliveries go through the outbound proxy", zap.String("proxy", redactURL(o.Proxy)))
		return
	}
	env := httpproxy.FromEnvironment()
	if env.HTTPSProxy != "" || env.HTTPProxy != "" {
		log.Info("deliveries go through the environment's proxy", zap.String("https", redactURL(env.HTTPSProxy)),
			zap.String("http", redactURL(env.HTTPProxy)), zap.String("noProxy", env.NoProxy))
	}
}

// reloadOnHangup reads the TLS files again at every SIGHUP until ctx ends, for the connections
// t opens next. Files that no longer read are logged, and those read before stay in use.
func (o outbound) reloadOnHangup(ctx context.Context, t *channels.Transport, log *zap.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // now: a SIGHUP from here on reloads, rather than ends the process
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			files, err := o.loadTLS()
			if err != nil {
				log.Error("SIGHUP: the outbound TLS files do not read; those read before stay in use", zap.Error(err))
				continue
			}
			t.SetTLS(files)
			log.Info("SIGHUP: outbound TLS files read again", zap.String("caFile", o.CAFile), zap.String("certFile", o.CertFile))
		}
	}()
}
