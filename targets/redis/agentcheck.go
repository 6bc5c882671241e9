package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/dbsock/dbsock/drivers"
)

// OpenFinder implements drivers.ConnFinder: another process's connection
// carries its token as its name (CLIENT SETNAME), and CLIENT LIST shows
// each connection's name with its addr, laddr and flags.
func (d *Driver) OpenFinder(ctx context.Context, admin drivers.Endpoint) (drivers.Finder, error) {
	client, conn, err := dial(ctx, d.Options(admin), admin)
	if err != nil {
		return nil, err
	}
	return &finder{client: client, conn: conn}, nil
}

type finder struct {
	client *goredis.Client
	conn   *goredis.Conn
}

func (*finder) Expect(context.Context, string) error { return nil }

// Find reads CLIENT LIST for the one connection named claim.Token.
func (f *finder) Find(ctx context.Context, claim drivers.Claim) (drivers.Verification, error) {
	list, err := f.conn.ClientList(ctx).Result()
	if err != nil {
		return drivers.Verification{}, fmt.Errorf("CLIENT LIST: %w", err)
	}
	line, err := namedClient(list, claim.Token)
	if err != nil {
		return drivers.Verification{}, err
	}
	v, err := ParseClientInfo(line)
	if err != nil {
		return v, err
	}
	if claim.LocalAddr != "" && v.Transport.Network() != "unix" && !drivers.SameAddr(claim.LocalAddr, v.Peer) {
		return v, fmt.Errorf("the agent says its connection is from %s, the server sees it from %s", claim.LocalAddr, v.Peer)
	}
	if v.Transport.Secured() == v.Transport { // no TLS path over it
		return v, nil
	}
	tlsPort, err := f.conn.ConfigGet(ctx, "tls-port").Result()
	if err != nil {
		return v, fmt.Errorf("CONFIG GET tls-port, which tells a TLS client from a plain one: %w", err)
	}
	return OnTLSPort(v, tlsPort["tls-port"], drivers.Negotiated{}), nil
}

// namedClient is the one line of a CLIENT LIST whose name is token.
func namedClient(list, token string) (string, error) {
	var found []string
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if f == "name="+token {
				found = append(found, strings.TrimSpace(line))
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("CLIENT LIST has no connection named %s (the agent must send CLIENT SETNAME with its token)", token)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("CLIENT LIST has %d connections named %s; one is the protocol", len(found), token)
}

func (f *finder) Close() error { return errors.Join(f.conn.Close(), f.client.Close()) }

// OpenNamed implements drivers.NamedOpener: Open, then CLIENT SETNAME
// token, the name CLIENT LIST shows it by (Find).
func (d *Driver) OpenNamed(ctx context.Context, ep drivers.Endpoint, token string) (drivers.Conn, error) {
	c, err := d.Open(ctx, ep)
	if err != nil {
		return nil, err
	}
	rc := c.(*Conn)
	if err := rc.conn.ClientSetName(ctx, token).Err(); err != nil {
		rc.Close()
		return nil, fmt.Errorf("CLIENT SETNAME %s over %s: %w", token, ep, err)
	}
	return c, nil
}

// AgentOp implements drivers.AgentOp: an agent GETs each row's key.
func (*Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Family: "redis", Key: func(id int64) any { return drivers.KeyName(id) }}
}

// CountOps implements drivers.OpCounter: the calls of GET that INFO
// commandstats counts, over every connection.
func (f *finder) CountOps(ctx context.Context) (int64, error) {
	info, err := f.conn.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO commandstats: %w", err)
	}
	return getCalls(info)
}

// Counter implements drivers.OpCounter.
func (*finder) Counter() string { return "INFO commandstats cmdstat_get calls" }

// getCalls is the calls of GET in an INFO commandstats answer (0 when no
// GET was served yet).
func getCalls(info string) (int64, error) {
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_get:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: cmdstat_get calls %q: %w", v, err)
				}
				return n, nil
			}
		}
		return 0, fmt.Errorf("INFO commandstats: cmdstat_get without calls: %q", line)
	}
	return 0, nil
}

// CheckUse implements drivers.UseChecker with CLIENT LIST: the connection
// named claim.Token is still the one verified (same route and addr), its
// last command was GET, and it has been idle (whole seconds, as Redis
// counts them) no longer than within.
func (f *finder) CheckUse(ctx context.Context, claim drivers.Claim, v drivers.Verification, within time.Duration) error {
	list, err := f.conn.ClientList(ctx).Result()
	if err != nil {
		return fmt.Errorf("CLIENT LIST: %w", err)
	}
	line, err := namedClient(list, claim.Token)
	if err != nil {
		return err
	}
	now, err := ParseClientInfo(line)
	if err != nil {
		return err
	}
	// The same addr (a TCP client's own port, the socket's path) on the
	// same kind of listener: TLS is told from TCP by the port it came in
	// on, which Find read, and which a connection cannot change.
	if (now.Transport.Network() == "unix") != (v.Transport.Network() == "unix") || now.Peer != v.Peer {
		return fmt.Errorf("CLIENT LIST shows the connection named %s on %s from %s; it was verified on %s from %s", claim.Token, now.Transport, now.Peer, v.Transport, v.Peer)
	}
	fields := clientFields(line)
	if fields["cmd"] != "get" {
		return fmt.Errorf("CLIENT LIST shows the connection named %s with last command %q, not get: it did not serve the block's lookups", claim.Token, fields["cmd"])
	}
	idle, err := strconv.ParseInt(fields["idle"], 10, 64)
	if err != nil {
		return fmt.Errorf("CLIENT LIST: the connection named %s has idle %q: %w", claim.Token, fields["idle"], err)
	}
	if limit := int64(math.Ceil(within.Seconds())); idle > limit {
		return fmt.Errorf("CLIENT LIST shows the connection named %s idle for %d s, longer than the block took (%s): it did not serve the block's lookups", claim.Token, idle, within.Round(time.Millisecond))
	}
	return nil
}

// clientFields are a CLIENT LIST line's key=value fields.
func clientFields(line string) map[string]string {
	fields := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	return fields
}
