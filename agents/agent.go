package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/supply"
)

// Spec says how to run one agent.
type Spec struct {
	// Stack names it in errors and reports: "python", "c", "cmd", ...
	Stack string
	// Argv is the command line (no secret ever goes in it).
	Argv []string
	// Env is the agent's whole environment beyond PATH and LANG: names
	// of directories (NODE_PATH), never a secret.
	Env []string
	// Dir is the directory it runs in ("" for dbsock's).
	Dir string
}

// Limits are how long dbsock waits for an agent.
type Limits struct {
	// OpTimeout is the limit of one op (the run's --op-timeout); the
	// agent is given it for its library. Every wait is at least this
	// plus Grace.
	OpTimeout time.Duration
	// PerOp is what each op of a block or an overhead request adds to
	// the wait for its result (0: nothing, so that a whole block must
	// come back within OpTimeout and Grace).
	PerOp time.Duration
	// Grace is what every wait adds to OpTimeout (2 s when 0).
	Grace time.Duration
	// Hello is how long an agent may take to say its hello, whatever the
	// op timeout: an interpreter's start and its libraries' import, on a
	// busy machine (DefaultHello when 0).
	Hello time.Duration
}

// DefaultHello is how long an agent may take to say its hello unless its
// Limits say otherwise: Python, Node.js and PHP start and import their
// libraries in well under a second on an idle machine, and a JVM in a
// few; a machine busy with other work may take ten times as long.
const DefaultHello = 30 * time.Second

// hello is how long dbsock waits for an agent's hello.
func (l Limits) hello() time.Duration {
	if l.Hello <= 0 {
		return max(DefaultHello, l.wait(0))
	}
	return l.Hello
}

func (l Limits) grace() time.Duration {
	if l.Grace <= 0 {
		return 2 * time.Second
	}
	return l.Grace
}

// wait is how long dbsock waits for an answer to a request of ops ops.
func (l Limits) wait(ops int) time.Duration {
	return l.OpTimeout + l.grace() + time.Duration(ops)*l.PerOp
}

// ConnectPerOp is what each op of the connect scenario adds to a wait,
// beside PerOp: a connection of its own, whose handshake may hash a
// password (PostgreSQL's SCRAM: 53 to 58 ms an op from psycopg2 on an
// idle 2-vCPU machine, over 100 on one busy with other work).
const ConnectPerOp = 250 * time.Millisecond

// waitFor is wait for ops of scenario (ScenarioConnect or "").
func (l Limits) waitFor(ops int, scenario string) time.Duration {
	if scenario == ScenarioConnect {
		return l.wait(ops) + time.Duration(ops)*ConnectPerOp
	}
	return l.wait(ops)
}

// Agent is one running agent process.
type Agent struct {
	spec   Spec
	limits Limits
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	br     *bufio.Reader
	// answered stamps the first byte of each answer on dbsock's clock.
	answered *stampReader
	// sent and first are the last request's write and the first byte of
	// its answer, on dbsock's clock.
	sent, first time.Time
	stderr      *capped
	hello       Hello
	exited      chan struct{}
	waited      error
	dead        error // set once the agent is killed or gone: every later call fails with it
	// secrets are the passwords sent to the agent: whatever of the
	// agent's dbsock quotes in an error has them replaced by ****.
	secrets []string
	// forms are every form of the secrets that redact looks for (for
	// formsOf of them: they are made again when one is added).
	forms   []string
	formsOf int
	// tmp is its own temp dir, its TMPDIR ("" when its spec names one).
	tmp string
}

// Start starts the agent with a minimal environment (PATH, LANG, spec.Env,
// TMPDIR, a directory of its own that goes with it, unless spec.Env names
// one, and MarkEnv, which says which dbsock run it is of: no other DBSOCK_*
// variable, no secret) in a process group of its own (on Linux, under a
// keeper that ends whatever it starts with it: keeper_linux.go), and
// reads its hello within the limits' wait.
func Start(ctx context.Context, spec Spec, limits Limits) (*Agent, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("start the %s agent: no command", spec.Stack)
	}
	for _, kv := range spec.Env {
		if strings.HasPrefix(kv, "DBSOCK_") {
			return nil, fmt.Errorf("start the %s agent: its environment may not hold %s (dbsock's settings and secrets stay in dbsock)", spec.Stack, kv)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the %s agent: %w", spec.Stack, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start the %s agent: %w", spec.Stack, err)
	}
	stamp := &stampReader{f: outR}
	a := &Agent{spec: spec, limits: limits, stdin: inW, stdout: outR, br: bufio.NewReaderSize(stamp, 64<<10), answered: stamp,
		stderr: &capped{max: MaxStderr}, exited: make(chan struct{})}
	path, err := exec.LookPath(spec.Argv[0])
	if err == nil {
		a.tmp, err = tempDir(spec.Env)
	}
	if err == nil {
		env := append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}, spec.Env...)
		if a.tmp != "" {
			env = append(env, "TMPDIR="+a.tmp)
		}
		prog, argv, env := launch(path, spec.Argv, append(env, MarkEnv+"="+supply.Self().String()), a.tmp)
		a.cmd = &exec.Cmd{Path: prog, Args: argv, Env: env, Dir: spec.Dir, Stdin: inR, Stdout: outW, Stderr: a.stderr,
			SysProcAttr: procAttr(), WaitDelay: time.Second}
		err = startProcess(a.cmd.Start)
	}
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		removeTempDir(a.tmp)
		return nil, fmt.Errorf("start the %s agent %q: %w", spec.Stack, strings.Join(spec.Argv, " "), err)
	}
	go func() { a.waited = a.cmd.Wait(); close(a.exited) }()
	if err := a.readHello(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Agent) readHello(ctx context.Context) error {
	line, err := a.read(ctx, "hello", MaxLine, a.limits.hello())
	if err != nil {
		return err
	}
	if err := a.decode("hello", line, TypeHello, &a.hello); err != nil {
		return err
	}
	if a.hello.Protocol < MinProtocol || a.hello.Protocol > Protocol || a.hello.Language == "" || a.hello.Library == "" {
		return a.fail(fmt.Errorf("its hello speaks protocol %d with language %q and library %q: dbsock speaks protocols %d to %d and needs both named",
			a.hello.Protocol, a.hello.Language, a.hello.Library, MinProtocol, Protocol))
	}
	if err := a.hello.checkCapabilities(); err != nil {
		return a.fail(fmt.Errorf("its hello: %w", err))
	}
	return nil
}

