package supply

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPUCgroup(t *testing.T) {
	dir := t.TempDir()
	for name, tt := range map[string]struct{ file, want string }{
		"v1":       {"9:name=systemd:/\n4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n", "/docker/abc"},
		"v1 alone": {"1:cpu:/docker/def\n2:cpuacct:/\n0::/\n", "/docker/def"},
		"v2":       {"0::/system.slice/docker-abc.scope\n", "/system.slice/docker-abc.scope"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := cpuCgroup(path); err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, tt.want)
		}
	}
	path := filepath.Join(dir, "none")
	os.WriteFile(path, []byte("4:memory:/x\n"), 0o644)
	if got, err := cpuCgroup(path); err == nil {
		t.Errorf("no cpu line: got %q without an error", got)
	}
	if note := cgroupNote(os.Getpid()); note != "" {
		t.Errorf("this process against itself: %q, want no note", note)
	}
}
