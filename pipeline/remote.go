package pipeline

// The timing loop in another process: with a Plan.Client.Remote (dbsock run
// --client container) each instance of a case is written to a case file,
// "dbsock measure FILE" runs scenarios.Run on it there (ServeCase, in servecase.go) and
// writes the runs back beside it, one JSON line each. The loop is the same
// one; only the process, and so the client's cgroup, network and mount
// namespaces, change.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/cpustat"
	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/results"
	"github.com/dbsock/dbsock/scenarios"
	"github.com/dbsock/dbsock/supply"
	"github.com/dbsock/dbsock/targets"
)

// Remote is a place outside this process where the timing loop runs:
// Exec runs dbsock there with args and waits for it.
type Remote interface {
	Exec(ctx context.Context, args ...string) error
	// Place says where that is, for the report.
	Place() string
	// PID is its first process as this host sees it (0: unknown).
	PID() int
	Stop(ctx context.Context) error
}

// StartRemote starts a Remote for target that reaches the host
// directories dirs at the same paths.
type StartRemote func(ctx context.Context, target string, dirs []string) (Remote, error)

// Case is one instance of one case, as the remote client reads it.
type Case struct {
	Target string `json:"target"`
	// Settings are the target's own settings as JSON (its Settings value,
	// which holds no endpoint and no password), which the client decodes
	// into the same type (Target.Settings).
	Settings  json.RawMessage `json:"settings"`
	ValueSize int             `json:"value_size,omitempty"`
	Query     string          `json:"query,omitempty"`
	Keys      []string        `json:"keys,omitempty"`
	Depth     int             `json:"depth,omitempty"`
	// Paths are the endpoints the case measures, in order.
	Paths drivers.Paths `json:"paths"`
	// Passwords are the paths' (Endpoint leaves its own out of JSON).
	// In a case file they are empty, and PasswordPipe, FILE.pw, a named
	// pipe dbsock run writes them to (casepipe.go), holds them.
	Passwords    []string `json:"passwords"`
	PasswordPipe string   `json:"password_pipe,omitempty"`
	// TLSRoots are, for each of Paths on the tls path, the CA
	// certificates (PEM) its client trusts, "" when it verifies nothing
	// (Endpoint.TLSRoots): certificates, never keys.
	TLSRoots       []string           `json:"tls_roots,omitempty"`
	Server         drivers.ServerInfo `json:"server"`
	ServerInstance string             `json:"server_instance,omitempty"`
	// Loop is the plan's loop settings as the user gave them (Plan.Loop),
	// and Case what the pipeline decided for this case (its scenario,
	// workers and rows; the rows are its workload's too).
	Loop scenarios.Settings `json:"loop"`
	Case scenarios.Case     `json:"case"`
	// Instance is which server instance this is (1 first), and Epoch when
	// the report began; the meters are the client's to make
	// (ServerPIDs).
	Instance int       `json:"instance"`
	Epoch    time.Time `json:"epoch"`
	// ServerPIDs are the roots of the server's process trees, whose CPU
	// time the client reads (it sees the host's processes).
	ServerPIDs      []int  `json:"server_pids,omitempty"`
	ServerCPUWhat   string `json:"server_cpu_what,omitempty"`
	ServerCPUWhyNot string `json:"server_cpu_why_not,omitempty"`
	// Out is the file the runs are written to, one JSON line each, then a
	// last line holding the error, if any.
	Out string `json:"out"`
}

// caseEnd is the last line of a case's output: the client's error, as
// its text and as its parts (the settings it names kept apart, for this
// process to word).
type caseEnd struct {
	Error    string         `json:"error,omitempty"`
	Words    []setting.Part `json:"words,omitempty"`
	NoAnswer bool           `json:"no_answer,omitempty"`
	Done     bool           `json:"done"`
}

// said is the client's error, worded here as an error of this process
// would be (its text alone from a client that sent no parts); it wraps
// marks, such as ErrNoAnswer when its server did not answer.
func (e caseEnd) said(marks ...error) error {
	words := e.Words
	if len(words) == 0 {
		words = []setting.Part{{Text: e.Error}}
	}
	return setting.Said(words, marks...)
}

// remoteClient is one target's client outside this process and the
// directory its case files are in.
type remoteClient struct {
	r   Remote
	dir string
	n   int
}

