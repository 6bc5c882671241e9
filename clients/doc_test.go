package clients

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackagesRegisterTheirTargets: each package of the index imports the
// packages of the targets it says it makes known, and no other target's.
func TestPackagesRegisterTheirTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const targetsDir = "github.com/dbsock/dbsock/targets/"
	for _, p := range packages {
		out, err := exec.Command("go", "list", "-deps", "github.com/dbsock/dbsock/clients/"+p.name).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p.name, err)
		}
		var got []string
		for _, dep := range strings.Fields(string(out)) {
			if name, ok := strings.CutPrefix(dep, targetsDir); ok && !strings.Contains(name, "/") {
				got = append(got, name)
			}
		}
		want := slices.Clone(p.targets)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s imports the targets %v; the index says %v", p.name, got, want)
		}
		path, ok := Path(p.targets[0])
		if !ok || !strings.HasSuffix(path, "/"+p.name) {
			t.Errorf("Path(%q) = %q, %v", p.targets[0], path, ok)
		}
	}
	if _, ok := Path("echo"); ok {
		t.Error("echo has a client package")
	}
}
