package placement

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestPinProcessRestores: a pinning ends with its restore, for the thread
// that pinned and for every other thread of the process.
func TestPinProcessRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := Affinity(0)
	if err != nil {
		t.Fatal(err)
	}
	restore, err := PinProcess([]int{before[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Affinity(0); !reflect.DeepEqual(got, []int{before[0]}) {
		t.Fatalf("pinned affinity %v, want [%d]", got, before[0])
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got, _ := Affinity(0); !reflect.DeepEqual(got, before) {
		t.Fatalf("after restore the affinity is %v, want %v", got, before)
	}
	if got, _ := Affinity(os.Getpid()); !reflect.DeepEqual(got, before) {
		t.Fatalf("after restore the main thread's affinity is %v, want %v", got, before)
	}
}

// TestTopologyIgnoresThePinning: auto reads the machine, so a thread pinned
// to one CPU still sees them all.
func TestTopologyIgnoresThePinning(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	all, err := ReadTopology()
	if err != nil {
		t.Fatal(err)
	}
	restore, err := PinProcess([]int{all[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	pinned, err := ReadTopology()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all, pinned) {
		t.Fatalf("topology read while pinned %v, want %v", pinned, all)
	}
}

// TestAvailableReadsOnlineAndCgroup: online CPUs of a fake sysfs, cut to
// the cgroup's cpuset (v1 and v2 files alike).
func TestAvailableReadsOnlineAndCgroup(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("devices/system/cpu/online", "0-7")
	old := sysfs
	sysfs = root
	defer func() { sysfs = old }()
	if got, err := Available(); err != nil || !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("no cgroup cpuset: %v, %v; want 0-7", got, err)
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip("no /proc/self/cgroup")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			write(filepath.Join("fs/cgroup", f[2], "cpuset.cpus.effective"), "2-3,6")
		case strings.Contains(","+f[1]+",", ",cpuset,"):
			write(filepath.Join("fs/cgroup/cpuset", f[2], "cpuset.effective_cpus"), "2-3,6")
		}
	}
	if got, err := Available(); err != nil || !reflect.DeepEqual(got, []int{2, 3, 6}) {
		t.Fatalf("with a cgroup cpuset: %v, %v; want [2 3 6]", got, err)
	}
}

// TestAvailableInAContainer: inside a container the cpuset hierarchy is
// mounted at the container's own cgroup while /proc/self/cgroup names it
// by its path on the host (docker run --cpuset-cpus 1 on a cgroup v1
// host): the mount's root file is the container's cpuset.
func TestAvailableInAContainer(t *testing.T) {
	root := t.TempDir()
	for rel, content := range map[string]string{
		"devices/system/cpu/online":              "0-1",
		"fs/cgroup/cpuset/cpuset.effective_cpus": "1",
		"fs/cgroup/cpuset.cpus.effective":        "1",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := sysfs
	sysfs = root
	defer func() { sysfs = old }()
	for _, cgroups := range []string{"3:cpuset:/docker/b259c7fa6e48\n0::/docker/b259c7fa6e48", "0::/docker/b259c7fa6e48"} {
		if got := cgroupCPUsOf(cgroups); !reflect.DeepEqual(got, []int{1}) {
			t.Errorf("in a container on CPU 1 (%q): %v; want [1]", cgroups, got)
		}
	}
}