// startClient starts t's remote client beside srv, and records its place
// in ti.
func (p Plan) startClient(ctx context.Context, t *targets.Target, srv *supply.Server, ti *results.Target) (*remoteClient, error) {
	dir, err := os.MkdirTemp("", "dbsock-client-")
	if err != nil {
		return nil, fmt.Errorf("%s: make a directory for the client's case files: %w", t.Name, err)
	}
	// Marked as this dbsock's, so that "dbsock clean" removes it after a
	// run that was killed (a case file holds the endpoints' passwords).
	if err := writeNew(filepath.Join(dir, supply.OwnerFile), []byte(supply.Self().String()+"\n")); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: mark the client's case directory: %w", t.Name, err)
	}
	dirs := []string{dir, filepath.Dir(srv.Unix().Address)}
	r, err := p.Client.Remote(ctx, t.Name, dirs)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ti.Client = r.Place()
	if pids, _ := meterRoots(srv.CPU); len(pids) > 0 && r.PID() > 0 {
		ti.Provenance.CPUGroup = supply.CgroupNote(pids[0], r.PID())
	}
	fmt.Fprintf(p.log(), "dbsock: %s: the client runs in %s\n", t.Name, ti.Client)
	return &remoteClient{r: r, dir: dir}, nil
}

func (c *remoteClient) stop() error {
	if c == nil {
		return nil
	}
	err := c.r.Stop(context.Background())
	return errors.Join(err, os.RemoveAll(c.dir))
}

// measure runs one instance of a case in the remote client: what
// scenarios.Run does here, with the runs read back.
func (c *remoteClient) measure(ctx context.Context, cs Case, emit func(results.Run)) error {
	c.n++
	file := filepath.Join(c.dir, fmt.Sprintf("case-%d.json", c.n))
	cs.Out = file + ".out"
	pws := cs.Passwords
	cs.Passwords, cs.PasswordPipe = make([]string, len(pws)), file+pipeSuffix
	b, err := json.Marshal(cs)
	if err != nil {
		return fmt.Errorf("write the client's case: %w", err)
	}
	if err := writeNew(file, b); err != nil {
		return fmt.Errorf("write the client's case: %w", err)
	}
	defer os.Remove(file)
	defer os.Remove(cs.Out)
	defer os.Remove(cs.Out + aliveSuffix)
	pctx, stopOffer := context.WithCancel(ctx)
	wait, err := offerPasswords(pctx, cs.PasswordPipe, pws)
	if err != nil {
		stopOffer()
		return err
	}
	xerr := c.execWatched(ctx, file, cs.Out+aliveSuffix, cs.Loop.Timeout())
	stopOffer()
	_ = wait() // a client that did not read them has failed, and says so below
	if errors.Is(xerr, errClientSilent) {
		return setting.Err("the client in %s: %w", c.r.Place(), xerr)
	}
	end, rerr := readRuns(cs.Out, emit)
	switch {
	case ctx.Err() != nil && !end.Done:
		return fmt.Errorf("interrupted while the client measured instance %d: %w", cs.Instance, ctx.Err())
	case end.Error != "" && end.NoAnswer:
		return end.said(scenarios.ErrNoAnswer)
	case end.Error != "":
		return end.said()
	case xerr != nil:
		return xerr
	case rerr != nil:
		return fmt.Errorf("read the client's runs: %w", rerr)
	case !end.Done:
		return fmt.Errorf("the client in %s ended without saying it was done", c.r.Place())
	}
	return nil
}

// writeNew writes b to file, a new file of the run's own directory: never
// one that is there, nor through a symlink.
func writeNew(file string, b []byte) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// aliveSuffix names the file beside a case's out file where the client
// counts its heartbeats, one a second.
const aliveSuffix = ".alive"

// heartbeat is how often the client says it is alive.
const heartbeat = time.Second

// errClientSilent is the error of a client that stopped saying it is
// alive: paused, hung, or not dbsock.
var errClientSilent = errors.New("the client stopped saying it is alive")

