package drivers

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/dbsock/dbsock/internal/setting"
)

// Negotiated is what one connection negotiated with the server: its TLS
// session (on the tls path) and how the server authenticated the client.
type Negotiated struct {
	TLSVersion string `json:"tls_version,omitempty"` // "TLS 1.3"
	TLSCipher  string `json:"tls_cipher,omitempty"`  // "TLS_AES_128_GCM_SHA256"
	// TLSResumed says the TLS session was resumed, not fully negotiated.
	TLSResumed bool `json:"tls_resumed,omitempty"`
	// Auth is the authentication method the server used, in its own
	// words (scram-sha-256, mysql_native_password, ...); "" when unknown.
	Auth string `json:"auth,omitempty"`
}

// IsZero says that nothing was learned.
func (n Negotiated) IsZero() bool { return n == Negotiated{} }

// String renders it for the report: "TLS 1.3 TLS_AES_128_GCM_SHA256,
// auth scram-sha-256".
func (n Negotiated) String() string {
	var parts []string
	if n.TLSVersion != "" {
		s := n.TLSVersion + " " + n.TLSCipher
		if n.TLSResumed {
			s += " (resumed)"
		}
		parts = append(parts, strings.TrimSpace(s))
	}
	if n.Auth != "" {
		parts = append(parts, "auth "+n.Auth)
	}
	return strings.Join(parts, ", ")
}

// TLSOf is the TLS session of a client's connection c, as the client
// negotiated it; zero when c is not a TLS connection or its handshake
// has not run.
func TLSOf(c net.Conn) Negotiated {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return Negotiated{}
	}
	st := tc.ConnectionState()
	if !st.HandshakeComplete {
		return Negotiated{}
	}
	return Negotiated{TLSVersion: tls.VersionName(st.Version), TLSCipher: tls.CipherSuiteName(st.CipherSuite), TLSResumed: st.DidResume}
}

// TLSRecorder keeps what the last TLS handshake of a configuration it
// made negotiated, for client libraries that run the handshake themselves
// and do not show their connection (as some document databases' drivers
// do).
type TLSRecorder struct {
	mu sync.Mutex
	n  Negotiated
}

// Config is cfg with a VerifyConnection that records each handshake's
// session (after the usual verification, which it leaves as it is); nil
// when cfg is nil.
func (r *TLSRecorder) Config(cfg *tls.Config) *tls.Config {
	return onHandshake(cfg, func(st tls.ConnectionState) {
		r.mu.Lock()
		r.n = Negotiated{TLSVersion: tls.VersionName(st.Version), TLSCipher: tls.CipherSuiteName(st.CipherSuite), TLSResumed: st.DidResume}
		r.mu.Unlock()
	})
}

// Negotiated is the session of the last handshake recorded (zero before
// one).
func (r *TLSRecorder) Negotiated() Negotiated {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// onHandshake is a copy of cfg that calls done at the end of each
// handshake (Go calls VerifyConnection then, after the usual checks and
// any VerifyConnection of cfg's own); nil when cfg is nil.
func onHandshake(cfg *tls.Config, done func(tls.ConnectionState)) *tls.Config {
	if cfg == nil {
		return nil
	}
	c := cfg.Clone()
	next := c.VerifyConnection
	c.VerifyConnection = func(st tls.ConnectionState) error {
		if next != nil {
			if err := next(st); err != nil {
				return err
			}
		}
		done(st)
		return nil
	}
	return c
}

// LoopbackTLS is the TLS configuration of a client of a server on the
// loopback address host that trusts the CAs in pool: the server's
// certificate must chain to one of them and name host or "localhost"
// (both are this machine: dbsock dials only loopback addresses).
func LoopbackTLS(pool *x509.CertPool, host string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and the name are verified below, where either
		// loopback name will do; Go's own check takes one name only.
		InsecureSkipVerify: true,
		VerifyConnection: func(st tls.ConnectionState) error {
			if len(st.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range st.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			leaf := st.PeerCertificates[0]
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter}); err != nil {
				return &tls.CertificateVerificationError{UnverifiedCertificates: st.PeerCertificates, Err: err}
			}
			if leaf.VerifyHostname(host) != nil && leaf.VerifyHostname("localhost") != nil {
				return &tls.CertificateVerificationError{UnverifiedCertificates: st.PeerCertificates, Err: leaf.VerifyHostname(host)}
			}
			return nil
		},
	}
}

// InsecureTLS is the TLS configuration of a client that does not verify
// the server's certificate at all (a user's stated choice): the
// connection is encrypted, its peer unproven.
func InsecureTLS() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}
}

// ReadCAs reads the PEM certificates of file into a pool, and returns
// them as read; it fails when the file holds none.
func ReadCAs(file string) (*x509.CertPool, []byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, nil, fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", file)
	}
	return pool, b, nil
}

// TLSFrom is the TLS configuration of a client of the tls path at addr
// (a loopback host:port) that trusts the CA certificates roots (PEM), or,
// with no roots, verifies nothing (InsecureTLS): the settings an
// Endpoint's TLS and TLSRoots describe, rebuilt in another process.
func TLSFrom(roots []byte, addr string) (*tls.Config, error) {
	if len(roots) == 0 {
		return InsecureTLS(), nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(roots) {
		return nil, fmt.Errorf("the tls path %s's CA certificates hold no PEM certificate", addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("the tls path's address %q is not host:port: %w", addr, err)
	}
	return LoopbackTLS(pool, host), nil
}

// tlsHint says what a TLS failure on the tls path ep means and what to do
// (none when err is not one): a setting it names, the paths, is worded by
// whoever shows the error (setting.Paths).
func tlsHint(err error, ep Endpoint) setting.Message {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var record tls.RecordHeaderError
	msg := err.Error()
	trust := ep.TLSTrust
	if trust == "" {
		trust = "the CAs it was given"
	}
	switch {
	case errors.As(err, &unknown):
		return setting.Msg("the server's certificate at %s is not signed by a CA the client trusts (%s): give the CA that signed it", ep.Address, trust)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return setting.Msg("the server's certificate at %s has expired or is not valid yet: renew it, or check this machine's clock", ep.Address)
	case errors.As(err, &invalid):
		return setting.Msg("the server's certificate at %s is not valid for a server (%s)", ep.Address, invalid.Error())
	case errors.As(err, &host):
		return setting.Msg("the server's certificate at %s names neither its address nor localhost", ep.Address)
	case errors.As(err, &record), strings.Contains(msg, "first record does not look like a TLS handshake"):
		return setting.Msg("the server at %s answered in plain text: nothing serves TLS at that address (is it the server's plain port? give its TLS port)", ep.Address)
	case strings.Contains(msg, "does not support TLS"), strings.Contains(msg, "refused TLS"), strings.Contains(msg, "SSL is not enabled"):
		return setting.Msg("the server at %s does not offer TLS: turn TLS on in the server, or leave tls out of %s", ep.Address, setting.Paths)
	}
	return setting.Message{}
}
