package supply

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestClientBinaryMustRunOnTheEngine(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "dbsock")
	if err := os.WriteFile(notELF, []byte("\xcf\xfa\xed\xfe not a Linux binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := clientBinary(notELF, "aarch64")
	if err == nil || !strings.Contains(err.Error(), "is not a Linux executable") ||
		!strings.Contains(err.Error(), "GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build") || !strings.Contains(err.Error(), "Client.Binary") {
		t.Errorf("a Mach-O binary: %v, want it refused with the build command for the engine", err)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the rest reads this test's own Linux executable")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	native, other := "x86_64", "aarch64"
	if runtime.GOARCH == "arm64" {
		native, other = other, native
	}
	if _, err := clientBinary(self, native); err != nil {
		t.Errorf("this test's executable on a %s engine: %v", native, err)
	}
	if _, err := clientBinary(self, other); err == nil || !strings.Contains(err.Error(), "the engine runs "+other) {
		t.Errorf("this test's executable on a %s engine: %v, want it refused", other, err)
	}
}

// TestClientUserReachesTheSockets: the client container's user is one that
// can reach the sockets it must: a directory and socket open to every user
// need no owner (root's run is then nobody's); one that is not is its
// owner's.
func TestClientUserReachesTheSockets(t *testing.T) {
	open, closed := t.TempDir(), t.TempDir()
	for dir, mode := range map[string]os.FileMode{open: 0o777, closed: 0o700} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if err := os.Chmod(filepath.Join(dir, "s.sock"), mode); err != nil {
			t.Fatal(err)
		}
	}
	me := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	if owner, ok := closedOwner(open); ok {
		t.Errorf("%s (0777, its socket 0777) read as closed, owner %s", open, owner)
	}
	if owner, ok := closedOwner(closed); !ok || owner != me {
		t.Errorf("%s (0700): owner %q, closed %v; want %s", closed, owner, ok, me)
	}
	if err := os.Chmod(filepath.Join(open, "s.sock"), 0o700); err != nil {
		t.Fatal(err)
	}
	if owner, ok := closedOwner(open); !ok || owner != me {
		t.Errorf("a 0700 socket in an open directory: owner %q, closed %v; want %s", owner, ok, me)
	}
	user, why := clientUser([]string{closed})
	if os.Getuid() != 0 {
		if user != me || why != "" {
			t.Errorf("clientUser as uid %d: %q (%q), want this user", os.Getuid(), user, why)
		}
		return
	}
	if user != "0:0" || !strings.Contains(why, closed+" or its socket is root's alone") {
		t.Errorf("clientUser as root, a directory of root's alone: %q (%q)", user, why)
	}
	if err := os.Chmod(filepath.Join(open, "s.sock"), 0o777); err != nil {
		t.Fatal(err)
	}
	if user, why := clientUser([]string{open}); user != "65534:65534" || why != "" {
		t.Errorf("clientUser as root, sockets open to every user: %q (%q), want nobody", user, why)
	}
}
