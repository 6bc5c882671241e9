package redis

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// What the server says of a connection (CLIENT INFO, and its tls-port),
// and how the client authenticated.

// Verify implements drivers.Conn using CLIENT INFO: Redis flags a Unix
// socket client with "U" and prints its address as the socket path. A TCP
// client is on TLS when the server's own address for it (laddr) is at the
// server's tls-port: Redis serves TLS on a listener of its own.
func (c *Conn) Verify(ctx context.Context) (drivers.Verification, error) {
	line, err := c.conn.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("CLIENT INFO: %w", err)
	}
	v, err := ParseClientInfo(line)
	v.Negotiated.Auth = c.auth
	if err != nil || v.Transport.Network() == "unix" {
		return v, err
	}
	n := c.socks.Negotiated()
	tlsPort, err := c.conn.ConfigGet(ctx, "tls-port").Result()
	if err != nil && n.IsZero() {
		// A server that hides CONFIG (a managed one) still verifies a
		// plain client by its address; a TLS client it cannot.
		v.Evidence += " (CONFIG GET tls-port refused: " + err.Error() + ")"
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("CONFIG GET tls-port, which tells a TLS client from a plain one: %w; dbsock needs it to verify the tls path", err)
	}
	return OnTLSPort(v, tlsPort["tls-port"], n), nil
}

// authOf says how a client of ep authenticates: Redis's only method is a
// password (of the default user, or an ACL user's), sent as it is in
// HELLO or AUTH, in clear text unless the connection is TLS.
func authOf(ep drivers.Endpoint, protocol int) string {
	cmd := "AUTH"
	if protocol == 3 {
		cmd = "HELLO 3 AUTH"
	}
	switch {
	case ep.Password == "":
		return "none"
	case ep.User != "":
		return "password of ACL user (" + cmd + ")"
	}
	return "password (" + cmd + ")"
}

// OnTLSPort is v (a TCP client's CLIENT INFO) on the tls path when its
// laddr is at tlsPort (the server's tls-port; "0" or "" for none), with
// what the client negotiated.
func OnTLSPort(v drivers.Verification, tlsPort string, n drivers.Negotiated) drivers.Verification {
	_, laddr, _ := strings.Cut(v.Evidence, " laddr=")
	laddr, _, _ = strings.Cut(laddr, " ")
	i := strings.LastIndexByte(laddr, ':')
	if tlsPort != "" && tlsPort != "0" && i >= 0 && laddr[i+1:] == tlsPort {
		v.Transport = v.Transport.Secured()
		v.Evidence += " (the server's tls-port " + tlsPort + ")"
		v.Negotiated.TLSVersion, v.Negotiated.TLSCipher, v.Negotiated.TLSResumed = n.TLSVersion, n.TLSCipher, n.TLSResumed
	} else {
		v.Evidence += " (tls-port " + cmp.Or(tlsPort, "0") + ": a plain listener)"
	}
	return v
}

// ParseClientInfo reads the transport from a CLIENT INFO line.
func ParseClientInfo(line string) (drivers.Verification, error) {
	fields := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	addr, ok := fields["addr"]
	if !ok {
		return drivers.Verification{}, fmt.Errorf("CLIENT INFO has no addr field: %q", line)
	}
	evidence := "client addr=" + addr + " laddr=" + fields["laddr"] + " flags=" + fields["flags"]
	t := drivers.ClassifyPeer(addr, false)
	if strings.Contains(fields["flags"], "U") || strings.HasPrefix(addr, "/") {
		t = drivers.ClassifyPeer("", false)
	}
	return drivers.Verification{Transport: t, Evidence: evidence, Peer: addr}, nil
}
