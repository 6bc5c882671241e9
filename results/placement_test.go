package results

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dbsock/dbsock/drivers"
	"github.com/dbsock/dbsock/internal/setting"
)

// TestUnpinnedServerIsNamed: a server dbsock did not start, free to run on
// two CPUs under a client pinned to one, is named as the likely cause of
// spread latencies; a pinned one, one dbsock started, or an unpinned
// client is not.
func TestUnpinnedServerIsNamed(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs to name")
	}
	report := func(mode, provider, serverCPUs string) *Report {
		return &Report{
			Config:  Config{Placement: Placement{Mode: mode, ClientCPUs: "0", ServerCPUs: "0"}},
			Targets: []Target{{Name: "redis", Provenance: drivers.Provenance{Provider: provider}, ServerCPUs: serverCPUs}},
		}
	}
	w := report("auto", "external", "0-1").unpinnedServer("redis")
	if s := w.String(); w.Kind != UnpinnedServer || !strings.Contains(s, "pinned its client to CPU 0, but this server") || !strings.Contains(s, "may run on CPUs 0-1") ||
		!strings.Contains(s, "Plan.Placement none") || !slices.Equal(w.Settings(), []setting.Field{setting.Placement}) {
		t.Errorf("an unpinned server of yours: %s %q", w.Kind, s)
	}
	if s := w.In(func(setting.Field) string { return "--placement" }); !strings.Contains(s, "run with --placement none") {
		t.Errorf("worded for the command line: %q", s)
	}
	for name, r := range map[string]*Report{
		"pinned by you":      report("auto", "external", "0"),
		"started by dbsock":  report("auto", "local", "0-1"),
		"client not pinned":  report("none", "external", "0-1"),
		"affinity not known": report("auto", "external", ""),
	} {
		if w := r.unpinnedServer("redis"); w.Kind != "" {
			t.Errorf("%s: %q", name, w)
		}
	}
	if cause := "the likely cause is that this server is not pinned (see above)."; !strings.Contains(noisyWarning(10, make([]NoisyBlock, 5), cause).String(), cause) {
		t.Error("the noisy-machine warning does not name the cause it is given")
	}
}
