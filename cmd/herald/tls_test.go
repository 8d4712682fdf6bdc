package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/channels/channelstest"
)

// With a certificate and key the API serves HTTPS itself: a client that trusts only the
// certificate's CA gets the document's answers over TLS, with digest authentication.
func TestAPIServesHTTPS(t *testing.T) {
	ca := channelstest.NewCA(t, "herald test")
	cert := ca.Server(t)
	certFile, keyFile, pool := channelstest.WriteFile(t, "cert.pem", cert.CertPEM), channelstest.WriteFile(t, "key.pem", cert.KeyPEM), ca.Pool()
	t.Setenv("HERALD_REDIS_URL", "")
	ctx, cancel := context.WithCancel(context.Background())
	var out, logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile}, &out, &logs)
	}()
	defer func() { cancel(); <-done }()

	line := regexp.MustCompile(`curl --digest -u '([a-z]+):([0-9a-f-]+)' '(https://127\.0\.0\.1:\d+/api/public/v1\.0/globalAlerts)\?pretty=true'`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
		if m = line.FindStringSubmatch(out.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("no https curl line:\n%s\n%s", out.String(), logs.String())
		}
	}
	tlsTransport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &digest.Transport{Username: m[1], Password: m[2], Base: tlsTransport}}
	resp, err := client.Get(m[3])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("over TLS: %d (TLS %v)", resp.StatusCode, resp.TLS != nil)
	}
}
