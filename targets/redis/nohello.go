package redis

import (
	"bytes"
	"context"
	"errors"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis sends HELLO first on every connection, and falls back to AUTH
// and RESP2 only where the server answers it with an error. A proxy in
// front of Redis that takes no HELLO and closes the connection instead
// cannot be reached so: WithoutHello's connections answer go-redis's
// HELLO on the client's side with the error a server without HELLO gives
// (Redis before 6), never sending it, so that go-redis goes on with AUTH
// and RESP2 as it would to such a server. Only the connection's first
// write is looked at; the ops pass untouched.

// WithoutHello is d speaking RESP2, its connections' HELLO answered on
// the client's side (above).
func (d *Driver) WithoutHello() *Driver {
	c := *d
	c.protocol, c.identity, c.noHello = 2, false, true
	return &c
}

// dialerFunc is go-redis's Options.Dialer.
type dialerFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// dialer is dial (a plain dialer when nil) with WithoutHello's answer on
// its connections, when d has it.
func (d *Driver) dialer(dial dialerFunc) dialerFunc {
	if !d.noHello {
		return dial
	}
	if dial == nil {
		nd := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 5 * time.Minute}
		dial = nd.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &helloless{Conn: c}, nil
	}
}

// noHelloReply is what a server without HELLO answers it.
const noHelloReply = "-ERR unknown command 'HELLO'\r\n"

// helloless is a connection whose first write, when it is HELLO, is
// answered here (noHelloReply) and not sent.
type helloless struct {
	net.Conn
	written bool
	reply   []byte
}

func (h *helloless) Write(b []byte) (int, error) {
	if !h.written {
		h.written = true
		if IsHello(b) {
			h.reply = []byte(noHelloReply)
			return len(b), nil
		}
	}
	return h.Conn.Write(b)
}

func (h *helloless) Read(b []byte) (int, error) {
	if len(h.reply) > 0 {
		n := copy(b, h.reply)
		h.reply = h.reply[n:]
		return n, nil
	}
	return h.Conn.Read(b)
}

// IsHello says whether b is one RESP command HELLO (an array whose first
// bulk string is HELLO, in any case), and nothing after it.
func IsHello(b []byte) bool {
	if len(b) < 2 || b[0] != '*' {
		return false
	}
	_, rest, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(rest, []byte("$5\r\n")) || len(rest) < 11 {
		return false
	}
	return bytes.EqualFold(rest[4:9], []byte("hello")) && bytes.Equal(rest[9:11], []byte("\r\n")) && complete(b)
}

// complete says whether b holds exactly one RESP array of bulk strings.
func complete(b []byte) bool {
	n, i := 0, 1
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n, i = n*10+int(b[i]-'0'), i+1
	}
	i += 2
	for ; n > 0; n-- {
		if i >= len(b) || b[i] != '$' {
			return false
		}
		l, j := 0, i+1
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			l, j = l*10+int(b[j]-'0'), j+1
		}
		i = j + 2 + l + 2
	}
	return i == len(b)
}

// Command sends one command outside any timing (a check's probe), its
// reply read and dropped; a key that is not there is no error.
func (c *Conn) Command(ctx context.Context, args ...any) error {
	err := c.conn.Do(ctx, args...).Err()
	if errors.Is(err, goredis.Nil) {
		return nil
	}
	return err
}
