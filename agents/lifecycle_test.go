package agents_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbsock/dbsock/agents"
)

// lingerer is an agent that starts a child in its own process group and
// a child that leaves its session (setsid), writes every pid it started
// to the file given as its argument, says hello and answers nothing.
const lingerer = `pids=$1
sleep 600 &
echo $! >>"$pids"
setsid sh -c 'echo $$ >>"$1"; exec sleep 600' sh "$pids" &
while [ "$(wc -l <"$pids")" -lt 3 ]; do sleep 0.01; done
echo '{"type":"hello","protocol":1,"language":"sh","runtime_version":"0","library":"lingerer","library_version":"0"}'
exec cat >/dev/null
`

// startLingerer starts the lingerer as a user's own agent does, under
// /bin/sh, and returns the file of its pids (the shell's first).
func startLingerer(t *testing.T) (*agents.Agent, string) {
	t.Helper()
	pids := filepath.Join(t.TempDir(), "pids")
	a, err := agents.Start(context.Background(), agents.Spec{Stack: "cmd", Argv: []string{"/bin/sh", "-c", `echo $$ >"$1"; ` + lingerer, "sh", pids}}, limits)
	if err != nil {
		t.Fatal(err)
	}
	return a, pids
}

// assertAllGone fails unless every pid in the file pids is gone (or a
// zombie) within 3 s.
func assertAllGone(t *testing.T, pids string) {
	t.Helper()
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	list := strings.Fields(string(b))
	if len(list) != 3 {
		t.Fatalf("the agent wrote pids %q, want its own and two children's", b)
	}
	var live []string
	for range 300 {
		live = nil
		for _, p := range list {
			if st, err := os.ReadFile("/proc/" + p + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				live = append(live, p+": "+strings.TrimSpace(string(st[:strings.LastIndexByte(string(st), ')')+1])))
			}
		}
		if len(live) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("left running: %v", live)
	for _, p := range list {
		if pid, err := strconv.Atoi(p); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestAgentLeavesNothingAtClose: whatever an agent started ends with its
// Close, a child that left its process group and session (setsid) too.
func TestAgentLeavesNothingAtClose(t *testing.T) {
	a, pids := startLingerer(t)
	_ = a.Close()
	assertAllGone(t, pids)
}

// TestAgentLeavesNothingWhenDbsockIsKilled: when the process that runs
// an agent is killed outright (SIGKILL) while the agent is blocked at its
// open, the agent and everything it started end too, a setsid child
// included (lingerer), and so does its temp dir with the CA file it wrote
// for a tls open (ca: the Python agent, blocked in its TLS handshake).
func TestAgentLeavesNothingWhenDbsockIsKilled(t *testing.T) {
	for _, mode := range []string{"lingerer", "ca"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "ca" {
				if _, err := agents.For(".", "python", "redis", "redis", ""); err != nil {
					needStack(t, err)
				}
			}
			l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AGENTS_TEST_KILLED="+dir, "AGENTS_TEST_MODE="+mode, "AGENTS_TEST_ADDR="+l.Addr().String(), "TMPDIR="+tmp)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ready := filepath.Join(dir, "ready")
			for i := 0; ; i++ {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				if i == 1000 {
					_ = cmd.Process.Kill()
					t.Fatal("the helper never got its agent to block")
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if mode == "lingerer" {
				b, _ := os.ReadFile(ready)
				assertAllGone(t, strings.TrimSpace(string(b)))
				return
			}
			var left []string
			for range 300 {
				if left, _ = filepath.Glob(filepath.Join(tmp, "*")); len(left) == 0 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Errorf("left in the temp dir: %v", left)
		})
	}
}

// TestKilledHelper is the process TestAgentLeavesNothingWhenDbsockIsKilled
// kills: it starts the agent its mode names, says it is ready once the
// agent is blocked at its open, and waits for an answer that never comes.
func TestKilledHelper(t *testing.T) {
	dir := os.Getenv("AGENTS_TEST_KILLED")
	if dir == "" {
		t.Skip("only run by TestAgentLeavesNothingWhenDbsockIsKilled")
	}
	long := agents.Limits{OpTimeout: time.Minute}
	addr := os.Getenv("AGENTS_TEST_ADDR")
	host, port, _ := net.SplitHostPort(addr)
	o := agents.Open{ID: "c1", Target: "redis", Path: "tcp", Network: "tcp", Address: addr, Host: host, Token: agents.Token("c1")}
	o.Port, _ = strconv.Atoi(port)
	spec := agents.Spec{Stack: "cmd", Argv: []string{"/bin/sh", "-c", `echo $$ >"$1"; ` + lingerer, "sh", filepath.Join(dir, "pids")}}
	ready, readyText := func() bool { return true }, filepath.Join(dir, "pids")
	if os.Getenv("AGENTS_TEST_MODE") == "ca" {
		var err error
		if spec, err = agents.For(".", "python", "redis", "redis", ""); err != nil {
			t.Fatal(err)
		}
		o.Path, o.CAPEM = "tls", testCA
		ready = func() bool { // the CA file is written: the agent is in its open
			m, _ := filepath.Glob(filepath.Join(os.TempDir(), "dbsock-agent-*", "dbsock-ca-*"))
			m2, _ := filepath.Glob(filepath.Join(os.TempDir(), "dbsock-ca-*"))
			return len(m)+len(m2) > 0
		}
	}
	a, err := agents.Start(context.Background(), spec, long)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for !ready() {
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.WriteFile(filepath.Join(dir, "ready"), []byte(readyText), 0o600)
	}()
	_, _ = a.Open(context.Background(), o)
	t.Error("the open ended: it was to block until the test killed this process")
}

// TestCAFileGoneOnceOpened: the Python, PHP and Ruby agents remove the
// CA file they wrote for a tls open once the open is done (here it fails:
// the server hangs up), not only when they exit: a run killed later
// leaves none.
func TestCAFileGoneOnceOpened(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	for _, stack := range []string{"python", "php", "ruby"} {
		t.Run(stack, func(t *testing.T) {
			spec, err := agents.For(".", stack, "redis", "redis", "")
			if err != nil {
				needStack(t, err)
			}
			tmp := t.TempDir()
			spec.Env = append(spec.Env, "TMPDIR="+tmp)
			// Its hello may take a second on a busy machine (the
			// interpreter and its library start): this test is of its CA
			// file, not of a hang.
			a, err := agents.Start(context.Background(), spec, agents.Limits{OpTimeout: limits.OpTimeout, Grace: 5 * time.Second, PerOp: limits.PerOp})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.Open(context.Background(), agents.Open{ID: "c1", Target: "redis", Path: "tls", Network: "tcp", Address: l.Addr().String(),
				Host: "127.0.0.1", Port: port, Token: agents.Token("c1"), CAPEM: testCA})
			if err == nil {
				t.Fatal("a tls open of a server that hangs up succeeded")
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "dbsock-ca-*"))
			if len(left) > 0 {
				t.Errorf("after its open (%v), the agent still has its CA file %v", err, left)
			}
		})
	}
}

// testCA is a self-signed certificate, only written to a file.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBhTCCASugAwIBAgIQIRi6zePL6mKjOipn+dNuaTAKBggqhkjOPQQDAjASMRAw
DgYDVQQKEwdBY21lIENvMB4XDTE3MTAyMDE5NDMwNloXDTE4MTAyMDE5NDMwNlow
EjEQMA4GA1UEChMHQWNtZSBDbzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABD0d
7VNhbWvZLWPuj/RtHFjvtJBEwOkhbN/BnnE8rnZR8+sbwnc/KhCk3FhnpHZnQz7B
5aETbbIgmuvewdjvSBSjYzBhMA4GA1UdDwEB/wQEAwICpDATBgNVHSUEDDAKBggr
BgEFBQcDATAPBgNVHRMBAf8EBTADAQH/MCkGA1UdEQQiMCCCDmxvY2FsaG9zdDo1
NDUzgg4xMjcuMC4wLjE6NTQ1MzAKBggqhkjOPQQDAgNIADBFAiEA2zpJEPQyz6/l
Wf86aX6PepsntZv2GYlA5UpabfT2EZICICpJ5h/iI+i341gBmLiAFQOyTDT+/wQc
6MF9+Yw1Yy0t
-----END CERTIFICATE-----
`

// TestLeftoverCAFiles: a CA file an agent left (dbsock-ca-*, older than
// CAFileAge) is a leftover; a new one, a symlink or another name is not.
func TestLeftoverCAFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-agents.CAFileAge - time.Minute)
	for _, f := range []string{"dbsock-ca-old.pem", "dbsock-ca-new.pem", "other.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(testCA), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "other.pem"), filepath.Join(dir, "dbsock-ca-link")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dbsock-ca-old.pem", "other.pem"} {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	got := agents.LeftoverCAFiles(dir)
	if len(got) != 1 || filepath.Base(got[0]) != "dbsock-ca-old.pem" {
		t.Errorf("leftover CA files %v, want only dbsock-ca-old.pem", got)
	}
}
