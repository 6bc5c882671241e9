package memcached

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder. memcached gives a connection
// no name: stats conns lists each connection's fd, addr and listener. The
// Finder records the connections before the other process opens its own
// (Expect), and finds the one that appeared since; the other process may
// say its own TCP address (LocalAddr), which must then be that one's. On
// the socket every client's addr is the listener's, so what ties the
// connection to the agent is that it is the one new connection on this
// server: a verification weaker than a name's, on a server nothing else
// uses. admin must reach the server instance the agent's path reaches
// (dbsock's memcached serves each path from its own instance).
func (*Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	nc, err := dialAuth(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connect to memcached over %s to verify another process's connections: %w", admin, err)
	}
	return &finder{nc: nc}, nil
}

type finder struct {
	nc     net.Conn
	before map[string]map[string]string
	// found is the fd and fields of the connection Find found.
	found   string
	foundKV map[string]string
}

// Anonymous implements drivers.Anonymous: memcached names no connection.
func (*finder) Anonymous() {}

// Expect records the connections the server has now.
func (f *finder) Expect(ctx context.Context, _ string) error {
	conns, err := f.conns(ctx)
	f.before = conns
	return err
}

// Find is the one connection that appeared since Expect.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	if f.before == nil {
		return drivers.Verification{}, fmt.Errorf("memcached: Find without Expect")
	}
	now, err := f.conns(ctx)
	if err != nil {
		return drivers.Verification{}, err
	}
	var fresh []string
	for fd, kv := range now {
		if old, ok := f.before[fd]; ok && old["addr"] == kv["addr"] {
			continue
		}
		if peer := strings.TrimPrefix(strings.TrimPrefix(kv["addr"], "tcp6:"), "tcp:"); claim.LocalAddr == "" || drivers.SameAddr(peer, claim.LocalAddr) {
			fresh = append(fresh, fd)
		}
	}
	if len(fresh) != 1 {
		return drivers.Verification{}, fmt.Errorf("stats conns lists %d new connections since the agent was asked to open one (its own address: %q); one is the protocol", len(fresh), claim.LocalAddr)
	}
	kv := now[fresh[0]]
	f.found, f.foundKV = fresh[0], kv
	evidence := "stats conns: a new connection, fd " + fresh[0] + " on listener " + kv["listen_addr"]
	if kv["addr"] != "" {
		evidence += ", addr " + kv["addr"]
	}
	if strings.HasPrefix(kv["listen_addr"], "unix:") {
		return drivers.Verification{Transport: drivers.ClassifyPeer("", false), Evidence: evidence}, nil
	}
	peer := strings.TrimPrefix(strings.TrimPrefix(kv["addr"], "tcp6:"), "tcp:")
	return drivers.Verification{Transport: drivers.ClassifyPeer(peer, false), Evidence: evidence, Peer: peer}, nil
}

// conns is stats conns by fd: each connection's fields.
func (f *finder) conns(ctx context.Context) (map[string]map[string]string, error) {
	f.deadline(ctx)
	out, err := command(f.nc, "stats conns")
	if err != nil {
		return nil, fmt.Errorf("stats conns: %w", err)
	}
	conns := map[string]map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[0] != "STAT" {
			continue
		}
		if fd, key, ok := strings.Cut(fields[1], ":"); ok {
			if conns[fd] == nil {
				conns[fd] = map[string]string{}
			}
			conns[fd][key] = fields[2]
		}
	}
	return conns, nil
}

func (f *finder) Close() error { return f.nc.Close() }

// AgentOp implements drivers.AgentOp: an agent gets each row's key.
func (*Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "memcached", Key: func(id int64) any { return drivers.KeyName(id) }}
}

// OpenNamed implements drivers.NamedOpener as Open: memcached shows no
// name, and its Finder finds the one connection new since Expect.
func (d *Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, _ string) (drivers.Conn, error) {
	return d.Open(ctx, ep)
}

// CountOps implements drivers.OpCounter: stats' cmd_get, over every
// connection of the instance (dbsock's memcached serves each path from
// its own).
func (f *finder) CountOps(ctx context.Context) (int64, error) { return f.stat(ctx, "cmd_get") }

// Counter implements drivers.OpCounter.
func (*finder) Counter() string { return "stats cmd_get" }

// CheckUse implements drivers.UseChecker with stats conns: the connection
// Find found is still there, from the same address on the same listener,
// and its last command was no longer than within ago (whole seconds, as
// memcached counts them).
func (f *finder) CheckUse(ctx context.Context, _ drivers.Claim, _ drivers.Verification, within time.Duration) error {
	if f.found == "" {
		return fmt.Errorf("memcached: CheckUse without Find")
	}
	now, err := f.conns(ctx)
	if err != nil {
		return err
	}
	kv, ok := now[f.found]
	if !ok || kv["addr"] != f.foundKV["addr"] || kv["listen_addr"] != f.foundKV["listen_addr"] {
		return fmt.Errorf("stats conns no longer lists the verified connection (fd %s, addr %s on %s)", f.found, f.foundKV["addr"], f.foundKV["listen_addr"])
	}
	secs, ok := kv["secs_since_last_cmd"]
	if !ok {
		return nil // an older memcached says nothing of it
	}
	idle, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return fmt.Errorf("stats conns: fd %s secs_since_last_cmd %q: %w", f.found, secs, err)
	}
	if limit := int64(math.Ceil(within.Seconds())); idle > limit {
		return fmt.Errorf("stats conns shows the verified connection (fd %s) idle for %d s, longer than the block took (%s): it did not serve the block's lookups", f.found, idle, within.Round(time.Millisecond))
	}
	return nil
}

// deadline bounds the next command by ctx's deadline, or 10 s.
func (f *finder) deadline(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(10 * time.Second)
	}
	_ = f.nc.SetDeadline(dl)
}
