package supply

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A umask of 0077 (the official images' entrypoints set it) must not take
// a server's config file away from the server's user.
func TestWriteServerFileIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, mode := range []os.FileMode{0o644, 0o600, 0o640} {
		path := filepath.Join(t.TempDir(), "server.conf")
		if err := WriteServerFile(path, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("WriteServerFile(%v) under umask 0077 made mode %v", mode, got)
		}
	}
}