// Hello is what the agent said it is.
func (a *Agent) Hello() Hello { return a.hello }

// PID is the agent's process id.
func (a *Agent) PID() int { return a.cmd.Process.Pid }

// request writes msg and reads one answer of the wanted type into out,
// within the wait for ops ops and under limit bytes; an "error" answer is
// returned as an error and leaves the agent running.
func (a *Agent) request(ctx context.Context, what string, msg any, want string, out any, limit int, ops int) error {
	return a.requestWithin(ctx, what, msg, want, out, limit, a.limits.wait(ops))
}

// requestWithin is request with its wait given.
func (a *Agent) requestWithin(ctx context.Context, what string, msg any, want string, out any, limit int, wait time.Duration) error {
	if a.dead != nil {
		return a.dead
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("%s: encode the request: %w", what, err)
	}
	if err := a.send(ctx, what, b, wait); err != nil {
		return err
	}
	line, err := a.read(ctx, "answer to "+what, limit, wait)
	if err != nil {
		return err
	}
	a.first = a.answered.first
	if a.first.IsZero() { // the answer was read before this request was sent
		a.first = time.Now()
	}
	var head struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return a.garbage("answer to "+what, line, err)
	}
	if head.Type == TypeError {
		return &Refusal{msg: fmt.Sprintf("the %s agent could not do %s: %s", a.spec.Stack, what, clip(a.quotable(head.Message), MaxErrorBytes))}
	}
	return a.decode("answer to "+what, line, want, out)
}

// send writes line, one request, to the agent's stdin within wait, and
// stamps its sending on dbsock's clock.
func (a *Agent) send(ctx context.Context, what string, line []byte, wait time.Duration) error {
	_ = a.stdin.SetWriteDeadline(time.Now().Add(wait))
	stop := context.AfterFunc(ctx, func() { _ = a.stdin.SetWriteDeadline(time.Now()) })
	a.answered.first = time.Time{}
	a.sent = time.Now()
	_, err := a.stdin.Write(append(line, '\n'))
	stop()
	if err != nil {
		return a.fail(fmt.Errorf("%s: write the request to its stdin: %w%s", what, err, a.gone()))
	}
	return nil
}

// read reads one line of at most limit bytes within wait, or kills the
// agent and says what it did.
func (a *Agent) read(ctx context.Context, what string, limit int, wait time.Duration) ([]byte, error) {
	deadline := time.Now().Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = a.stdout.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = a.stdout.SetReadDeadline(time.Now()) })
	defer stop()
	var line []byte
	for {
		chunk, err := a.br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit+1 {
			return nil, a.fail(fmt.Errorf("it wrote a line over %d bytes as its %s (the protocol's limit)", limit, what))
		}
		switch {
		case err == nil:
			return bytes.TrimSpace(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() != nil {
				return nil, a.fail(fmt.Errorf("stopped waiting for its %s: %w", what, ctx.Err()))
			}
			if what == "hello" {
				return nil, a.fail(fmt.Errorf("it hung: no hello within %s (an agent writes its hello, and each answer, as one line and flushes it: a line left in its stdout's buffer never reaches dbsock; in Python print(..., flush=True), in C fflush(stdout))",
					wait.Round(time.Millisecond)))
			}
			return nil, a.fail(fmt.Errorf("it hung: no %s within %s (op timeout %s + %s grace + %s per op)",
				what, wait.Round(time.Millisecond), a.limits.OpTimeout, a.limits.grace(), a.limits.PerOp))
		default:
			return nil, a.fail(fmt.Errorf("it closed its stdout before its %s%s", what, a.gone()))
		}
	}
}

