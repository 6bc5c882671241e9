package echo

// Control frames: how another process's connection to dbsock's ping-pong
// servers (echo, floor) is verified on the server side. A connection may
// begin, before its first message, with control frames: a NUL byte, a
// length byte and that many bytes of text. The server answers each with a
// frame as Greeting writes them (a length byte and text):
//
//	hello TOKEN   the connection carries TOKEN: "ok ID", ID the server's
//	              number of the connection
//	find TOKEN    dbsock's own connection asks for the one connection that
//	              carries TOKEN: "found NETWORK PEER ID" (PEER "@" on the
//	              socket, and "pid N" after it where the server reads the
//	              peer's process), "none", or "many N"; the asking
//	              connection sends only control frames from then on
//
// A message of the ping-pong never begins with a NUL byte (dbsock's begin
// with "ping"), so the server tells a frame from a message by its first
// byte, once per connection: the timed ping-pong is the bare message.

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// MaxToken is the longest token a hello may carry.
const MaxToken = 200

// Peer is what a server knows of one accepted connection.
type Peer struct {
	// ID is the server's number of the connection.
	ID uint64
	// Network is the listener's network: tcp, tcp6 or unix.
	Network string
	// Addr is the client's address as the server sees it ("@" on the
	// socket).
	Addr string
	// PID is the client's process on the socket, where the server reads
	// it (0: not read).
	PID int
}

func (p Peer) String() string {
	s := p.Network + " " + p.Addr + " " + strconv.FormatUint(p.ID, 10)
	if p.PID > 0 {
		s += " pid " + strconv.Itoa(p.PID)
	}
	return s
}

// Registry is one server's record of the connections that named a token.
type Registry struct {
	mu      sync.Mutex
	next    uint64
	byToken map[string][]Peer
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byToken: map[string][]Peer{}} }

// Accepted numbers a newly accepted connection.
func (r *Registry) Accepted(network, addr string, pid int) Peer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	return Peer{ID: r.next, Network: network, Addr: addr, PID: pid}
}

// Begin reads the start of connection p through read (into buf), handles
// the control frames it begins with and answers them through write. It
// returns the bytes read past them (the start of the ping-pong, to echo),
// and forget, to be called when the connection closes; ok is false when
// the connection is done (its client closed it, sent a bad frame, or was
// dbsock's own asking connection). buf must hold at least 257 bytes.
func (r *Registry) Begin(p Peer, buf []byte, read func([]byte) (int, error), write func([]byte) error) (data []byte, forget func(), ok bool) {
	forget = func() {}
	have, asker, named := 0, false, false
	for {
		if have == 0 {
			n, _ := read(buf)
			if n <= 0 {
				return nil, forget, false
			}
			have = n
		}
		if buf[0] != 0 {
			return buf[:have], forget, !asker
		}
		for have < 2 || have < 2+int(buf[1]) {
			n, _ := read(buf[have:])
			if n <= 0 {
				return nil, forget, false
			}
			have += n
		}
		end := 2 + int(buf[1])
		verb, token, _ := strings.Cut(string(buf[2:end]), " ")
		var answer string
		switch {
		case !validToken(token):
			answer = "error a token of 1 to " + strconv.Itoa(MaxToken) + " printable bytes without spaces"
		case verb == "hello" && !named && !asker:
			named = true
			forget = r.name(p, token)
			answer = "ok " + strconv.FormatUint(p.ID, 10)
		case verb == "find" && !named:
			asker = true
			answer = r.find(token)
		default:
			answer = "error " + strconv.Quote(verb) + " is not a control frame here"
		}
		if write(frame(answer)) != nil || strings.HasPrefix(answer, "error") {
			return nil, forget, false
		}
		have = copy(buf, buf[end:have])
	}
}

func validToken(t string) bool {
	if t == "" || len(t) > MaxToken {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return false
		}
	}
	return true
}

// name records that p carries token, and returns what forgets it.
func (r *Registry) name(p Peer, token string) func() {
	r.mu.Lock()
	r.byToken[token] = append(r.byToken[token], p)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		ps := r.byToken[token]
		for i := range ps {
			if ps[i].ID == p.ID {
				ps = append(ps[:i], ps[i+1:]...)
				break
			}
		}
		if len(ps) == 0 {
			delete(r.byToken, token)
		} else {
			r.byToken[token] = ps
		}
	}
}

// find is the answer to "find token".
func (r *Registry) find(token string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ps := r.byToken[token]; len(ps) {
	case 0:
		return "none"
	case 1:
		return "found " + ps[0].String()
	default:
		return "many " + strconv.Itoa(len(ps))
	}
}

// Frame is a client's control frame of text (at most 255 bytes).
func Frame(text string) ([]byte, error) {
	if len(text) > 255 {
		return nil, fmt.Errorf("a control frame of %d bytes: 255 is the most", len(text))
	}
	return append([]byte{0, byte(len(text))}, text...), nil
}

// ParseFound reads the answer to a find: the one connection's Peer, or an
// error saying what the server answered.
func ParseFound(answer string) (Peer, error) {
	rest, ok := strings.CutPrefix(answer, "found ")
	if !ok {
		return Peer{}, fmt.Errorf("the server answered %q", answer)
	}
	f := strings.Fields(rest)
	if len(f) != 3 && !(len(f) == 5 && f[3] == "pid") {
		return Peer{}, fmt.Errorf("the server answered %q, not NETWORK PEER ID [pid N]", answer)
	}
	p := Peer{Network: f[0], Addr: f[1]}
	var err error
	if p.ID, err = strconv.ParseUint(f[2], 10, 64); err != nil {
		return Peer{}, fmt.Errorf("the server answered %q: %w", answer, err)
	}
	if len(f) == 5 {
		if p.PID, err = strconv.Atoi(f[4]); err != nil {
			return Peer{}, fmt.Errorf("the server answered %q: %w", answer, err)
		}
	}
	return p, nil
}
