package supply

import (
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