// gone waits a moment for the agent's exit and says how it ended.
func (a *Agent) gone() string {
	select {
	case <-a.exited:
		if a.waited == nil {
			return " (it exited with status 0)"
		}
		var ee *exec.ExitError
		if errors.As(a.waited, &ee) {
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				return " (it was killed by " + st.Signal().String() + ")"
			}
			return " (it exited with status " + strconv.Itoa(ee.ExitCode()) + ")"
		}
		return " (" + a.waited.Error() + ")"
	case <-time.After(time.Second):
		return ""
	}
}

func (a *Agent) decode(what string, line []byte, want string, out any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return a.garbage(what, line, err)
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(line, &head)
	if head.Type != want {
		return a.garbage(what, line, fmt.Errorf("type %q, want %q", head.Type, want))
	}
	return nil
}

func (a *Agent) garbage(what string, line []byte, err error) error {
	if a.carries(string(line)) || a.carries(err.Error()) {
		return a.fail(fmt.Errorf("it answered garbage as its %s, a line of %d bytes that dbsock does not quote: it carried a password dbsock sent the agent", what, len(line)))
	}
	return a.fail(fmt.Errorf("it answered garbage as its %s: %v, in %s", what, err, strconv.Quote(clip(a.redact(string(line)), 200))))
}

// fail kills the agent and returns err with what the agent is and what
// it said on stderr.
func (a *Agent) fail(err error) error {
	a.kill()
	said := ""
	if s := strings.TrimSpace(a.quotable(a.stderr.String())); s != "" {
		said = "; its stderr: " + strconv.Quote(clip(s, 1000))
	}
	a.dead = fmt.Errorf("the %s agent (%s): %w; dbsock stopped it%s", a.spec.Stack, strings.Join(a.spec.Argv, " "), err, said)
	return a.dead
}

// kill ends the agent and whatever it started, and reaps it.
func (a *Agent) kill() {
	if a.cmd.Process != nil {
		stop(a.cmd.Process.Pid, a.exited)
	}
	<-a.exited
	removeTempDir(a.tmp)
	a.stdin.Close()
	a.stdout.Close()
}

// Close asks the agent to end by closing its stdin, waits up to its
// grace for it to exit, then ends it and whatever it started; it is safe
// to call more than once. Its error is a *Teardown: the agent's work was
// done and its results stand, but it did not end as it should.
func (a *Agent) Close() error {
	if a.dead != nil {
		return nil
	}
	a.stdin.Close()
	var err error
	select {
	case <-a.exited:
		err = a.exitedAtClose()
	case <-time.After(a.limits.grace()):
		err = &Teardown{fmt.Sprintf("the %s agent did not exit within %s of dbsock closing its stdin (the end of its work): dbsock ended it; its results stand",
			a.spec.Stack, a.limits.grace())}
	}
	a.kill()
	a.dead = errors.New("the " + a.spec.Stack + " agent is closed")
	return err
}

// exitedAtClose says how the agent's exit at Close went wrong, if it did.
func (a *Agent) exitedAtClose() error {
	var ee *exec.ExitError
	switch {
	case a.waited == nil:
		return nil
	case errors.Is(a.waited, exec.ErrWaitDelay):
		return &Teardown{fmt.Sprintf("the %s agent exited with status 0 when dbsock closed its stdin, but a process it started kept its stdout or stderr open %s after: dbsock ended it; the agent's results stand",
			a.spec.Stack, a.cmd.WaitDelay)}
	case errors.As(a.waited, &ee):
		said := ""
		if s := strings.TrimSpace(a.quotable(a.stderr.String())); s != "" {
			said = "; its stderr: " + strconv.Quote(clip(s, 1000))
		}
		return &Teardown{fmt.Sprintf("the %s agent ended%s when dbsock closed its stdin (the end of its work): its results stand%s", a.spec.Stack, a.gone(), said)}
	}
	return &Teardown{fmt.Sprintf("the %s agent, when dbsock closed its stdin: %v; its results stand", a.spec.Stack, a.waited)}
}

// Refusal is an agent's error answer to a request it could not do: the
// agent keeps running.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

// Teardown is what went wrong when an agent was closed after its work:
// a warning of the run, not a failure.
type Teardown struct{ msg string }

func (t *Teardown) Error() string { return t.msg }

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func splitHostPort(o *Open) error {
	host, port, err := net.SplitHostPort(o.Address)
	if err != nil {
		return fmt.Errorf("open %s for an agent: address %q: %w", o.ID, o.Address, err)
	}
	o.Host = host
	o.Port, err = strconv.Atoi(port)
	return err
}

// stampReader is an agent's stdout, stamping on dbsock's clock when the
// first bytes after first was zeroed arrived: an agent writes its answer
// once its ops are done, so the time from a request's write to its
// answer's first byte bounds what the agent did for it, without the
// answer's transfer and dbsock's reading of it.
type stampReader struct {
	f     *os.File
	first time.Time
}

func (s *stampReader) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	if n > 0 && s.first.IsZero() {
		s.first = time.Now()
	}
	return n, err
}

// answerSpan is the last request's time from its write to its answer's
// first byte, on dbsock's clock.
func (a *Agent) answerSpan() time.Duration { return a.first.Sub(a.sent) }
