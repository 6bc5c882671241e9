package pipeline

// The client's side of a case: "dbsock measure FILE" in the client
// container reads the case dbsock run wrote (remote.go), checks it by the
// rules dbsock run checks its plan with, runs scenarios.Run on it and
// writes the runs back beside it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/targets"
)

// ErrBadCase marks a file that is not a case dbsock run wrote: dbsock
// measure refuses it (exit 2) and leaves it where it is.
var ErrBadCase = errors.New("not a case file of dbsock's client container (dbsock measure)")

// maxCaseBytes bounds a case file (its keys are its bulk).
const maxCaseBytes = 256 << 20

// ServeCase is "dbsock measure FILE": it reads the case in file, checks it
// (ErrBadCase: the file is left as it is), removes it, reads the case's
// passwords from its pipe (casepipe.go), runs scenarios.Run on it in this
// process, and writes the runs and the end to the case's Out file, which
// must not exist yet.
func ServeCase(ctx context.Context, file string) error {
	cs, err := readCase(file)
	if err != nil {
		return err
	}
	uid, gid := caseOwner(file)
	os.Remove(file)
	if cs.PasswordPipe != "" {
		if cs.Passwords, err = readPasswords(cs.PasswordPipe); err != nil {
			return fmt.Errorf("read the case's passwords: %w", err)
		}
		if len(cs.Passwords) != len(cs.Paths) {
			return fmt.Errorf("%w: %s: %d passwords for %d paths", ErrBadCase, cs.PasswordPipe, len(cs.Passwords), len(cs.Paths))
		}
	}
	out, err := os.OpenFile(cs.Out, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write the runs to %s (a new file beside the case): %w", cs.Out, err)
	}
	defer out.Close()
	alive, err := makeAlive(out, cs.Out+aliveSuffix, uid, gid)
	if err != nil {
		return err
	}
	defer alive.Close()
	// The heartbeat ends before this does: a beat written after the
	// caller removed the file would leave it behind.
	bctx, stop := context.WithCancel(ctx)
	beating := make(chan struct{})
	go func() { defer close(beating); beat(bctx, alive) }()
	defer func() { stop(); <-beating }()
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	rerr := cs.run(ctx, func(run results.Run) { _ = enc.Encode(run) })
	end := caseEnd{Done: rerr == nil}
	if rerr != nil {
		end.Error, end.Words, end.NoAnswer = rerr.Error(), setting.Parts(rerr), errors.Is(rerr, scenarios.ErrNoAnswer)
	}
	if err := enc.Encode(struct {
		End caseEnd `json:"end"`
	}{end}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the runs to %s: %w", cs.Out, err)
	}
	return rerr
}

// caseOwner is the owner of the case file (the user dbsock run runs as)
// when this process is root (a client container that enters other
// containers' network namespaces runs as root), else -1, -1: what the
// client writes must be that user's to read back.
func caseOwner(file string) (uid, gid int) {
	fi, err := os.Lstat(file)
	if os.Geteuid() != 0 || err != nil {
		return -1, -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1
	}
	return int(st.Uid), int(st.Gid)
}

// makeAlive makes the heartbeat file alive, a new file (never one that
// is there, nor a symlink), and gives it and out to uid:gid when uid >= 0.
// The heartbeat rewrites it through the file returned, never by its name:
// a symlink put in its place later is not followed.
func makeAlive(out *os.File, alive string, uid, gid int) (*os.File, error) {
	if uid >= 0 {
		if err := out.Chown(uid, gid); err != nil {
			return nil, fmt.Errorf("give the runs in %s to uid %d, who asked for them: %w", out.Name(), uid, err)
		}
	}
	f, err := os.OpenFile(alive, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("make the heartbeat file %s (a new file beside the case): %w", alive, err)
	}
	if uid >= 0 {
		if err := f.Chown(uid, gid); err != nil {
			f.Close()
			return nil, fmt.Errorf("give the heartbeat file %s to uid %d, who reads it: %w", alive, uid, err)
		}
	}
	return f, nil
}

