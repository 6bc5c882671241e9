package postgres

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dbsock/dbsock/drivers"
)

// What the server says of a connection: its transport and TLS session
// (Verify), and how it authenticated the client (watchAuth).

// Verify implements drivers.Conn: inet_client_addr() is NULL for a Unix
// socket client and the client's IP over TCP; pg_stat_ssl says whether
// the session is encrypted, and with what.
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	var addr, version, cipher *string
	var ssl bool
	err := c.c.QueryRow(ctx, "SELECT inet_client_addr()::text, s.ssl, s.version, s.cipher FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()").
		Scan(&addr, &ssl, &version, &cipher)
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("inet_client_addr and pg_stat_ssl: %w", err)
	}
	v := Verified(addr, ssl, version, cipher, drivers.TLSOf(c.c.PgConn().Conn()))
	v.Negotiated.Auth = c.auth
	return v, nil
}

// Auth is how the server authenticated this connection, in pg_hba's
// words ("scram-sha-256", "md5", "trust ..."); "" when unknown.
func (c *Conn) Auth() string { return c.auth }

// Verified is the transport of a session whose inet_client_addr() is addr
// and whose pg_stat_ssl row says ssl, version and cipher; n is what the
// client negotiated (for resumption, which the server does not show).
func Verified(addr *string, ssl bool, version, cipher *string, n drivers.Negotiated) drivers.Verification {
	var v drivers.Verification
	if addr == nil {
		v = drivers.Verification{Transport: drivers.ClassifyPeer("", false), Evidence: "inet_client_addr() is NULL"}
	} else {
		v = drivers.Verification{Transport: drivers.ClassifyPeer(*addr, false), Evidence: "inet_client_addr() = " + *addr, Peer: *addr}
	}
	if !ssl {
		v.Evidence += ", pg_stat_ssl.ssl = false"
		return v
	}
	v.Transport = v.Transport.Secured()
	n.TLSVersion, n.TLSCipher = strings.Replace(deref(version), "TLSv", "TLS ", 1), deref(cipher)
	v.Evidence += fmt.Sprintf(", pg_stat_ssl.ssl = true (%s %s)", deref(version), deref(cipher))
	v.Negotiated = n
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// watchAuth has cfg's connection say how the server authenticated it (in
// the returned authSeen, once connected) and, on the tls path, when its
// TLS handshake is done (a Trace in the context).
func watchAuth(cfg *pgx.ConnConfig, ep drivers.Endpoint) *authSeen {
	a := &authSeen{}
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		f := pgproto3.NewFrontend(r, w)
		f.Trace(a, pgproto3.TracerOptions{SuppressTimestamps: true})
		return f
	}
	if ep.Transport.Info().TLS {
		cfg.AfterNetConnect = func(ctx context.Context, _ *pgconn.Config, conn net.Conn) (net.Conn, error) {
			drivers.TraceFrom(ctx).Secure()
			return conn, nil // as it is: pgx binds SCRAM to a *tls.Conn's channel
		}
	}
	return a
}

// authSeen reads the protocol trace of a connection's start-up for the
// server's first authentication request, and keeps nothing else.
type authSeen struct {
	method string
	done   bool
}

// Write implements io.Writer for pgproto3's tracer: one message per call,
// "B\tAuthenticationSASL\t23" for one the backend sent.
func (a *authSeen) Write(p []byte) (int, error) {
	if a.method != "" || a.done || len(p) < 2 || p[0] != 'B' {
		return len(p), nil
	}
	line := string(p)
	switch {
	case strings.Contains(line, "\tAuthenticationSASL\t"):
		a.method = "scram-sha-256" // PostgreSQL's SASL mechanisms are SCRAM-SHA-256 (-PLUS over TLS)
	case strings.Contains(line, "\tAuthenticationMD5Password\t"):
		a.method = "md5"
	case strings.Contains(line, "\tAuthenticationCleartextPassword\t"):
		a.method = "password (clear text)"
	case strings.Contains(line, "\tAuthenticationOk\t"):
		a.method = "trust (no authentication asked)"
	case strings.Contains(line, "\tAuthentication"):
		_, rest, _ := strings.Cut(line, "\tAuthentication")
		a.method, _, _ = strings.Cut(rest, "\t")
	}
	return len(p), nil
}
