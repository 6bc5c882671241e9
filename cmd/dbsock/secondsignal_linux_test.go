//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSecondSignalExits: dbsock report held in a write that the kernel
// blocks (its stdout a pipe nobody reads) does not stop for the first
// Ctrl-C; the second ends it at once, with exit 1. (Linux: it reads how
// full the pipe is with TIOCINQ.)
func TestSecondSignalExits(t *testing.T) {
	// A report whose JSON is far larger than a pipe holds (64 KiB).
	big := reportFile(t, false, func(r map[string]any) {
		runs := r["runs"].([]any)
		for len(runs) < 400 {
			runs = append(runs, runs[len(runs)%4])
		}
		r["runs"] = runs
	})
	bin := buildDbsock(t)
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var stderr strings.Builder
	cmd := exec.Command(bin, "report", big, "--format", "json")
	cmd.Stdout, cmd.Stderr = wr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait until the pipe is full: dbsock is then blocked writing to it.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(rd.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatal(err)
		}
		if n >= 64<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dbsock wrote %d bytes in a minute; stderr %q", n, stderr.String())
		}
	}
	for i := 0; i < 2; i++ {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	select {
	case err := <-exited:
		if cmd.ProcessState.ExitCode() != ExitFailed || !strings.Contains(stderr.String(), "dbsock: interrupted again: stopping now") {
			t.Errorf("after a second SIGINT: %v, exit %d, stderr %q", err, cmd.ProcessState.ExitCode(), stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("dbsock report still runs 10 s after a second SIGINT; stderr %q", stderr.String())
	}
}
