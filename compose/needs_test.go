package compose

import (
	"strings"
	"testing"

	"github.com/dbsock/dbsock/supply"
)

// TestComposeNeedsTheHostNetwork: an engine whose containers have no host
// network of this host's (rootless Docker) refuses the compose provider
// before anything starts, in the words compose gives (compose.yaml's
// servers listen on the host network), and not the docker provider, which
// publishes its servers' ports instead, nor a run that starts no
// container; an engine with host networking refuses neither.
func TestComposeNeedsTheHostNetwork(t *testing.T) {
	rootless := supply.Engine{Reachable: true, Rootless: true, OS: "Debian GNU/Linux 12"}
	err := rootless.CannotRun(EngineNeeds(), false)
	want := "compose provider: the engine (rootless Docker, whose host network is not this host's) gives containers no host network, and compose.yaml's servers listen on the host network's 127.0.0.1, which would not be this host's: use Plan.ProviderName docker"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("compose on rootless Docker: %v, want %q", err, want)
	}
	for _, needs := range []supply.EngineNeeds{supply.DockerNeeds(), {}} {
		if err := rootless.CannotRun(needs, false); err != nil {
			t.Errorf("%q on rootless Docker: %v", needs.Provider, err)
		}
	}
	host := supply.Engine{Reachable: true, HostNetwork: true, OS: "Debian GNU/Linux 12"}
	for _, needs := range []supply.EngineNeeds{EngineNeeds(), supply.DockerNeeds()} {
		if err := host.CannotRun(needs, false); err != nil {
			t.Errorf("%s with host networking: %v", needs.Provider, err)
		}
	}
}
