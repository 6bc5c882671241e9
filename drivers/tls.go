package drivers

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

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

// ReadCAs reads the PEM certificates of file into a pool; it fails when
// the file holds none.
func ReadCAs(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", file)
	}
	return pool, nil
}

// tlsHint says what a TLS failure on the tls path ep means and what to do
// ("" when err is not one).
func tlsHint(err error, ep Endpoint) string {
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
		return fmt.Sprintf("the server's certificate at %s is not signed by a CA the client trusts (%s): give the CA that signed it", ep.Address, trust)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("the server's certificate at %s has expired or is not valid yet: renew it, or check this machine's clock", ep.Address)
	case errors.As(err, &invalid):
		return fmt.Sprintf("the server's certificate at %s is not valid for a server (%s)", ep.Address, invalid.Error())
	case errors.As(err, &host):
		return fmt.Sprintf("the server's certificate at %s names neither its address nor localhost", ep.Address)
	case errors.As(err, &record), strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Sprintf("the server at %s answered in plain text: nothing serves TLS at that address (is it the server's plain port? give its TLS port)", ep.Address)
	case strings.Contains(msg, "does not support TLS"), strings.Contains(msg, "refused TLS"), strings.Contains(msg, "SSL is not enabled"):
		return fmt.Sprintf("the server at %s does not offer TLS: turn TLS on in the server, or leave tls out of --paths", ep.Address)
	}
	return ""
}
