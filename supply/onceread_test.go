package supply

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestRemoveOnceRead: a watched file is removed as soon as a process has
// read it, a file not read stays, and stop ends the watch.
func TestRemoveOnceRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	dir := t.TempDir()
	read, unread, other := filepath.Join(dir, "pw"), filepath.Join(dir, "pw2"), filepath.Join(dir, "other")
	for _, p := range []string{read, unread, other} {
		if err := os.WriteFile(p, []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := RemoveOnceRead([]string{read, unread})
	if _, err := os.ReadFile(other); err != nil { // read, but not watched
		t.Fatal(err)
	}
	if _, err := os.ReadFile(read); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Lstat(read); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the file read was not removed within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	for _, p := range []string{unread, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v, want it left", filepath.Base(p), err)
		}
	}
}
