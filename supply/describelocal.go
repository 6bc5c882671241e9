package supply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
)

// startLocal starts the server d describes as local processes, one per
// instance, each in its own directory and pinned alike, with the run's
// password in its Files and Stdin; each is ready when the endpoints it
// serves accept (or LocalReady says).
func (d *Description) startLocal(ctx context.Context, l *Local, target string) (*Server, error) {
	bin, err := d.findLocal(l, target)
	if err != nil {
		return nil, err
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
		ls, eps, err := d.startOnFreePorts(ctx, l, target, bin, password, in)
		if ls != nil {
			started = append(started, ls)
		}
		if err != nil {
			return nil, fail(err)
		}
		switch in.Serves {
		case ServesTCP:
			tcp = eps[0]
			pids = append(pids, fmt.Sprintf("pid %d for TCP", ls.PID()))
		case ServesUnix:
			unix = eps[0]
			pids = append(pids, fmt.Sprintf("pid %d for the socket", ls.PID()))
		default:
			tcp, unix = eps[0], eps[1]
		}
		servers = append(servers, ls.Server(target, "", eps[0], eps[len(eps)-1]))
	}
	origin := fmt.Sprintf("local process %s (pid %d)", bin, started[0].PID())
	if len(started) > 1 {
		origin = fmt.Sprintf("local processes %s (%s)", bin, strings.Join(pids, ", "))
	}
	srv := servers[0].Join(servers[1:]...)
	srv.Origin = origin
	srv.Set(tcp, unix)
	if len(started) > 1 {
		srv.Serving = d.LocalServing
	}
	return srv, nil
}

// portTries bounds how often an instance is started again on other ports
// when the ones it was given were taken before it could bind them.
const portTries = 3

// beforeStart, when set (by tests), is called with each instance's
// prepared directory and ports just before the server is started.
var beforeStart func(ls *LocalServer)

// startOnFreePorts is startInstance, tried again on new ports when the
// server could not bind the ones it was given. A port is free when the
// kernel names it, but nothing holds it until the server binds: another
// process may take it in between, as the source port of a connection it
// opens from the same ephemeral range. The server then exits saying
// "Address already in use" (the text of EADDRINUSE that every server here
// logs), and a second pick is as good as the first was.
func (d *Description) startOnFreePorts(ctx context.Context, l *Local, target, bin, password string, in Instance) (*LocalServer, []drivers.Endpoint, error) {
	for try := 1; ; try++ {
		ls, eps, err := d.startInstance(ctx, l, target, bin, password, in)
		if err == nil || try == portTries || !portTaken(err) || ctx.Err() != nil {
			return ls, eps, err
		}
		if ls != nil {
			if ferr := ls.Fail(nil); ferr != nil {
				return nil, nil, errors.Join(err, ferr)
			}
		}
	}
}

// portTaken says whether a server's start failed because its port was in
// use: its log, in the error, says so.
func portTaken(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), strings.ToLower(syscall.EADDRINUSE.Error()))
}

// findLocal finds d's binary on this machine.
func (d *Description) findLocal(l *Local, target string) (string, error) {
	if d.Find != nil {
		return d.Find(l, target)
	}
	if _, bin := l.Find(d.Binary); bin != "" {
		return bin, nil
	}
	return "", NotFound(target, d.Binary, d.Install)
}

// startInstance starts one instance of d in a directory of its own, and
// returns it (nil when its directory could not be made) and the endpoints
// it serves (TCP first).
func (d *Description) startInstance(ctx context.Context, l *Local, target, bin, password string, in Instance) (*LocalServer, []drivers.Endpoint, error) {
	ls, err := l.Prepare(target, "")
	if err != nil {
		return nil, nil, err
	}
	ls.StopSignal = d.StopSignal
	port := strconv.Itoa(ls.Port)
	ls.Sock = filepath.Join(ls.Dir, d.Socket(port))
	if err := ls.CheckSocket(); err != nil {
		return ls, nil, err
	}
	if err := ls.Unprivileged(d.Binary, d.OSUser); err != nil {
		return ls, nil, err
	}
	for _, f := range d.Files {
		if err := ls.writeFile(f, password); err != nil {
			return ls, nil, err
		}
	}
	if d.Prepare != nil {
		if err := d.Prepare(ctx, l, ls, bin, password); err != nil {
			return ls, nil, err
		}
	}
	a := At{where: local, Port: port, Dir: ls.Dir, Sock: ls.Sock, SocketMode: "0700", name: d.Name}
	tcp, unix := Served(drivers.Endpoint{User: d.User, Password: password, Database: d.Database}, ls.TCPAddr(), ls.Sock)
	var eps []drivers.Endpoint
	if in.Serves.tcp() {
		eps = append(eps, tcp)
		var tf TLSFiles
		tlsPort := ls.Port
		switch d.TLS {
		case TLSOnPort:
			tf, err = ls.ServeTLS(0)
		case TLSApart:
			tf, tlsPort, err = ls.ServeTLSApart()
		}
		if err != nil {
			return ls, nil, err
		}
		if d.TLS != NoTLS {
			a.TLS, a.TLSPort = tf, strconv.Itoa(tlsPort)
		}
		a.binds = strings.Split(ls.Bind(","), ",")
	}
	if in.Serves.unix() {
		eps = append(eps, unix)
	}
	if beforeStart != nil {
		beforeStart(ls)
	}
	stdin := ""
	if d.Stdin != "" {
		stdin = fmt.Sprintf(d.Stdin, password)
	}
	ready := dialAll(eps)
	if d.LocalReady != nil {
		ready = d.LocalReady(eps...)
	}
	if err := ls.StartProbe(ctx, in.Name, bin, in.Args(a), nil, stdin, ready); err != nil {
		return ls, nil, err
	}
	if d.Started != nil {
		return ls, eps, d.Started(ctx, ls, password)
	}
	return ls, eps, nil
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

// dialAll is a readiness probe of endpoints: each accepts a connection.
func dialAll(eps []drivers.Endpoint) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		for _, ep := range eps {
			c, err := d.DialContext(ctx, ep.Transport.Network(), ep.Address)
			if err != nil {
				return err
			}
			c.Close()
		}
		return nil
	}
}
