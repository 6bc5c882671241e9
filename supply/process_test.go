package supply

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServerAsAnotherUserSaysWhichDirectoryIsClosed: a server that runs as
// its own user (PostgreSQL) under a TMPDIR only its owner may enter fails
// to start with the directory named and what to do, not a bare "permission
// denied".
func TestServerAsAnotherUserSaysWhichDirectoryIsClosed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starting a process as another user needs root")
	}
	base, err := os.MkdirTemp("/tmp", "t") // t.TempDir's parent is closed already
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(base, "private")
	dir := filepath.Join(closed, "postgres-1")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	_, err = startProcess(dir, "initdb", "/bin/true", nil, nil, "", nobody)
	if err == nil || !strings.Contains(err.Error(), "uid 65534, as which it runs, cannot enter "+closed) || !strings.Contains(err.Error(), "set TMPDIR") {
		t.Fatalf("err = %v, want the closed directory %s named and TMPDIR suggested", err, closed)
	}
	if got := unreachableBy(dir, 0, 0); got != "" {
		t.Errorf("root's own directories: %q, want none closed", got)
	}
}
