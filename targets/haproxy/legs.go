package haproxy

import (
	"fmt"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// Each leg of a connection through HAProxy is checked where it runs: the
// client's leg in HAProxy's session of it (the frontend it came in on,
// its transport), the hop's leg in that session too (the backend and
// server it went out to, HAProxy's own address there) and in the server's
// own view of HAProxy's connection (the target's Verify or Find, read
// through the same connection). A leg that did not run as its path names
// fails the connection's check, with HAProxy's words quoted.

// found is how check found the connection's session, for the evidence.
type found struct {
	by       string
	sessions []session
}

// find picks the sessions of one connection from all: by the client's own
// TCP address local; else by HAProxy's own address on the server's leg as
// the server reported it (peer, over TCP); else, on both sockets, where
// neither end has an address of its own, every session of the path's
// frontend.
func find(all []session, path drivers.Transport, local, peer string) found {
	var f found
	switch {
	case local != "":
		f.by = "the client's address " + local
		for _, s := range all {
			if drivers.SameAddr(s.source, local) {
				f.sessions = append(f.sessions, s)
			}
		}
	case peer != "":
		f.by = "HAProxy's address " + peer + " as the server saw it"
		for _, s := range all {
			if drivers.SameAddr(s.backendAddr, peer) {
				f.sessions = append(f.sessions, s)
			}
		}
	default:
		f.by = "frontend " + string(path) + " (on two sockets no end has an address of its own)"
		for _, s := range all {
			if s.frontend == string(path) {
				f.sessions = append(f.sessions, s)
			}
		}
	}
	return f
}

// hopLeg is the session's leg to the server: its co1 transport, or else
// the server's address as HAProxy names it.
func (s session) hopLeg() drivers.Transport {
	if l := s.serverLeg(); l != "" {
		return l
	}
	if s.serverAddr == "unix" {
		return drivers.Unix
	}
	return drivers.ClassifyPeer(s.serverAddr, false)
}

// check is the verification of one connection on ep through HAProxy: its
// sessions in all (find, by local, the client's own TCP address, or by the
// server's view), and the server's view of HAProxy's connection (server,
// read through the client's, or the other process's, connection); product
// names the server.
func check(ep drivers.Endpoint, all []session, local string, server drivers.Verification, product string) (drivers.Verification, error) {
	want := ep.Hop
	if want == "" {
		want = hopOf(ep.Transport)
	}
	peer := ""
	if server.Transport.Network() == "tcp" {
		peer = server.Peer
	}
	f := find(all, ep.Transport, local, peer)
	if len(f.sessions) == 0 || (local != "" && len(f.sessions) > 1) {
		return drivers.Verification{}, fmt.Errorf("HAProxy's show sess lists %d sessions by %s, not one, so the %s path's legs are not known", len(f.sessions), f.by, ep.Transport)
	}
	for _, s := range f.sessions {
		switch {
		case s.frontend != string(ep.Transport):
			return drivers.Verification{}, fmt.Errorf("HAProxy took the connection in on frontend %s, not %s (show sess: %s)", s.frontend, ep.Transport, s)
		case s.clientLeg() != ep.Transport.Seen():
			return drivers.Verification{}, fmt.Errorf("HAProxy took the client's leg over %s, not %s as the %s path names (show sess: %s)", s.clientLeg().Label(), ep.Transport.Seen().Label(), ep.Transport, s)
		case s.hopLeg() != want:
			return drivers.Verification{}, fmt.Errorf("HAProxy reaches %s over %s, not %s as the %s path names (show sess: backend %s, server %s addr=%s, ctrl=%s)", product, s.hopLeg().Label(), want.Label(), ep.Transport, s.backend, s.server, s.serverAddr, s.serverCtrl)
		}
	}
	if server.Transport.Seen() != want {
		return drivers.Verification{}, fmt.Errorf("%s sees HAProxy's connection over %s, not %s as the %s path names (%s)", product, server.Transport.Label(), want.Label(), ep.Transport, server.Evidence)
	}
	s := f.sessions[0]
	words := "HAProxy's show sess, by " + f.by + ": " + s.String()
	if len(f.sessions) > 1 {
		words += fmt.Sprintf(" (and %d more sessions of frontend %s, alike)", len(f.sessions)-1, ep.Transport)
	}
	v := drivers.Verification{Transport: s.clientLeg(), Evidence: words + "; the hop's leg: " + product + "'s " + strings.TrimSpace(server.Evidence),
		Negotiated: server.Negotiated}
	if s.clientLeg().Network() == "tcp" {
		v.Peer = s.source
	}
	return v, nil
}
