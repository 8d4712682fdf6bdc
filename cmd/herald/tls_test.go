package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/heraldhq/herald/api/digest"
)

// With a certificate and key the API serves HTTPS itself: a client that trusts only that
// certificate gets the document's answers over TLS, with digest authentication.
func TestAPIServesHTTPS(t *testing.T) {
	certFile, keyFile, pool := selfSignedFiles(t)
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

// selfSignedFiles writes a certificate for 127.0.0.1 and its key to files, and returns a pool
// that trusts it.
func selfSignedFiles(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "herald test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
