package agents

// The keeper: every agent runs under a small process of dbsock's own
// binary (re-executed from /proc/self/exe, named KeeperName), so that
// whatever the agent starts ends with the run, however dbsock ends. The
// keeper is a child subreaper (PR_SET_CHILD_SUBREAPER): a process the
// agent starts stays its descendant even when it leaves the agent's
// process group and session (setsid) and its parent exits. It has the
// kernel send it SIGTERM when dbsock dies (PR_SET_PDEATHSIG, even on
// SIGKILL), and it ends every descendant, and itself, when the agent
// exits, when it is sent SIGTERM, SIGINT or SIGHUP, or when dbsock is gone.

import (
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbsock/dbsock/internal/cpustat"
)

// KeeperName is the keeper's argv[0]: what ps and dbsock clean show.
const KeeperName = "dbsock-agent-keeper"

// keeperEnv, set to dbsock's pid in the keeper's environment only, makes
// the binary a keeper (the agent never sees it).
const keeperEnv = "DBSOCK_AGENT_KEEPER"

// keeperTmpEnv names the agent's own temp dir (tempdir.go) to the keeper.
const keeperTmpEnv = "DBSOCK_AGENT_KEEPER_TMP"

// MarkEnv is the variable that marks an agent's processes in their
// environment: its value is the dbsock run's supply.Owner (no secret), so
// that dbsock clean can tell a leftover of a dead run.
const MarkEnv = "DBSOCK_AGENT_OF"

func init() {
	parent, ok := os.LookupEnv(keeperEnv)
	if !ok {
		return
	}
	if len(os.Args) < 3 || parent != strconv.Itoa(os.Getppid()) {
		// The dbsock that started it is gone (killed while the keeper
		// started): never run as anything else, and remove the temp dir
		// it made for the agent, which no one else would.
		removeTempDir(os.Getenv(keeperTmpEnv))
		os.Exit(125)
	}
	os.Exit(keep(os.Args[1], os.Args[2:]))
}

// keeperSpawner is the one OS thread that starts keepers: the kernel's
// parent-death signal is sent when the thread that forked a child ends,
// so that thread must live as long as dbsock (a Go thread may end when a
// goroutine locked to it returns).
var keeperSpawner = sync.OnceValue(func() chan func() {
	c := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for f := range c {
			f()
		}
	}()
	return c
})

// startOnKeeperThread runs start on the thread that starts keepers.
func startOnKeeperThread(start func() error) error {
	done := make(chan error, 1)
	keeperSpawner() <- func() { done <- start() }
	return <-done
}

// launch is the program, command line and environment that run argv
// (its program found at path) under a keeper, with env; the keeper
// removes tmp, the agent's own temp dir, when it ends.
func launch(path string, argv, env []string, tmp string) (string, []string, []string) {
	env = append(env, keeperEnv+"="+strconv.Itoa(os.Getpid()), keeperTmpEnv+"="+tmp)
	return "/proc/self/exe", append([]string{KeeperName, path}, argv...), env
}

// procAttr is the keeper's: a process group of its own (the agent's too),
// and SIGTERM, which it handles, when dbsock's thread that started it
// ends.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// stop ends the keeper pid and so the agent and all it started: SIGTERM,
// then, if it has not exited within 3 s, SIGKILL to its process group.
func stop(pid int, exited <-chan struct{}) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

const prSetChildSubreaper = 36

// keep runs argv (its program at path) as the agent and returns its exit
// status once it and every process it started are gone.
func keep(path string, argv []string) int {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		os.Stderr.WriteString(KeeperName + ": cannot become the subreaper of the agent's processes: " + e.Error() + "\n")
		return 125
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, keeperEnv+"=") && !strings.HasPrefix(kv, keeperTmpEnv+"=") {
			env = append(env, kv)
		}
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		os.Stderr.WriteString(KeeperName + ": start the agent: " + err.Error() + "\n")
		return 127
	}
	// The agent's stdin, stdout and stderr are its own: dbsock sees them
	// close when it and its processes are gone, not when the keeper is.
	quiet()
	status := make(chan syscall.WaitStatus, 1)
	go reap(p.Pid, status)
	select {
	case ws := <-status:
		endAll()
		if ws.Signaled() { // the same end, without a core file of the keeper's
			signal.Reset()
			_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
			_ = syscall.Kill(os.Getpid(), ws.Signal())
			time.Sleep(time.Second)
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	case s := <-sigs:
		endAll()
		return 128 + int(s.(syscall.Signal))
	}
}

// quiet puts /dev/null in the place of the keeper's stdin, stdout and
// stderr.
func quiet() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := range 3 {
		_ = syscall.Dup3(int(null.Fd()), fd, 0)
	}
	null.Close()
}

// reap reaps every child of the keeper (the agent, and whatever the
// kernel gives it as their subreaper) and sends the agent's status.
func reap(agent int, status chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if pid == agent {
			status <- ws
		}
	}
}

// endAll kills every descendant of the keeper until none is left (a
// process forked meanwhile is a child of one killed, and so the keeper's
// next), for at most 5 s, and removes the agent's own temp dir.
func endAll() {
	defer removeTempDir(os.Getenv(keeperTmpEnv))
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		kids, _ := cpustat.Descendants(os.Getpid())
		live := 0
		for _, pid := range kids {
			if pid != os.Getpid() && syscall.Kill(pid, syscall.SIGKILL) == nil {
				live++
			}
		}
		if live == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