// execWatched runs the client on the case in file and ends it when its
// heartbeat (in alive) stops for longer than opTimeout + 5 s: a hung or
// paused client container is an error, not a run that never ends. The
// client's own loop bounds each op by opTimeout.
func (c *remoteClient) execWatched(ctx context.Context, file, alive string, opTimeout time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.r.Exec(ctx, "measure", file) }()
	silence := opTimeout + 5*time.Second
	last, since := "", time.Now()
	tick := time.NewTicker(heartbeat / 2)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			b, _ := os.ReadFile(alive)
			if string(b) != last {
				last, since = string(b), time.Now()
				continue
			}
			if quiet := time.Since(since); quiet > silence {
				cancel() // Exec may not return while the container is paused: it is stopped with the run
				return setting.Err("%w for %s (more than %s %s + 5 s)", errClientSilent, quiet.Round(time.Second), setting.OpTimeout, opTimeout)
			}
		}
	}
}

// beat writes a heartbeat count to alive every heartbeat until ctx ends,
// in place through the open file (whatever is put at its name later is
// never written).
func beat(ctx context.Context, alive *os.File) {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for n := 1; ; n++ {
		b := []byte(strconv.Itoa(n))
		if _, err := alive.WriteAt(b, 0); err == nil {
			_ = alive.Truncate(int64(len(b)))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Limits of what the host reads back from the client: one run's line (its
// blocks and histogram), and a case's whole output.
const (
	maxRunLine  = 64 << 20
	maxOutBytes = 1 << 30
)

// readRuns emits every run in file and returns its last line. It reads at
// most maxOutBytes, in lines of at most maxRunLine.
func readRuns(file string, emit func(results.Run)) (caseEnd, error) {
	var end caseEnd
	f, err := os.Open(file)
	if err != nil {
		return end, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxOutBytes {
		return end, fmt.Errorf("%s holds %d bytes, more than a case's runs take (%d)", file, fi.Size(), maxOutBytes)
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxOutBytes))
	sc.Buffer(make([]byte, 64<<10), maxRunLine)
	for sc.Scan() {
		line := sc.Bytes()
		if strings.HasPrefix(string(line), `{"end":`) {
			var e struct{ End caseEnd }
			if err := json.Unmarshal(line, &e); err != nil {
				return end, err
			}
			return e.End, nil
		}
		var run results.Run
		if err := json.Unmarshal(line, &run); err != nil {
			return end, err
		}
		emit(run)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return end, fmt.Errorf("%s has a line longer than a run takes (%d bytes)", file, maxRunLine)
	}
	return end, sc.Err()
}

// remoteCase is the Case for instance in of case c, with w's values (its
// rows are c's), on t's target at pipeline depth depth.
func (p Plan) remoteCase(t *targets.Target, w drivers.Workload, depth int, paths drivers.Paths, info drivers.ServerInfo, c scenarios.Case, in scenarios.Instance) (Case, error) {
	settings, err := json.Marshal(p.settings(t))
	if err != nil {
		return Case{}, fmt.Errorf("write %s's settings for the client: %w", t.Name, err)
	}
	cs := Case{Target: t.Name, Settings: settings, ValueSize: w.ValueSize, Query: w.Query, Keys: w.Keys,
		Depth: depth, Paths: paths, Server: info, ServerInstance: info.Instance, Loop: p.Loop, Case: c,
		Instance: in.Number, Epoch: in.Epoch, ServerCPUWhyNot: in.ServerCPUWhyNot}
	for _, ep := range paths {
		cs.Passwords = append(cs.Passwords, ep.Password)
		cs.TLSRoots = append(cs.TLSRoots, string(ep.TLSRoots))
	}
	cs.ServerPIDs, cs.ServerCPUWhat = meterRoots(in.ServerCPU)
	if in.ServerCPU != nil && len(cs.ServerPIDs) == 0 {
		cs.ServerCPUWhyNot = "the client container reads a server's CPU time from its process trees, and this server's meter (" + in.ServerCPU.Describe() + ") is none"
	}
	return cs, nil
}

// meterRoots are the roots of m's process trees and what they are.
func meterRoots(m cpustat.Meter) ([]int, string) {
	switch m := m.(type) {
	case *cpustat.Tree:
		return []int{m.Root}, m.What
	case cpustat.Sum:
		var pids []int
		what := ""
		for _, one := range m {
			p, w := meterRoots(one)
			if len(p) == 0 {
				return nil, ""
			}
			pids, what = append(pids, p...), w
		}
		return pids, what
	}
	return nil, ""
}
