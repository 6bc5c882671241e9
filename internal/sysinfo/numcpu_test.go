package sysinfo

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/internal/placement"
)

// TestNumCPUIsNotTheInheritedAffinity: dbsock started from a process
// pinned to one CPU (a test binary whose earlier test pinned it, a user's
// taskset) still says the machine's CPUs it may place processes on, as
// placement reads them: a baseline written so said 1 and a later run 2,
// and the two could not be compared.
func TestNumCPUIsNotTheInheritedAffinity(t *testing.T) {
	if os.Getenv("DBSOCK_TEST_NUMCPU") != "" {
		os.Stdout.WriteString(strconv.Itoa(Collect(nil).NumCPU))
		os.Exit(0)
	}
	cpus, err := placement.Available()
	taskset, lerr := exec.LookPath("taskset")
	if err != nil || len(cpus) < 2 || lerr != nil {
		t.Skipf("needs taskset and two CPUs (%v, %v)", cpus, lerr)
	}
	cmd := exec.Command(taskset, "-c", strconv.Itoa(cpus[0]), os.Args[0], "-test.run", "^TestNumCPUIsNotTheInheritedAffinity$")
	cmd.Env = append(os.Environ(), "DBSOCK_TEST_NUMCPU=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(len(cpus)) {
		t.Fatalf("pinned to CPU %d, Collect says %s logical CPUs; want %d", cpus[0], got, len(cpus))
	}
}
