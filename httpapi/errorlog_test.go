package httpapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/httpapi"
)

// selfSigned writes a certificate and key for 127.0.0.1 and returns their files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memfs test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// Anyone who can connect makes net/http log a failed TLS handshake: a flood
// of them leaves a bounded log.
func TestConnectionErrorsLogBounded(t *testing.T) {
	e := newEnv(t, httpapi.Options{})
	var logBuf lockedBuffer
	srv := httpapi.New(e.db, httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	certFile, keyFile := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := contextWithCancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, certFile, keyFile) }()
	defer func() {
		stop()
		<-done
	}()
	const n = 200
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) // plain text to a TLS port
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		c.Read(make([]byte, 512))
		c.Close()
	}
	// TLS itself works, through the connection that watches the framing.
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+ln.Addr().String()+"/v1/memory_stores", nil)
	req.Header.Set("x-api-key", e.key)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("a TLS request: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("a TLS request got %d", res.StatusCode)
	}
	if lines := strings.Count(logBuf.String(), "\n"); lines > 12 {
		t.Errorf("%d failed handshakes logged %d lines, want at most 10 per 5 s:\n%s", n, lines, logBuf.String())
	}
}

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }
