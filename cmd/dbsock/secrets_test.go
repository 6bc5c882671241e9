package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestNoPasswordOnDiskAfterAKilledClientRun: with the client in a
// container, the run's password is on no command line and in no
// environment on this host (the container shares its PID namespace: its
// agent's too), nor in the client container's configuration (docker
// inspect), while a case runs, and no file dbsock leaves behind when it
// ends at once (SIGKILL, as after a second Ctrl-C) holds it: it reached
// dbsock's agent in the container on its stdin, in each open message.
func TestNoPasswordOnDiskAfterAKilledClientRun(t *testing.T) {
	needImages(t)
	testutil.NeedAny(t, "redis-server")
	srv := startLocal(t, "redis")
	pw := srv.TCP().Password
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := staticDbsock(t)
	tmp := shortTempDir(t)
	cmd, sc := startDbsock(t, bin, tmp, "run", "redis", "--provider", "external", "--redis-addr", srv.TCP().Address,
		"--redis-socket", srv.Unix().Address, "--redis-password-file", pwFile, "--client", "container", "--client-binary", bin,
		"--n", "100000000", "--instances", "1", "--rounds", "1")
	t.Cleanup(func() { // what the killed run left: its client container
		clean := exec.Command(bin, "clean")
		clean.Env = append(os.Environ(), "TMPDIR="+tmp)
		if out, err := clean.CombinedOutput(); err != nil {
			t.Errorf("dbsock clean: %v\n%s", err, out)
		}
	})
	if lines := waitForLine(sc, "in the client container, pid"); !strings.Contains(strings.Join(lines, "\n"), "dbsock's agent") {
		t.Fatalf("dbsock's agent did not start in the client container: %q", lines)
	}
	time.Sleep(time.Second) // its connections are open and measuring
	for _, pattern := range []string{"/proc/[0-9]*/environ", "/proc/[0-9]*/cmdline"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds the run's password while the client measures", f)
			}
		}
	}
	ids, err := exec.Command("docker", "ps", "-q", "--filter", "label=dbsock.pid="+strconv.Itoa(cmd.Process.Pid)).Output()
	if err != nil || len(strings.Fields(string(ids))) == 0 {
		t.Fatalf("no container of the run (pid %d) found: %v", cmd.Process.Pid, err)
	}
	inspect, err := exec.Command("docker", append([]string{"inspect"}, strings.Fields(string(ids))...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(inspect, []byte(pw)) {
		t.Error("docker inspect of the client container shows the run's password")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(pw)) {
			t.Errorf("%s, left by the killed run, holds the run's password", path)
		}
		return nil
	})
}
