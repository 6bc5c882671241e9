package supply

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbsock/dbsock/drivers"
)

// startLocal starts the server d describes as local processes, one per
// instance, each in its own directory and pinned alike, with the run's
// password in its Files and Stdin; each is ready when the endpoints it
// serves accept.
func (d *Description) startLocal(ctx context.Context, l *Local, target string) (*Server, error) {
	_, bin := l.Find(d.Binary)
	if bin == "" {
		return nil, NotFound(target, d.Binary, d.Install)
	}
	password, err := RandomPassword()
	if err != nil {
		return nil, err
	}
	var (
		started   []*LocalServer
		tcp, unix drivers.Endpoint
		servers   []*Server
		pids      []string
	)
	fail := func(err error) error {
		for i := len(started) - 1; i >= 0; i-- {
			err = started[i].Fail(err)
		}
		return err
	}
	for _, in := range d.Instances {
		ls, err := d.startInstance(ctx, l, target, bin, password, in)
		if ls != nil {
			started = append(started, ls)
		}
		if err != nil {
			return nil, fail(err)
		}
		ep := drivers.Endpoint{Transport: drivers.TCP, Address: ls.TCPAddr(), User: d.User, Password: password, Database: d.Database}
		mine, sock := ep, ep
		sock.Transport, sock.Address = drivers.Unix, ls.Sock
		switch in.Serves {
		case ServesTCP:
			tcp, sock = ep, ep
			pids = append(pids, fmt.Sprintf("pid %d for TCP", ls.PID()))
		case ServesUnix:
			unix, mine = sock, sock
			pids = append(pids, fmt.Sprintf("pid %d for the socket", ls.PID()))
		default:
			tcp, unix = ep, sock
		}
		servers = append(servers, ls.Server(target, "", mine, sock))
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, started[0].PID())
	if len(started) > 1 {
		origin = fmt.Sprintf("local processes %s (%s)", bin, strings.Join(pids, ", "))
	}
	srv := servers[0].Join(servers[1:]...)
	srv.Origin, srv.TCP, srv.Unix = origin, tcp, unix
	if len(started) > 1 {
		srv.Serving = d.LocalServing
	}
	return srv, nil
}

// startInstance starts one instance of d in a directory of its own, and
// returns it (nil when its directory could not be made).
func (d *Description) startInstance(ctx context.Context, l *Local, target, bin, password string, in Instance) (*LocalServer, error) {
	ls, err := l.Prepare(target, "")
	if err != nil {
		return nil, err
	}
	ls.StopSignal = d.StopSignal
	port := strconv.Itoa(ls.Port)
	ls.Sock = filepath.Join(ls.Dir, d.Socket(port))
	if err := ls.CheckSocket(); err != nil {
		return ls, err
	}
	if err := ls.Unprivileged(d.Binary, d.OSUser); err != nil {
		return ls, err
	}
	for _, f := range d.Files {
		if err := ls.writeFile(f, password); err != nil {
			return ls, err
		}
	}
	a := At{where: local, Port: port, Dir: ls.Dir, Sock: ls.Sock, SocketMode: "0700", name: d.Name}
	if in.Serves.tcp() {
		var tf TLSFiles
		var tlsPort int
		switch d.TLS {
		case TLSOnPort:
			tf, err = ls.ServeTLS(0)
			tlsPort = ls.Port
		case TLSApart:
			tf, tlsPort, err = ls.ServeTLSApart()
		}
		if err != nil {
			return ls, err
		}
		if d.TLS != NoTLS {
			a.TLS, a.TLSPort = tf, strconv.Itoa(tlsPort)
		}
		a.binds = strings.Split(ls.Bind(","), ",")
	}
	stdin := ""
	if d.Stdin != "" {
		stdin = fmt.Sprintf(d.Stdin, password)
	}
	var ready func(context.Context) error
	switch in.Serves {
	case ServesTCP:
		ready = dialOne("tcp", ls.TCPAddr())
	case ServesUnix:
		ready = dialOne("unix", ls.Sock)
	default:
		ready = dialBoth(ls.TCPAddr(), ls.Sock)
	}
	return ls, ls.StartProbe(ctx, in.Name, bin, in.Args(a), nil, stdin, ready)
}

// writeFile writes f with password into the server's directory, its
// user's alone, and hands it over (HandOver): it is on disk only while
// the server starts.
func (ls *LocalServer) writeFile(f File, password string) error {
	path := filepath.Join(ls.Dir, f.Name)
	if err := os.WriteFile(path, []byte(fmt.Sprintf(f.Format, password)), 0o600); err != nil {
		return fmt.Errorf("write %s for the server: %w", path, err)
	}
	if err := ls.Own(path); err != nil {
		return err
	}
	return ls.HandOver(path)
}

// dialOne is a readiness probe of one endpoint.
func dialOne(network, address string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, address)
		if err != nil {
			return err
		}
		return c.Close()
	}
}
