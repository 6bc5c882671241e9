package supply

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunCAServesLoopback checks the run's certificates end to end: a TLS
// server with the files WriteTLSFiles wrote is trusted by the run's client
// configuration on 127.0.0.1, and the key is private.
func TestRunCAServesLoopback(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteTLSFiles(dir, "/inside", -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if files.Key != "/inside/tls-key.pem" || files.Cert != "/inside/tls-cert.pem" || files.CA != "/inside/tls-ca.pem" {
		t.Errorf("files as the server sees them: %+v", files)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tls-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, fi.Mode())
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls-cert.pem"), filepath.Join(dir, "tls-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	ca, err := TheRunCA()
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", l.Addr().String(), ca.Client())
	if err != nil {
		t.Fatalf("the run's client does not trust the run's server: %v", err)
	}
	if v := c.ConnectionState().Version; v != tls.VersionTLS13 {
		t.Errorf("negotiated %s, want TLS 1.3", tls.VersionName(v))
	}
	c.Close()
}

// TestRunCACertificate checks the names and the life of the server
// certificate, and that another run's CA does not verify it.
func TestRunCACertificate(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ca, err := NewRunCA(now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(ca.serverCert)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost"} {
		if err := cert.VerifyHostname(name); err != nil {
			t.Errorf("certificate does not name %s: %v", name, err)
		}
	}
	if err := cert.VerifyHostname("example.com"); err == nil {
		t.Error("certificate names example.com")
	}
	if got := cert.NotAfter.Sub(now); got != certLife {
		t.Errorf("valid for %v after now, want %v", got, certLife)
	}
	other, err := NewRunCA(now)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: other.pool, CurrentTime: now})
	if err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("another run's CA verified it: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.pool, CurrentTime: now}); err != nil {
		t.Errorf("its own CA does not verify it: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.pool, CurrentTime: now.Add(certLife + time.Minute)}); err == nil {
		t.Error("verified after it expired")
	}
}
