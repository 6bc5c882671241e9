package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	if claim.LocalAddr != "" && v.Transport != drivers.Unix && !drivers.SameAddr(claim.LocalAddr, v.Peer) {
		return v, fmt.Errorf("the agent says its connection is from %s, the server sees it from %s", claim.LocalAddr, v.Peer)
	}
	if v.Transport != drivers.TCP {
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

// AgentOp implements drivers.AgentOp: an agent GETs each row's key.
func (*Driver) AgentOp() drivers.AgentLookup {
	return drivers.AgentLookup{Key: func(id int64) any { return drivers.KeyName(id) }}
}