// readCase reads and checks the case in file: a regular file of at most
// maxCaseBytes holding one case whose out file is FILE.out.
func readCase(file string) (Case, error) {
	var cs Case
	bad := func(format string, args ...any) (Case, error) {
		return cs, fmt.Errorf("%w: %s: %s", ErrBadCase, file, fmt.Sprintf(format, args...))
	}
	fi, err := os.Lstat(file)
	switch {
	case err != nil:
		return bad("%v", err)
	case !fi.Mode().IsRegular():
		return bad("not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > maxCaseBytes:
		return bad("%d bytes, more than a case's %d", fi.Size(), maxCaseBytes)
	}
	f, err := os.Open(file)
	if err != nil {
		return bad("%v", err)
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxCaseBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cs); err != nil {
		return bad("%v", err)
	}
	if err := cs.check(file); err != nil {
		return bad("%v", err)
	}
	return cs, nil
}

// check says what makes cs a case dbsock run cannot have written.
func (cs Case) check(file string) error {
	if _, ok := targets.Lookup(cs.Target); !ok {
		return fmt.Errorf("no target %q", cs.Target)
	}
	if cs.Out != file+".out" {
		return fmt.Errorf("its out file %q is not %s.out", cs.Out, file)
	}
	if cs.PasswordPipe != "" && cs.PasswordPipe != file+pipeSuffix {
		return fmt.Errorf("its password pipe %q is not %s%s", cs.PasswordPipe, file, pipeSuffix)
	}
	if err := cs.checkSettings(); err != nil {
		return err
	}
	if len(cs.Paths) < scenarios.MinPaths || len(cs.Passwords) != len(cs.Paths) {
		return fmt.Errorf("%d paths with %d passwords: a case measures %d or more paths", len(cs.Paths), len(cs.Passwords), scenarios.MinPaths)
	}
	if err := cs.restoreTLS(); err != nil {
		return err
	}
	for _, ep := range cs.Paths {
		if err := ep.Validate(); err != nil {
			return err
		}
		// A container's address on the run's network (Validate: a private
		// IPv4) is the bridge and service paths' only way off loopback.
		routed := ep.Transport.Route().Info().Docker
		if ep.Transport.Network() != "unix" && !routed && !loopback(ep.Address) {
			return fmt.Errorf("endpoint %s is not on loopback: dbsock measures only loopback, Unix sockets and containers on the run's network", ep.Address)
		}
	}
	return nil
}

// restoreTLS gives each tls path of the case its client's TLS settings
// from TLSRoots (drivers.TLSFrom), as dbsock run had them.
func (cs Case) restoreTLS() error {
	if len(cs.TLSRoots) != 0 && len(cs.TLSRoots) != len(cs.Paths) {
		return fmt.Errorf("%d paths with TLS settings for %d", len(cs.Paths), len(cs.TLSRoots))
	}
	for i := range cs.Paths {
		ep := &cs.Paths[i]
		if !ep.Transport.Info().TLS {
			continue
		}
		if len(cs.TLSRoots) == 0 {
			return fmt.Errorf("the tls path %s comes without its TLS settings", ep.Address)
		}
		roots := cs.TLSRoots[i]
		cfg, err := drivers.TLSFrom([]byte(roots), ep.Address)
		if err != nil {
			return err
		}
		ep.TLS, ep.TLSRoots = cfg, []byte(roots)
	}
	return nil
}

// checkSettings checks the case's settings by the rules dbsock run checks
// its plan with (scenarios.Settings.Validate and ValidateCase, and the
// plan's own limits on depth, value size and memory), so that a case file
// cannot ask for more than dbsock run could have.
func (cs Case) checkSettings() error {
	o := cs.Loop
	if err := o.Validate(); err != nil {
		return err
	}
	if err := o.ValidateCase(cs.Case); err != nil {
		return err
	}
	if cs.Depth != 0 {
		if err := validDepth(cs.Depth); err != nil {
			return err
		}
	}
	if cs.ValueSize != 0 {
		if err := validValueSize(cs.ValueSize); err != nil {
			return err
		}
	}
	return o.CheckMemory(cs.Case, max(int64(cs.ValueSize), ownValueSize), max(cs.Depth, 1), len(cs.Paths))
}

// loopback says whether host:port names a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// targetSettings decodes the case's Settings into its target's settings,
// refusing a field that type does not have, and validates them.
func (cs Case) targetSettings() (targets.Settings, error) {
	t, ok := targets.Lookup(cs.Target)
	if !ok {
		return nil, fmt.Errorf("this dbsock has no target %q (the client is another version of dbsock?)", cs.Target)
	}
	s := t.Settings()
	dec := json.NewDecoder(bytes.NewReader(cs.Settings))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("read %s's settings %s: %w", cs.Target, cs.Settings, err)
	}
	if err := s.Validate(); err != nil {
		return nil, setting.Err("%s's settings %s: %w", cs.Target, cs.Settings, err)
	}
	return s, nil
}

// run builds the case's driver from its target's settings and runs the
// loop.
func (cs Case) run(ctx context.Context, emit func(results.Run)) error {
	settings, err := cs.targetSettings()
	if err != nil {
		return err
	}
	d := settings.Driver(drivers.Workload{ValueSize: cs.ValueSize, Rows: cs.Case.Rows, Op: cs.Loop.Op, Query: cs.Query, Keys: cs.Keys})
	if pl, ok := d.(drivers.Pipeliner); ok && cs.Depth > 1 {
		d = pl.Pipeline(cs.Depth)
	}
	for i := range cs.Paths {
		cs.Paths[i].Password = cs.Passwords[i]
	}
	cs.Server.Instance = cs.ServerInstance
	in := scenarios.Instance{Number: cs.Instance, ClientCPU: cpustat.Self{}, ServerCPUWhyNot: cs.ServerCPUWhyNot, Epoch: cs.Epoch}
	if len(cs.ServerPIDs) > 0 {
		sum := cpustat.Sum{}
		for _, pid := range cs.ServerPIDs {
			sum = append(sum, cpustat.NewTree(pid, cs.ServerCPUWhat))
		}
		in.ServerCPU = sum
		if len(sum) == 1 {
			in.ServerCPU = sum[0]
		}
	}
	return scenarios.Run(ctx, d, cs.Paths, cs.Server, cs.Loop, cs.Case, in, emit)
}
