// Package child runs dbsock's own servers (the echo, floor, gRPC and HTTP
// targets' servers) in a child process, so that their work never shares
// the measuring client's Go runtime. Each such target registers its server
// here (Register); the parent re-executes its own binary with Env set, and
// main (and TestMain of tests that start such servers) calls MaybeRun first
// thing.
package child

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Env selects the server a child runs: "KIND TCPADDR UNIXPATH [TCP6ADDR]",
// KIND a registered kind.
const Env = "DBSOCK_CHILD_SERVER"

// Server is one kind of child server.
type Server struct {
	// Serve serves one listener until it is closed; it returns nil (or an
	// error wrapping net.ErrClosed) when the listener is closed.
	Serve func(net.Listener) error
	// Stop, when set, ends serving (else closing the listeners does).
	Stop func()
}

var (
	mu    sync.Mutex
	kinds = map[string]func() Server{}
)

// Register adds a kind of child server; newServer is called in the child
// only. A kind registered twice is a programming error and panics at
// start-up.
func Register(kind string, newServer func() Server) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[kind]; dup {
		panic("child: " + kind + " registered twice")
	}
	kinds[kind] = newServer
}

// Spec returns the Env value for a child serving kind on tcpAddr and
// unixPath, and on tcp6Addr ([::1]:PORT) unless it is "".
func Spec(kind, tcpAddr, unixPath, tcp6Addr string) string {
	return strings.TrimSpace(kind + " " + tcpAddr + " " + unixPath + " " + tcp6Addr)
}

// MaybeRun runs the server and exits when this process was started as a
// child server (Env set); otherwise it returns at once.
func MaybeRun() {
	spec, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	f := strings.Fields(spec)
	if len(f) != 3 && len(f) != 4 {
		fail(fmt.Errorf("%s=%q is not KIND TCPADDR UNIXPATH [TCP6ADDR]", Env, spec))
	}
	mu.Lock()
	newServer, ok := kinds[f[0]]
	mu.Unlock()
	if !ok {
		fail(fmt.Errorf("unknown child server kind %q", f[0]))
	}
	ls, err := listen(f[0], f[1], f[2])
	if err == nil && len(f) == 4 {
		var l6 net.Listener
		if l6, err = net.Listen("tcp6", f[3]); err != nil {
			err = fmt.Errorf("%s server: listen tcp6 %s: %w", f[0], f[3], err)
		}
		ls = append(ls, l6)
	}
	if err != nil {
		fail(err)
	}
	s := newServer()
	stop := func() {
		for _, l := range ls {
			l.Close()
		}
		if s.Stop != nil {
			s.Stop()
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		stop()
		os.Exit(0)
	}()
	errc := make(chan error, len(ls))
	for _, l := range ls {
		go func() { errc <- s.Serve(l) }()
	}
	if err := <-errc; err != nil && !errors.Is(err, net.ErrClosed) {
		fail(err)
	}
	select {}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dbsock child server:", err)
	os.Exit(1)
}

// listen opens both listeners: TCP on tcpAddr, Unix on unixPath.
func listen(kind, tcpAddr, unixPath string) ([]net.Listener, error) {
	tcp, err := net.Listen("tcp", tcpAddr)
	if err != nil {
		return nil, fmt.Errorf("%s server: listen tcp %s: %w", kind, tcpAddr, err)
	}
	unix, err := net.Listen("unix", unixPath)
	if err != nil {
		tcp.Close()
		return nil, fmt.Errorf("%s server: listen unix %s: %w", kind, unixPath, err)
	}
	return []net.Listener{tcp, unix}, nil
}

// AcceptLoop accepts on l until it is closed, serving each connection with
// serve in a goroutine of its own.
func AcceptLoop(l net.Listener, serve func(net.Conn)) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go serve(c)
	}
}
