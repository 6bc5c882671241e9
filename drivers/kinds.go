package drivers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Kind is what dbsock knows of one kind of server for telling, without
// credentials, what answers at an endpoint (Sniff), and for saying how such
// a server opens its socket to other users and what it needs to report its
// own execution time. Each target registers its
// kind from its own package (targets.Target.Kind); the fields it leaves
// empty say nothing.
type Kind struct {
	// Order places the kind in the lists below (the target's Order).
	Order int
	// Greeting names a server of this kind from what it sends before the
	// client says anything, e.g. "a SQL server (VERSION)"; "" when first
	// is not its greeting. first (and Pong's answer) is valid only during
	// the call.
	Greeting func(first []byte) string
	// Pong names a server of this kind from its answer to a PING line,
	// e.g. "a key-value server"; "" when answer is not its.
	Pong func(answer []byte) string
	// Waits names the servers of this kind when they say nothing first
	// and wait for a handshake of their own.
	Waits string
	// SocketMode says how a server of this kind is made to create its
	// socket writable by its group or by everyone.
	SocketMode string
	// ExecSetup names what a server of this kind needs set up before it
	// reports its own execution time per command ("" when it needs
	// nothing, or never reports it).
	ExecSetup string
}

var (
	kindsMu sync.Mutex
	kinds   []Kind
)

// RegisterKind adds k to the kinds Sniff and the permission hints know.
func RegisterKind(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	kinds = append(kinds, k)
	slices.SortStableFunc(kinds, func(a, b Kind) int { return a.Order - b.Order })
}

// registered is a copy of the registered kinds, in order.
func registered() []Kind {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	return slices.Clone(kinds)
}

// ExecSetups lists every registered kind's ExecSetup, in order.
func ExecSetups() []string {
	var out []string
	for _, k := range registered() {
		if k.ExecSetup != "" {
			out = append(out, k.ExecSetup)
		}
	}
	return out
}

// socketModes is " (" and every kind's SocketMode, "; " between them, and
// ")"; "" when no kind says.
func socketModes() string {
	var modes []string
	for _, k := range registered() {
		if k.SocketMode != "" {
			modes = append(modes, k.SocketMode)
		}
	}
	if len(modes) == 0 {
		return ""
	}
	return " (" + strings.Join(modes, "; ") + ")"
}

// Sniff says what answers at ep, without speaking any client's protocol
// first: whether it greets (a registered Kind's Greeting names it), hangs
// up at once, answers a PING line (a Kind's Pong names it), or waits for a
// handshake of its own. It is for telling a user which kind of server an
// endpoint really reaches when a client's first contact fails.
func Sniff(ctx context.Context, ep Endpoint) string {
	c, err := DialIn(ctx, ep.Netns, ep.Transport.Network(), ep.Address)
	if err != nil {
		return "nothing that accepts connections (" + err.Error() + ")"
	}
	defer c.Close()
	buf := make([]byte, 512)
	read := func() ([]byte, error) {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		return buf[:n], err
	}
	kinds := registered()
	got, err := read()
	switch {
	case len(got) > 0:
		if what := name(kinds, func(k Kind) func([]byte) string { return k.Greeting }, got); what != "" {
			return what
		}
		return fmt.Sprintf("a server that speaks first, with %s", quoteShort(got))
	case err != nil && !TimedOut(err):
		return "a server that hangs up at once, before any client speaks"
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return "a server that hangs up at once"
	}
	got, err = read()
	switch {
	case len(got) > 0:
		if what := name(kinds, func(k Kind) func([]byte) string { return k.Pong }, got); what != "" {
			return what + " (it answered PING with " + quoteShort(got) + ")"
		}
		return "a server that answered PING with " + quoteShort(got)
	case err != nil && !TimedOut(err):
		return "a server that hangs up on a PING line" + waiters(kinds)
	}
	return "a server that waits for a handshake of its own" + waiters(kinds)
}

// name is the first name that one of kinds' functions (of gets it) gives
// b; "" when none does.
func name(kinds []Kind, of func(Kind) func([]byte) string, b []byte) string {
	for _, k := range kinds {
		if f := of(k); f != nil {
			if what := f(b); what != "" {
				return what
			}
		}
	}
	return ""
}

// waiters is " (as ... servers do)" with every kind's Waits; "" when no
// kind waits.
func waiters(kinds []Kind) string {
	var names []string
	for _, k := range kinds {
		if k.Waits != "" {
			names = append(names, k.Waits)
		}
	}
	if len(names) == 0 {
		return ""
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + list
	}
	return " (as " + list + " servers do)"
}

// quoteShort quotes at most 40 bytes of b.
func quoteShort(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "…"
	}
	return strconv.Quote(string(b))
}
