package supply

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// The tls path: every server dbsock starts gets a certificate and key for
// 127.0.0.1, ::1 and localhost, signed by a CA that dbsock makes for the
// run (in memory, never written anywhere but the servers' private
// directories), and its clients trust that CA alone.

// certLife is how long a run's certificates are valid: a run is bounded
// well within it (--max-duration), and a leaked key is worth nothing soon.
const certLife = 48 * time.Hour

// RunCA is the certificate authority of one dbsock run.
type RunCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	// server is the one server certificate of the run (every server
	// listens on the same loopback names), made once.
	serverCert, serverKey []byte
	pool                  *x509.CertPool
}

var runCA = sync.OnceValues(func() (*RunCA, error) { return NewRunCA(time.Now()) })

// TheRunCA is this run's CA, made on first use.
func TheRunCA() (*RunCA, error) { return runCA() }

// NewRunCA makes a CA and one server certificate for the loopback names,
// valid from a minute before now for certLife.
func NewRunCA(now time.Time) (*RunCA, error) {
	return NewCA(now.Add(-time.Minute), now.Add(certLife))
}

// NewCA makes a CA and one server certificate for the loopback names,
// both valid from notBefore to notAfter (a test's expired certificate).
func NewCA(notBefore, notAfter time.Time) (*RunCA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the run's TLS CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "dbsock run CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make the run's TLS CA: %w", err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &RunCA{cert: cert, key: caKey, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pool: x509.NewCertPool()}
	ca.pool.AddCert(cert)
	ca.serverCert, ca.serverKey, err = ca.Issue("dbsock server", notBefore, notAfter)
	if err != nil {
		return nil, err
	}
	return ca, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// Issue signs a server certificate for 127.0.0.1, ::1 and localhost, valid
// from notBefore to notAfter, and returns it and its key in PEM.
func (ca *RunCA) Issue(name string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make a TLS server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign a TLS server certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode a TLS server key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// CertPEM is the CA's certificate in PEM.
func (ca *RunCA) CertPEM() []byte { return ca.certPEM }

// Client is the TLS configuration of a client of the run's servers: it
// trusts the run's CA alone and checks that the server's certificate
// names 127.0.0.1; TLS 1.2 at least, 1.3 where the server has it (Go's
// client offers 1.3 first).
func (ca *RunCA) Client() *tls.Config {
	return &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// TrustRunCA is what a client of the run's servers trusts, in words.
const TrustRunCA = "the run's own CA (made by dbsock for this run, the server's certificate for 127.0.0.1, ::1 and localhost)"

// TLSFiles are a server's certificate, key and the CA certificate as
// files in its private directory.
type TLSFiles struct {
	Cert, Key, CA string
}

// WriteTLSFiles writes the run's server certificate, its key and the CA
// certificate into dir (the key 0600), owned by uid/gid when uid >= 0 (a
// server that runs as another user must read its key, and some servers
// refuse a key others may read). Names are as the server sees dir:
// inside is dir's path for the server (a container's mount point), or ""
// for the same.
func WriteTLSFiles(dir, inside string, uid, gid int) (TLSFiles, error) {
	ca, err := TheRunCA()
	if err != nil {
		return TLSFiles{}, err
	}
	return ca.WriteFiles(dir, inside, uid, gid)
}

// WriteFiles is WriteTLSFiles with ca's certificates.
func (ca *RunCA) WriteFiles(dir, inside string, uid, gid int) (TLSFiles, error) {
	files, err := ca.writeFiles(dir, inside, 0o600)
	if err != nil || uid < 0 {
		return files, err
	}
	for _, name := range []string{"tls-cert.pem", "tls-key.pem", "tls-ca.pem"} {
		if err := os.Chown(filepath.Join(dir, name), uid, gid); err != nil {
			return TLSFiles{}, fmt.Errorf("give the server's TLS files in %s to uid %d: %w", dir, uid, err)
		}
	}
	return files, nil
}

// writeFiles writes ca's server certificate, its key (with keyMode) and
// the CA certificate into dir, named as the server sees dir (inside, or
// dir itself when "").
func (ca *RunCA) writeFiles(dir, inside string, keyMode os.FileMode) (TLSFiles, error) {
	if inside == "" {
		inside = dir
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{{"tls-cert.pem", ca.serverCert, 0o644}, {"tls-key.pem", ca.serverKey, keyMode}, {"tls-ca.pem", ca.certPEM, 0o644}}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := WriteServerFile(p, f.data, f.mode); err != nil {
			return TLSFiles{}, fmt.Errorf("write the server's TLS files in %s: %w", dir, err)
		}
		if err := os.Chmod(p, f.mode); err != nil { // whatever the umask
			return TLSFiles{}, fmt.Errorf("write the server's TLS files in %s: %w", dir, err)
		}
	}
	return TLSFiles{Cert: filepath.Join(inside, "tls-cert.pem"), Key: filepath.Join(inside, "tls-key.pem"), CA: filepath.Join(inside, "tls-ca.pem")}, nil
}

// TLSEndpoint is the tls path to a server at addr (127.0.0.1:PORT) with
// the account of ep, trusting the run's CA.
func TLSEndpoint(ep drivers.Endpoint, addr string) (drivers.Endpoint, error) {
	ca, err := TheRunCA()
	if err != nil {
		return drivers.Endpoint{}, err
	}
	ep.Transport, ep.Address, ep.TLS, ep.TLSRoots, ep.TLSTrust = TLSPath(), addr, ca.Client(), ca.CertPEM(), TrustRunCA
	return ep, nil
}

// containerTLS writes the run's TLS files into a container's socket dir,
// as the container sees them in /sock, and finds a second free port for a
// TLS listener. The server in the container runs as a user of the image
// (uid 999, 11211) that dbsock, not root itself as a member of the docker
// group, cannot give files to: the key is readable by every user (0644),
// and private on this host all the same, as the socket dir is reached
// only through the run's directory (0700, this user's); in the container
// nothing but the server runs. A server that refuses such a key has it
// copied to a private file first (PrivateKeyCmd).
func containerTLS(dir string) (TLSFiles, int, error) {
	ca, err := TheRunCA()
	if err != nil {
		return TLSFiles{}, 0, err
	}
	files, err := ca.writeFiles(dir, "/sock", 0o644)
	if err != nil {
		return TLSFiles{}, 0, err
	}
	port, err := freePort6()
	if err != nil {
		return TLSFiles{}, 0, err
	}
	return files, port, nil
}

// PrivateKeyCmd is cmd, run by the image's entrypoint (docker-entrypoint.sh,
// as in the official images) after the run's TLS key in the container
// (tf.Key, readable by all there) is copied to key, owned by user with mode
// 0600, as root in the container: for a server that refuses a key others
// may read. The image's entrypoint must run a command other
// than its server as given, and as root, as the official images do.
func PrivateKeyCmd(tf TLSFiles, user, key string, cmd []string) []string {
	const script = `install -m 0600 -o "$1" -g "$1" "$2" "$3" && shift 3 && exec docker-entrypoint.sh "$@"`
	return append([]string{"sh", "-c", script, "sh", user, tf.Key, key}, cmd...)
}

// offerTLS gives srv the tls path at tlsPort on 127.0.0.1 when its spec
// turned TLS on (tlsPort > 0), with the account of its TCP endpoint;
// otherwise it says why not (noTLS, why, or that its recipe does not).
func offerTLS(srv *Server, noTLS error, tlsPort int, why string) {
	tls := TLSPath()
	if tlsPort == 0 {
		noTLS = cmp.Or(noTLS, errors.New("dbsock does not start its "+srv.Target+" container with TLS"))
		if srv.NetworkMode != "host" && why != "" {
			noTLS = errors.New(why)
		}
		srv.SetAbsent(noTLS, tls)
		return
	}
	ep, err := TLSEndpoint(srv.TCP(), "127.0.0.1:"+strconv.Itoa(tlsPort))
	if err != nil {
		srv.SetAbsent(err, tls)
		return
	}
	srv.Set(ep)
}

// TLSPath is the table's TLS path over tcp (tls).
func TLSPath() drivers.Transport {
	t, _ := drivers.NetworkPath("tcp")
	return t.Secured()
}
