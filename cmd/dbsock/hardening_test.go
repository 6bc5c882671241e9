package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbsock/dbsock/internal/testutil"
)

// TestRedisPipelineOfYourCommand: --pipeline with your own Redis command
// pipelines that command, where it used to index dbsock's own key names,
// which a --query run never makes (a panic).
func TestRedisPipelineOfYourCommand(t *testing.T) {
	testutil.NeedAny(t, "redis-server")
	for _, args := range [][]string{
		{"--query", "STRLEN dbsock:user:{key}"},
		{"--query", "SMEMBERS dbsock:nokey:{key}"}, // an empty reply: an error, not a panic
	} {
		if args[1] == "SMEMBERS dbsock:nokey:{key}" {
			code, _, stderr := dbsock(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
				"--instances", "1", "--rounds", "1", "--warmup", "10", "-q"}, args...)...)
			if code == 0 || !strings.Contains(stderr, "returned nothing") {
				t.Errorf("%v: exit %d, %s; want the query refused for returning nothing", args, code, stderr)
			}
			continue
		}
		rep := runJSON(t, append([]string{"run", "redis", "--provider", "local", "--pipeline", "16", "--n", "200",
			"--instances", "1", "--rounds", "1", "--warmup", "10"}, args...)...)
		for _, r := range rep.Runs {
			if r.Errors != 0 || r.N != 200 || !r.TransportVerified || r.Pipeline != 16 {
				t.Errorf("%v over %s: %d ops, %d errors, verified %v, pipeline %d", args, r.Transport, r.N, r.Errors, r.TransportVerified, r.Pipeline)
			}
		}
	}
}

// TestClientBinaryCheckedUpFront: a --client-binary that is not a Linux
// executable (a FIFO, which used to hang dbsock in elf.Open; a script; an
// empty file; a truncated ELF) is refused before any server starts, with
// exit 2 and one line saying how to build one.
func TestClientBinaryCheckedUpFront(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"script": "#!/bin/sh\necho hi\n", "empty": "", "truncated": "\x7fELF\x02\x01\x01"}
	bins := []string{fifo}
	for name, body := range files {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, f)
	}
	for _, b := range bins {
		code, _, stderr := dbsock(t, "run", "echo", "--provider", "local", "--client", "container", "--client-binary", b, "-q")
		if code != 2 || !strings.Contains(stderr, "not a Linux executable") || !strings.Contains(stderr, "go build") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--client-binary %s: exit %d, %q; want exit 2 and one line", filepath.Base(b), code, stderr)
		}
	}
}

// TestKeysFromLimitsBytes: --keys-from counts the bytes of the keys it
// keeps, not only their number (5,000,000 keys of 100 bytes took 1.3 GB),
// says which line is too long, and drops a byte order mark.
func TestKeysFromLimitsBytes(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("k", 1000)
	for i := 0; i < 70_000; i++ { // 70 MB of keys
		f.WriteString(key + strconv.Itoa(i) + "\n")
	}
	f.Close()
	long := filepath.Join(dir, "long")
	os.WriteFile(long, []byte("1\n"+strings.Repeat("x", 2<<20)+"\n"), 0o600)
	for file, want := range map[string]string{big: "64 MiB of key text", long: "line 2 is longer than 1024 KiB"} {
		code, _, stderr := dbsock(t, "run", "redis", "--provider", "local", "--keys-from", file, "--rows", "100000", "-q")
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--keys-from %s: exit %d, %q; want exit 2 saying %q", filepath.Base(file), code, stderr, want)
		}
	}
	bom := filepath.Join(dir, "bom")
	os.WriteFile(bom, []byte("\uFEFF7\n8\n"), 0o600)
	var w workloadOptions
	w.rows = 10
	src, err := w.keySource("redis", bom)
	if err != nil || len(src.Keys) != 2 || src.Keys[0] != "7" {
		t.Errorf("keys with a byte order mark: %q, %v; want [7 8]", src.Keys, err)
	}
}

// TestClosedTMPDIRIsSaidForMariaDB: MariaDB runs as the mysql user when
// dbsock is root; a TMPDIR that user cannot enter is said, with what to do.
func TestClosedTMPDIRIsSaidForMariaDB(t *testing.T) {
	testutil.NeedAny(t, "mariadbd", "mysqld")
	if os.Geteuid() != 0 {
		t.Skip("as root only: otherwise the server runs as this user")
	}
	closed, err := os.MkdirTemp("/tmp", "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(closed) })
	t.Setenv("TMPDIR", closed) // 0700
	code, _, stderr := dbsock(t, "run", "mysql", "--provider", "local", "--n", "10", "--instances", "1", "-q")
	if code == 0 || !strings.Contains(stderr, "cannot enter "+closed) || !strings.Contains(stderr, "set TMPDIR") {
		t.Errorf("exit %d, %q; want the closed directory named", code, stderr)
	}
}
